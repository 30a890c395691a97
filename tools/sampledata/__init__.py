"""Generators of the checked-in sample data (streams/sampledata/data, agents/debrief/sampledata)."""
