"""engine/server."""
