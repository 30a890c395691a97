"""The medkit debrief grader: an attending evaluates a trainee encounter against the case
rubric; judgeflow validates the evaluation in code and publishes it.

Pure parts (no broker, no network): ``bands``, ``transcript``, ``safety``, ``autorubric``,
``validate``, ``offline``, ``prompt``. Orchestration: ``grader``. Process: ``run``.
"""

from agents.debrief.summary import summarize

__all__ = ["summarize"]
