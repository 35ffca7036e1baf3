"""A prefill that keeps the KV cache's matching prefix gives the logits of a cold one."""

from __future__ import annotations

import numpy as np
import pytest

from desktop_rt.engine.asr.llama.backend import LlamaAsrBackend, LlamaOptions
from tests.support.tiny_qwen3asr import loud_start, noise


@pytest.mark.parametrize("block, reused", [(8, (1, 1, 0, 0)), (2, (4, 5, 0, 2))])
def test_cached_prefill_gives_the_logits_of_a_cold_run(pair, block, reused):
    options = LlamaOptions(threads=1, encoder_block_seconds=block)
    backend = LlamaAsrBackend(*pair, options)
    cold_backend = LlamaAsrBackend(
        *pair, LlamaOptions(threads=1, reuse_cache=False, encoder_block_seconds=block)
    )
    try:
        backend.prefill_logits(loud_start(9.0), prompt="earlier text")  # fills the cache
        for (seconds, prompt), reused_blocks in zip(
            (
                (10.0, "earlier text"),
                (11.0, "earlier text"),
                (11.0, "other text"),
                (5.0, "other text"),
            ),
            reused,
            strict=True,
        ):
            audio = loud_start(seconds)
            cached = backend.prefill_logits(audio, prompt=prompt)
            stats = backend.stats
            assert stats.reused_audio_chunks == reused_blocks
            assert 0 < stats.reused_positions < stats.prompt_positions
            cold = cold_backend.prefill_logits(audio, prompt=prompt)
            assert cold_backend.stats.reused_positions == 0
            assert cold_backend.stats.encoded_audio_chunks == cold_backend.stats.audio_chunks
            assert np.allclose(cached, cold, rtol=1e-4, atol=1e-4), np.abs(cached - cold).max()
        # A changed prompt keeps only the positions before the change.
        backend.prefill_logits(noise(3.0), prompt="aaaa")
        backend.prefill_logits(noise(3.0), prompt="aaab")
        assert backend.stats.reused_audio_chunks == 0
        assert (
            backend.stats.reused_positions
            == len("<|im_start|>system\naaa") - len("<|im_start|>") + 1
        )  # byte tokens
    finally:
        cold_backend.close()
        backend.close()
