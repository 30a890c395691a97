"""The chart-review judge: one advisory JudgeResult for every JudgeJob."""
