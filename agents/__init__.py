"""The LLM-backed layer above ``streams``: the model seam (:mod:`agents.providers`), the
judge, debrief and calibrate workers, the chart context they read, and replay."""
