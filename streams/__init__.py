"""The stream-processing layer above ``schemas``: settings, the Kafka toolkit (one client
factory, topics, dead letters, security, ACL checks), the concurrent runner the LLM workers
share, metrics, exit statuses, and the detect worker (:mod:`streams.detect`, a Faust app).
The embedded dev broker and the CLI live above it (``tools``, ``cli``); no module here
imports an LLM SDK.
"""
