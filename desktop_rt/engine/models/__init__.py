"""engine/models."""
