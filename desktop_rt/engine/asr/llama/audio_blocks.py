"""A window's audio encoded in blocks, settled blocks' embeddings kept between calls.

Call order: :func:`whole_blocks` on the window, ``mtmd_tokenize`` it, then
:meth:`BlockEncoder.blocks_of` for each audio chunk (one per 8 s piece) inside one
``ExitStack`` that outlives the prefill. Invariants: a block is encoded from its own samples
only, so a settled block (audio follows it, or it is full) is encoded once and found again by
the digest of its PCM; a piece's blocks take exactly the positions mtmd's chunk takes, else the
piece is encoded whole. Why blocks are sound for Qwen3-ASR: docs/design/gguf.md.
"""

from __future__ import annotations

import hashlib
import logging
from collections import OrderedDict
from contextlib import ExitStack
from dataclasses import dataclass

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.asr.llama.mtmd import AUDIO, AudioPrompt, NativeError, NativeSpeechModel
from desktop_rt.engine.asr.llama.options import TranscriptionStats

__all__ = [
    "MIN_SAMPLES",
    "PIECE_SECONDS",
    "MAX_CACHED_BLOCKS",
    "AudioBlock",
    "BlockEncoder",
    "whole_blocks",
]

log = logging.getLogger("desktop_rt.llama")

MIN_SAMPLES = SAMPLE_RATE // 10  # shorter windows hold no word; mtmd rejects tiny ones
PIECE_SECONDS = 8  # Qwen3-ASR's encoder window (n_window_infer = 800 mel frames at 100 per second)
MAX_CACHED_BLOCKS = 32  # settled blocks kept: a 24 s window's 12, and a trimmed window's old grid


def whole_blocks(audio: np.ndarray, rate: int) -> np.ndarray:
    """A window of whole seconds without its last sample.

    ``n`` s of audio make ``100 * n + 1`` mel frames (frame f is centred on sample f * hop),
    and the one frame over makes mtmd add a chunk of 13 positions for 10 ms of audio; the
    last block would also be encoded open now and again, settled, at the next update.
    Without its last sample (62 us) such a window is whole blocks, each encoded once.
    """
    if audio.size >= rate and audio.size % rate == 0:
        return audio[:-1]
    return audio


def _digest(samples: np.ndarray) -> bytes:
    return hashlib.blake2b(samples.tobytes(), digest_size=16).digest()


def _first_audio(prompt: AudioPrompt) -> int:
    return next(n for n in range(len(prompt)) if prompt.kind(n) == AUDIO)


@dataclass
class AudioBlock:
    """One encoded block of a window: what identifies it, its embeddings, how to prefill it."""

    digest: bytes  # of the block's PCM
    embd: np.ndarray  # encoder output, n_pos x n_embd
    n_pos: int  # KV positions the block takes
    samples: np.ndarray | None  # its audio; None: it is a chunk of the window itself
    source: tuple[AudioPrompt, int] | None = None  # a tokenized chunk holding it, once there is one

    def chunk(self, native: NativeSpeechModel, stack: ExitStack) -> tuple[AudioPrompt, int]:
        """A tokenized audio chunk for the prefill helper (it lays out the positions)."""
        if self.source is None:
            if self.samples is None:
                raise NativeError("a window's own chunk has no samples to tokenize again")
            alone = stack.enter_context(native.tokenize(native.marker, self.samples))
            self.source = (alone, _first_audio(alone))
        return self.source


