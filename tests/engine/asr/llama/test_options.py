"""The GGUF backend's options."""

from __future__ import annotations

import pytest

from desktop_rt.engine.asr.llama.options import LlamaOptions


def test_encoder_block_must_divide_the_encoder_window():
    with pytest.raises(ValueError, match="1, 2, 4, 8"):
        LlamaOptions(encoder_block_seconds=3)
