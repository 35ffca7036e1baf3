"""engine/asr."""
