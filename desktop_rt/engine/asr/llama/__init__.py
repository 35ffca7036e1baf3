"""engine/asr/llama."""
