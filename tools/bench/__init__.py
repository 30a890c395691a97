"""Benchmarks (`judgeflow bench detect|judge`)."""
