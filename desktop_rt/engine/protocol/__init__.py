"""engine/protocol."""
