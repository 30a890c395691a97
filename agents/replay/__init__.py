"""Replays of an input topic under the current prompt version (``judgeflow replay judge``,
``judgeflow replay debrief``): planning, cost estimate, budget and progress."""
