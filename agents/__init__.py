"""LLM-backed workers: the chart-review judge and the medkit debrief grader."""
