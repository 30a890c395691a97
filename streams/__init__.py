"""judgeflow stream processors: app factory, detect processor, embedded broker and CLI."""
