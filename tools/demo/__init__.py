"""`judgeflow demo`: the whole pipeline on an embedded broker with the sample data."""
