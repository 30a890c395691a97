"""The detect processor: pure normalisation and decision logic plus a thin Faust edge."""
