"""Calibration against human adjudications: how good is each judge prompt version?"""