class BlockEncoder:
    """Cuts audio chunks into blocks and encodes them; keeps settled blocks' embeddings.

    Not thread-safe; owned by one backend. ``stats.encoded_audio_chunks`` counts encoder runs.
    """

    def __init__(self, native: NativeSpeechModel, block_seconds: int):
        self._native = native
        self._step = min(block_seconds, PIECE_SECONDS) * native.sample_rate
        self._cache: OrderedDict[bytes, np.ndarray] = OrderedDict()

    def clear(self) -> None:
        self._cache.clear()

    def blocks_of(
        self,
        chunks: AudioPrompt,
        i: int,
        audio: np.ndarray,
        k: int,
        n_pieces: int,
        keep: bool,
        stack: ExitStack,
        stats: TranscriptionStats,
    ) -> list[AudioBlock]:
        """The blocks of audio chunk ``i`` (the window's piece ``k`` of ``n_pieces``), each
        with its embeddings; settled ones from or into the cache when ``keep``."""
        rate = self._native.sample_rate
        span = PIECE_SECONDS * rate
        piece = audio[k * span : (k + 1) * span]
        if piece.size < rate // 50:
            # The one-frame tail mtmd adds to a window within a hop of a multiple of 8 s: too
            # short to stand alone, and nothing to keep.
            return [self._window_block(chunks, i, piece, stats)]
        starts = self._starts(piece.size)
        if len(starts) == 1 and n_pieces == 1 and piece.size < self._step - 1:
            # The window is one open block: mtmd's own encoding.
            return [self._window_block(chunks, i, piece, stats)]
        whole = piece.size == span
        blocks = [
            self._block(samples, settled and keep, stack, stats)
            for samples, settled in self._cut(piece, starts, whole)
        ]
        if sum(block.n_pos for block in blocks) == chunks.n_pos(i):
            return blocks
        if len(blocks) == 1:
            raise NativeError(
                f"an {piece.size / rate:.2f} s piece gave {blocks[0].n_pos} audio positions "
                f"alone and {chunks.n_pos(i)} in its window; this mmproj does not cut audio "
                f"into {PIECE_SECONDS} s pieces"
            )
        log.debug(
            "audio blocks do not line up with mtmd's chunk; encoding the %.2f s piece whole",
            piece.size / rate,
        )
        whole_piece = piece[: span - 1] if whole else piece
        return [self._block(whole_piece, whole and keep, stack, stats)]

    def _starts(self, size: int) -> list[int]:
        """Where a piece of ``size`` samples' blocks start."""
        starts = list(range(0, size, self._step))
        if len(starts) > 1 and size - starts[-1] < MIN_SAMPLES:
            starts.pop()  # a sliver joins the block before it (mtmd refuses tiny audio)
        return starts

    def _cut(
        self, piece: np.ndarray, starts: list[int], whole: bool
    ) -> list[tuple[np.ndarray, bool]]:
        """Each block's samples, and whether it is settled (it will not grow)."""
        step = self._step
        cut = []
        for b, start in enumerate(starts):
            end = starts[b + 1] if b + 1 < len(starts) else piece.size
            samples = piece[start:end]
            # Settled: audio follows it, or it is full (see whole_blocks), so it will not grow.
            settled = end < piece.size or whole or end - start == step - 1
            if settled:
                # 200 (or 800) mel frames come from step - 1 samples (frame f is centred on
                # sample f * hop); the full step would make mtmd add a one-frame window.
                samples = samples[: step - 1]
            cut.append((samples, settled))
        return cut

    def _window_block(
        self, chunks: AudioPrompt, i: int, piece: np.ndarray, stats: TranscriptionStats
    ) -> AudioBlock:
        """Audio chunk ``i`` of the window as one block, encoded through the window's own chunk."""
        stats.encoded_audio_chunks += 1
        embd = self._native.encode_audio(chunks, i)
        return AudioBlock(_digest(piece), embd, chunks.n_pos(i), None, (chunks, i))

    def _block(
        self, samples: np.ndarray, keep: bool, stack: ExitStack, stats: TranscriptionStats
    ) -> AudioBlock:
        """``samples`` encoded on their own; from the cache when they were before (``keep``)."""
        digest = _digest(samples)
        if keep and digest in self._cache:
            self._cache.move_to_end(digest)
            embd = self._cache[digest]
            return AudioBlock(digest, embd, embd.shape[0], samples)
        native = self._native
        alone = stack.enter_context(native.tokenize(native.marker, samples))
        j = _first_audio(alone)
        stats.encoded_audio_chunks += 1
        embd = native.encode_audio(alone, j)
        if alone.n_pos(j) != embd.shape[0]:
            raise NativeError(
                f"this mmproj gives {alone.n_pos(j)} positions for {embd.shape[0]} audio tokens"
            )
        if keep:
            self._cache[digest] = embd
            while len(self._cache) > MAX_CACHED_BLOCKS:
                self._cache.popitem(last=False)
        return AudioBlock(digest, embd, embd.shape[0], samples, (alone, j))
