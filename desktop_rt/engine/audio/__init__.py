"""engine/audio."""
