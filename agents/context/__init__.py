"""Read-only context for the LLM workers: patient notes from the chart store, and the
selection of note excerpts that fit a prompt's size budget."""
