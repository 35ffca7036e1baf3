"""The prompt's prefill into sequence 0 of the KV cache, keeping what the cache already holds.

Call order per window: :meth:`PromptCache.prefill` (or :meth:`PromptCache.prefill_helper`, the
reference path), then the decoder calls :meth:`PromptCache.record` for every token it puts in
the cache. :meth:`PromptCache.forget` after any native error. Invariant: :attr:`held` is what
sequence 0 holds, in order (text tokens by id, audio blocks by digest), or None when unknown;
a new prompt keeps the longest prefix of it that matches and prefills only the rest.
"""

from __future__ import annotations

from contextlib import ExitStack
from typing import NamedTuple

import numpy as np

from desktop_rt.engine.asr.llama.audio_blocks import AudioBlock, BlockEncoder
from desktop_rt.engine.asr.llama.mtmd import AUDIO, TEXT, AudioPrompt, NativeSpeechModel
from desktop_rt.engine.asr.llama.options import TranscriptionStats

__all__ = ["AudioItem", "CacheItem", "PromptCache"]


class AudioItem(NamedTuple):
    """An audio block in the KV cache."""

    digest: bytes  # of the block's PCM
    n_pos: int  # positions it takes


CacheItem = int | AudioItem  # a text token's id, or an audio block
_Part = tuple[int, list[int] | AudioBlock]  # first item of a prompt part, and its tokens or block


def _positions(item: CacheItem) -> int:
    return item.n_pos if isinstance(item, AudioItem) else 1


class PromptCache:
    """What sequence 0 of the KV cache holds, and the prefill that reuses it."""

    def __init__(self, native: NativeSpeechModel, encoder: BlockEncoder):
        self._native = native
        self._encoder = encoder
        self.held: list[CacheItem] | None = []  # None: unknown (after the C helper's prefill)

    def forget(self) -> None:
        """Empty the cache (after a native error, or to start over)."""
        self.held = []
        self._native.forget_from(0)

    def record(self, token: int) -> None:
        """``token`` was just put in the cache after everything it held."""
        if self.held is not None:
            self.held.append(token)

    def prefill(
        self, chunks: AudioPrompt, audio: np.ndarray, reuse: bool, stats: TranscriptionStats
    ) -> int:
        """Prefill the window, keeping what the cache already holds (with ``reuse``); the
        position after the prompt, whose last token's logits are ready."""
        stats.encoded_audio_chunks = 0
        with ExitStack() as stack:
            items, parts = self._plan(chunks, audio, reuse, stack, stats)
            keep = self._matching(items, reuse)
            keep_pos = sum(_positions(item) for item in items[:keep])
            self._native.forget_from(keep_pos)
            self.held = items[:keep]
            n_past = self._fill(parts, items, keep, keep_pos, stack)
        stats.prompt_positions = n_past
        stats.reused_positions = keep_pos
        stats.audio_chunks = sum(1 for it in items if isinstance(it, AudioItem))
        stats.reused_audio_chunks = sum(1 for it in items[:keep] if isinstance(it, AudioItem))
        return n_past

    def prefill_helper(self, chunks: AudioPrompt, stats: TranscriptionStats) -> int:
        """The reference path: everything through ``mtmd_helper_eval_chunks``."""
        self._native.forget_from(0)
        self.held = None  # unknown: the helper does not expose the audio embeddings
        n_past = self._native.eval_prompt(chunks, 0)
        stats.prompt_positions = n_past
        stats.audio_chunks = sum(1 for i in range(len(chunks)) if chunks.kind(i) == AUDIO)
        return n_past

    def _plan(
        self,
        chunks: AudioPrompt,
        audio: np.ndarray,
        reuse: bool,
        stack: ExitStack,
        stats: TranscriptionStats,
    ) -> tuple[list[CacheItem], list[_Part]]:
        """What the prompt puts in the cache, item by item, and its parts to prefill."""
        items: list[CacheItem] = []
        parts: list[_Part] = []
        n_pieces = sum(1 for i in range(len(chunks)) if chunks.kind(i) == AUDIO)
        k = 0  # the piece the next audio chunk holds
        for i in range(len(chunks)):
            if chunks.kind(i) == TEXT:
                tokens = chunks.text_tokens(i)
                parts.append((len(items), tokens))
                items += tokens
                continue
            blocks = self._encoder.blocks_of(chunks, i, audio, k, n_pieces, reuse, stack, stats)
            for block in blocks:
                parts.append((len(items), block))
                items.append(AudioItem(block.digest, block.n_pos))
            k += 1
        return items, parts

    def _matching(self, items: list[CacheItem], reuse: bool) -> int:
        """How many of ``items`` the cache already holds, in order."""
        known = (self.held or []) if reuse else []
        keep = 0
        limit = min(len(known), len(items) - 1)  # always re-decode the last token for its logits
        while keep < limit and known[keep] == items[keep]:
            keep += 1
        return keep

    def _fill(
        self,
        parts: list[_Part],
        items: list[CacheItem],
        keep: int,
        n_past: int,
        stack: ExitStack,
    ) -> int:
        """Prefill what the cache lacks, after its first ``keep`` items (``n_past`` positions)."""
        native = self._native
        for first, payload in parts:
            if isinstance(payload, list):
                todo = payload[max(0, keep - first) :]
                if todo:
                    n_past = native.decode_tokens(todo, n_past)
                self.held = items[: first + len(payload)]
            else:
                if first >= keep:
                    prompt, j = payload.chunk(native, stack)
                    n_past = native.decode_audio(prompt, j, payload.embd, n_past)
                self.held = items[: first + 1]
        return n_past
