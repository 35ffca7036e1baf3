"""Audio encoded in blocks: each block as mtmd encodes it alone, settled ones encoded once."""

from __future__ import annotations

import numpy as np
import pytest

from desktop_rt.engine.asr.llama.audio_blocks import whole_blocks
from desktop_rt.engine.asr.llama.backend import LlamaAsrBackend, LlamaOptions
from desktop_rt.engine.asr.llama.mtmd import AUDIO
from tests.support.tiny_qwen3asr import RATE, noise


def test_a_window_of_one_block_is_exactly_what_llama_cpp_computes(pair):
    for block, lengths in ((8, (0.5, 3.0, 7.9)), (2, (0.5, 1.9))):
        plain = LlamaAsrBackend(
            *pair, LlamaOptions(threads=1, reuse_cache=False, encoder_block_seconds=block)
        )
        try:
            for seconds in lengths:
                audio = noise(seconds, seed=3)
                ours = plain.prefill_logits(audio, prompt="ctx", language="en")
                helper = plain.prefill_logits(audio, prompt="ctx", language="en", helper=True)
                assert np.allclose(ours, helper, rtol=1e-4, atol=1e-4), np.abs(ours - helper).max()
        finally:
            plain.close()


def test_blocks_shorter_than_a_piece_are_encoded_on_their_own(pair):
    """A 6 s window in 2 s blocks is not mtmd's whole-window encoding, but each block is mtmd's
    encoding of that block alone, prefilled at the positions the block holds in the window."""
    audio = noise(6.0, seed=4)
    two = LlamaAsrBackend(
        *pair, LlamaOptions(threads=1, reuse_cache=False, encoder_block_seconds=2)
    )
    eight = LlamaAsrBackend(
        *pair, LlamaOptions(threads=1, reuse_cache=False, encoder_block_seconds=8)
    )
    try:
        blocked = two.prefill_logits(audio, prompt="ctx", language="en")
        assert (two.stats.audio_chunks, two.stats.encoded_audio_chunks) == (3, 3)
        whole = eight.prefill_logits(audio, prompt="ctx", language="en")
        assert (eight.stats.audio_chunks, eight.stats.encoded_audio_chunks) == (1, 1)
        assert (
            two.stats.prompt_positions == eight.stats.prompt_positions
        )  # same positions, token for token
        assert not np.allclose(
            blocked, whole, rtol=1e-4, atol=1e-4
        )  # the encoder saw 2 s at a time
        # By hand: the prompt's text, then each block as mtmd encodes it alone, at its positions.
        native = two.native
        text = two.layout.render("ctx", "en")
        with native.tokenize(text, audio) as chunks:
            head, tail = chunks.text_tokens(0), chunks.text_tokens(2)
        native.forget_from(0)
        n_past = native.decode_tokens(head, 0)
        sizes = []
        # A window of whole seconds loses its last sample (audio_blocks.whole_blocks).
        for start, end in ((0, 2 * RATE - 1), (2 * RATE, 4 * RATE - 1), (4 * RATE, 6 * RATE - 1)):
            with native.tokenize(native.marker, audio[start:end]) as alone:
                j = next(n for n in range(len(alone)) if alone.kind(n) == AUDIO)
                embd = native.encode_audio(alone, j)
                sizes.append(embd.shape[0])
                n_past = native.decode_audio(alone, j, embd, n_past)
        native.decode_tokens(tail, n_past)
        assert np.allclose(np.array(native.logits(-1)), blocked, rtol=1e-4, atol=1e-4)
        assert sizes == [26, 26, 26]  # 13 tokens per 100 mel frames
    finally:
        two.close()
        eight.close()


@pytest.mark.parametrize(
    "block, seen_expected, after_trim",
    [
        # (blocks, encoded, reused): a block that was open is encoded once more when it settles; a
        # window of whole blocks (6, 16 s) has none open
        (8, [(1, 1, 0), (2, 2, 0), (2, 1, 1), (2, 1, 1), (3, 1, 2), (3, 1, 2)], (2, 0)),
        (2, [(3, 3, 0), (5, 2, 3), (6, 2, 4), (8, 2, 6), (9, 1, 8), (10, 2, 8)], (8, 0)),
    ],
)
def test_a_growing_window_encodes_only_its_open_block(pair, block, seen_expected, after_trim):
    """Settled blocks keep their embeddings and KV entries; quiet or loud audio after them
    changes nothing about them (each block is normalised on its own)."""
    b = LlamaAsrBackend(*pair, LlamaOptions(threads=1, encoder_block_seconds=block))
    try:
        audio = noise(20.0, seed=5, level=0.05)
        audio[18 * RATE :] *= 10  # a loud end must not re-encode the earlier blocks
        seen = []
        for seconds in (6.0, 9.0, 12.0, 16.0, 16.5, 20.0):
            b.prefill_logits(audio[: int(seconds * RATE)], prompt="p", language="en")
            seen.append(
                (b.stats.audio_chunks, b.stats.encoded_audio_chunks, b.stats.reused_audio_chunks)
            )
        assert seen == seen_expected
        cold = LlamaAsrBackend(
            *pair, LlamaOptions(threads=1, reuse_cache=False, encoder_block_seconds=block)
        )
        try:
            expected = cold.prefill_logits(audio, prompt="p", language="en")
        finally:
            cold.close()
        assert np.allclose(
            b.prefill_logits(audio, prompt="p", language="en"), expected, rtol=1e-4, atol=1e-4
        )
        # A window starting elsewhere (after a trim) shares no block with the old grid.
        b.prefill_logits(audio[RATE : 16 * RATE], prompt="p", language="en")
        assert (b.stats.encoded_audio_chunks, b.stats.reused_audio_chunks) == after_trim
    finally:
        b.close()


def test_a_window_of_whole_seconds_loses_its_last_sample():
    for size, kept in ((2 * RATE, 2 * RATE - 1), (RATE, RATE - 1), (2 * RATE + 1, 2 * RATE + 1)):
        assert whole_blocks(np.zeros(size, np.float32), RATE).size == kept
    assert whole_blocks(np.zeros(RATE - 1, np.float32), RATE).size == RATE - 1  # under 1 s
