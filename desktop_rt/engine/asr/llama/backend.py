"""GGUF speech models (Qwen3-ASR first) through llama-cpp-python's mtmd audio input.

One :meth:`LlamaAsrBackend.transcribe` call: render the transcription prompt (see
:mod:`~desktop_rt.engine.asr.llama.prompt_format`), tokenize it with the audio window
(``mtmd_tokenize``: text chunks around one audio chunk per 8 s of audio), prefill it, decode
greedily with the repeat penalty the GGUF asks for (``general.sampling.penalty_repeat``, else
none), stop at an end-of-generation token or the token budget, and parse
``language X<asr_text>text`` into words with estimated times.

Making the sliding window cheap (``reuse_cache``). Qwen3-ASR's encoder attends within 8 s
pieces (800 mel frames, ``n_window_infer``) and mtmd hands each piece to the model as its own
audio chunk. desktop-rt encodes a window in *blocks* of ``encoder_block_seconds`` (2 s by
default; 8 s is one block per piece): block *b* is the window's audio from b*B s to (b+1)*B s,
encoded *on its own* (its own log-mel and Whisper-style (max - 8) clamp, its own attention). A
block therefore depends only on its own samples: a settled block (one with audio after it) is
encoded once, its embeddings kept (keyed by a digest of its PCM) and its KV entries kept, so a
growing window encodes and prefills only its open last block. Its tokens take exactly the
positions they take in mtmd's chunk (M-RoPE 1-D: one per audio token, 13 per 100 frames), so
the blocks of a piece line up with mtmd's chunk token for token; a window whose blocks would not
(checked each time) falls back to whole pieces.

Why blocks shorter than the encoder's 8 s window are sound: Qwen3-ASR's encoder was trained with
dynamic attention windows from 1 s to 8 s so that one model serves streaming and offline use
(Qwen3-ASR technical report, arXiv 2601.21337); 2 s blocks are its streaming setting. What 8 s
pieces cost on two cores is why they are not the default: re-encoding and re-prefilling an open
piece of up to 8 s on every update kept the 0.6B model from updating every 2 s
(docs/benchmarks.md). With ``encoder_block_seconds = 8`` a window of one piece is encoded
exactly as mtmd encodes it; longer windows differ from mtmd's whole-window preprocessing only in
the clamp floor (a quiet piece next to a loud one keeps 80 dB of its own range) and in the two
frames at a piece's edges (reflection padding instead of the neighbour's samples). When
llama.cpp gains a streaming audio-encoder API, :meth:`_audio_blocks` is the one place to adopt it.

A window of whole seconds is heard without its last sample (:meth:`_whole_blocks`), so it is
whole blocks, each encoded once; streaming hears windows of whole blocks (it asks for them
through :attr:`LlamaAsrBackend.update_grid_seconds`), so an update encodes and prefills only
the block that arrived since the last one.

The KV cache of sequence 0 is kept between calls with a record of what it holds (text tokens
by id, audio blocks by digest); a new window keeps the longest matching prefix and prefills only
the rest: the prompt prefix and the settled blocks cost nothing. Streaming passes the committed
words still in the window as ``prefix``: they are prefilled in one batch right after
``<asr_text>`` and only the words after them are returned (a forced prefix), so committed text
is neither generated nor verified again, and the model cannot hear it as other words. Then the
previous window's output, re-cut where the prefix ends, is used as a draft: it is verified in
one batch and kept up to the first token greedy decoding would not have chosen, so the tentative
text costs one batched pass instead of one decode per token. Reuse and drafting give the
output a run without them gives (the tests compare logits and words).
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections import OrderedDict
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE, Word
from desktop_rt.engine.asr.backend import BackendTraits, DetectedLanguage
from desktop_rt.engine.asr.llama.gguf_check import check_pair
from desktop_rt.engine.asr.llama.mtmd import (
    AUDIO,
    TEXT,
    AudioPrompt,
    NativeError,
    NativeSpeechModel,
)
from desktop_rt.engine.asr.llama.prompt_format import (
    ASR_TEXT,
    ENCODER_BLOCK_CHOICES,
    PromptLayout,
    language_name,
    split_output,
    timed_words,
)
from desktop_rt.errors import AudioError, ModelCorruptError, ModelFormatError

__all__ = ["LlamaOptions", "LlamaAsrBackend", "TranscriptionStats"]

log = logging.getLogger("desktop_rt.llama")

MIN_SAMPLES = SAMPLE_RATE // 10  # shorter windows hold no word; mtmd rejects tiny ones
PIECE_SECONDS = 8  # Qwen3-ASR's encoder window (n_window_infer = 800 mel frames at 100 per second)
MAX_CACHED_BLOCKS = (
    32  # a 24 s window holds 12 blocks of 2 s; the rest covers a trimmed window's old grid
)


@dataclass(frozen=True)
class LlamaOptions:
    threads: int = 0  # 0: one per core
    n_ctx: int = 2048  # ~120 s of audio with the prompt and the output
    n_batch: int = 512
    max_tokens: int = 448  # per window; also capped by the window's length:
    max_tokens_per_second: float = 12.0  # speech needs 3-5; more only lets a looping model run on
    token_slack: int = (
        24  # budget on top of the per-second one ("language English<asr_text>" is ~5)
    )
    repeat_penalty: float | None = (
        None  # None: the GGUF's general.sampling.penalty_repeat, else off
    )
    repeat_last_n: int | None = None  # None: the GGUF's general.sampling.penalty_last_n, else 64
    reuse_cache: bool = (
        True  # keep settled blocks' embeddings and the KV cache of the matching prefix
    )
    draft: bool = True  # verify the previous window's output in one batch
    force_prefix: bool = (
        True  # streaming's committed words are prefilled, not generated (see transcribe)
    )
    update_seconds: float = (
        2.0  # streaming re-transcribes after this much new audio (see min_update_seconds)
    )
    encoder_block_seconds: int = (
        2  # audio is encoded in blocks this long, 1/2/4/8 (see the module doc)
    )

    def __post_init__(self) -> None:
        if self.encoder_block_seconds not in ENCODER_BLOCK_CHOICES:
            raise ValueError(
                f"encoder_block_seconds must be one of {', '.join(map(str, ENCODER_BLOCK_CHOICES))} "
                f"(whole seconds that divide the encoder's 8 s window), not {self.encoder_block_seconds}"
            )


@dataclass
class TranscriptionStats:
    """What the last call cost, in positions and tokens (for tests and benchmarks)."""

    prompt_positions: int = 0
    reused_positions: int = 0
    audio_chunks: int = 0  # audio blocks in the window (see the module doc)
    reused_audio_chunks: int = 0  # blocks whose KV entries were kept
    encoded_audio_chunks: int = 0  # blocks that went through the encoder in this call
    generated: int = 0  # output tokens, the forced ones included
    drafted: int = 0  # generated tokens that came from a verified draft
    forced: int = 0  # tokens of the committed prefix, prefilled instead of generated


class LlamaAsrBackend:
    """An :class:`~desktop_rt.engine.asr.backend.AsrBackend` for a GGUF text model + audio mmproj.

    Not thread-safe: the model worker owns it. ``close()`` frees every native object; so does
    a failed construction.
    """

    def __init__(
        self,
        text: Path | str,
        mmproj: Path | str | None = None,
        options: LlamaOptions = LlamaOptions(),
        name: str | None = None,
    ):
        pair = check_pair(text, mmproj)  # raises before llama.cpp sees a bad file
        self.pair = pair
        self.options = options
        self._name = name or Path(text).name  # as model_loader.describe_model names it
        threads = options.threads or os.cpu_count() or 1
        try:
            self._native = NativeSpeechModel(
                pair.text,
                pair.mmproj,
                threads=threads,
                n_ctx=options.n_ctx,
                n_batch=options.n_batch,
            )
        except NativeError as exc:
            raise ModelCorruptError(
                f"llama.cpp could not load {pair.text.name} with {pair.mmproj.name}: {exc}. The files "
                f"may be truncated or from a newer llama.cpp; download them again or update desktop-rt."
            ) from exc
        native = self._native
        if not native.supports_audio or native.sample_rate <= 0:
            self.close()
            raise ModelFormatError(
                f"{pair.mmproj.name} loaded, but llama.cpp reports no audio input for it."
            )
        self.layout = PromptLayout(native.marker, native.chat_template() or pair.chat_template)
        self._asr_text = native.token_id(ASR_TEXT)
        self._penalty = (
            options.repeat_penalty
            if options.repeat_penalty is not None
            else (pair.repeat_penalty or 1.0)
        )
        self._last_n = (
            options.repeat_last_n
            if options.repeat_last_n is not None
            else (pair.repeat_last_n or 64)
        )
        # What sequence 0 of the KV cache holds, in order: ("t", token) / ("a", digest, n_pos);
        # None when unknown (after a cold prefill).
        self._kv: list[tuple] | None = []
        self._draft: list[int] = []
        self._blocks: OrderedDict[bytes, np.ndarray] = (
            OrderedDict()
        )  # digest of a settled block -> embeddings
        self.stats = TranscriptionStats()

    @property
    def name(self) -> str:
        return self._name

    @property
    def traits(self) -> BackendTraits:
        """Updates every ``update_seconds`` (an 0.6B model on two cores cannot keep Whisper's
        pace); whole ``encoder_block_seconds`` blocks when a block fits in an update, so each
        block is encoded once; committed words forced when ``force_prefix``."""
        block = self.options.encoder_block_seconds
        return BackendTraits(
            min_update_seconds=self.options.update_seconds,
            update_grid_seconds=float(block) if block <= self.options.update_seconds else None,
            forces_prefix=self.options.force_prefix,
        )

    @property
    def detected_language(self) -> DetectedLanguage | None:
        """Always ``None``: the header's language is not reported back to streaming."""
        return None

    @property
    def sample_rate(self) -> int:
        return self._native.sample_rate

    @property
    def repeat_penalty(self) -> tuple[float, int]:
        """The penalty in use and the number of recent output tokens it looks at."""
        return self._penalty, self._last_n

    @property
    def native(self) -> NativeSpeechModel:
        """The loaded llama.cpp objects (for tests and benchmarks)."""
        if self._native is None:
            raise RuntimeError("backend is closed")
        return self._native

    # -- AsrBackend -----------------------------------------------------------------------
    def transcribe(
        self,
        audio: np.ndarray,
        *,
        prompt: str | None = None,
        language: str | None = None,
        prefix: str | None = None,
    ) -> Sequence[Word]:
        """The words of ``audio``; with ``prefix`` (text the window's speech starts with, already
        committed), that text is forced as the start of the output and only the words after
        it are returned. Streaming passes the committed words still in its window: prefilling
        them costs one batch without logits, where generating or verifying them cost a logits
        row per token, and the model cannot hear committed words as other words."""
        if self._native is None:
            raise RuntimeError("backend is closed")
        audio = np.ascontiguousarray(np.asarray(audio, dtype=np.float32).reshape(-1))
        duration = audio.size / SAMPLE_RATE
        if audio.size < MIN_SAMPLES:
            return []
        if self._native.sample_rate != SAMPLE_RATE:
            import soxr

            audio = soxr.resample(audio, SAMPLE_RATE, self._native.sample_rate).astype(np.float32)
        forced = language_name(language)
        prefix = (prefix or "").strip()
        tokens, probs = self.generate(audio, prompt=prompt, language=language, prefix=prefix)
        return self._words(tokens, probs, forced, duration, len(prefix))

    def close(self) -> None:
        native, self._native = getattr(self, "_native", None), None
        self._kv, self._draft = [], []
        self._blocks.clear()
        if native is not None:
            native.close()

    # -- one window -----------------------------------------------------------------------
    def generate(
        self,
        audio: np.ndarray,
        *,
        prompt: str | None = None,
        language: str | None = None,
        prefix: str = "",
    ) -> tuple[list[int], list[float]]:
        """Prefill the prompt with ``audio`` and decode; the output tokens and their probabilities."""
        native = self.native
        self.stats = TranscriptionStats()
        text = self.layout.render(prompt, language)
        forced = native.text_tokens(prefix) if prefix else []
        budget = self._budget(audio.size / self._native.sample_rate)
        audio = self._whole_blocks(audio)
        with native.tokenize(text, audio) as chunks:
            needed = chunks.total_pos + budget
            if needed > native.n_ctx:
                raise AudioError(
                    f"A {audio.size / native.sample_rate:.0f} s window needs {needed} context positions; "
                    f"the model was opened with {native.n_ctx}. Transcribe shorter windows (the "
                    f"streaming engine does) or raise LlamaOptions.n_ctx."
                )
            try:
                n_past = self._prefill(chunks, audio)
            except NativeError as exc:
                self._kv = []
                native.forget_from(0)
                raise AudioError(f"llama.cpp could not process this audio window: {exc}") from exc
        try:
            return self._decode(n_past, budget, forced, text.endswith(ASR_TEXT))
        except NativeError as exc:
            self._kv, self._draft = [], []
            native.forget_from(0)
            raise AudioError(f"llama.cpp failed while decoding this window: {exc}") from exc

    def _whole_blocks(self, audio: np.ndarray) -> np.ndarray:
        """A window of whole seconds without its last sample.

        ``n`` s of audio make ``100 * n + 1`` mel frames (frame f is centred on sample f * hop),
        and the one frame over makes mtmd add a chunk of 13 positions for 10 ms of audio; the
        last block would also be encoded open now and again, settled, at the next update.
        Without its last sample (62 us) such a window is whole blocks, each encoded once. The
        streaming engine hears whole blocks (``update_grid_seconds``), so this is its usual case.
        """
        rate = self._native.sample_rate
        if audio.size >= rate and audio.size % rate == 0:
            return audio[:-1]
        return audio

    def prefill_logits(
        self,
        audio: np.ndarray,
        *,
        prompt: str | None = None,
        language: str | None = None,
        helper: bool = False,
    ) -> np.ndarray:
        """The logits after the prompt (a copy); for tests and benchmarks.

        ``helper``: through llama.cpp's own ``mtmd_helper_eval_chunks`` (whole-window
        preprocessing), the reference for windows of one piece.
        """
        text = self.layout.render(prompt, language)
        audio = self._whole_blocks(np.ascontiguousarray(audio, dtype=np.float32))
        with self.native.tokenize(text, audio) as chunks:
            if helper:
                self._prefill_helper(chunks)
            else:
                self._prefill(chunks, audio)
        return np.array(self._native.logits(-1))

    def _words(
        self,
        tokens: list[int],
        probs: list[float],
        forced: str | None,
        duration: float,
        skip: int = 0,
    ) -> list[Word]:
        """Parse ``language X<asr_text>text`` (or, forced, just the text) into timed words,
        leaving out the first ``skip`` characters of the text (the forced prefix)."""
        if not forced and self._asr_text is not None and self._asr_text in tokens:
            cut = tokens.index(self._asr_text)
            tokens, probs, forced = tokens[cut + 1 :], probs[cut + 1 :], "detected"
        pieces = [self._native.piece(t, special=False) for t in tokens]
        raw = b"".join(pieces).decode("utf-8", "replace")
        _language, text = split_output(raw, forced)
        if not text:
            return []
        offset = -len(raw[: len(raw) - len(raw.lstrip())].encode())  # split_output strips
        spans = []
        for piece, p in zip(pieces, probs):
            spans.append((offset, offset + len(piece), p))
            offset += len(piece)
        return timed_words(text, duration, spans, skip=skip)

    def _budget(self, seconds: float) -> int:
        # Speech runs at ~3-5 tokens per second; 12/s plus room for "language X<asr_text>" never
        # cuts real speech short and keeps a model that loops on noise from running for long.
        return int(
            min(
                self.options.max_tokens,
                self.options.token_slack + self.options.max_tokens_per_second * seconds,
            )
        )

    def _prefill_helper(self, chunks) -> int:
        """The reference path: everything through ``mtmd_helper_eval_chunks``."""
        self._native.forget_from(0)
        self._kv = None  # unknown: the helper does not expose the audio embeddings
        n_past = self._native.eval_prompt(chunks, 0)
        self.stats.prompt_positions = n_past
        self.stats.audio_chunks = sum(1 for i in range(len(chunks)) if chunks.kind(i) == AUDIO)
        return n_past

    def _prefill(self, chunks, audio: np.ndarray) -> int:
        """Prefill the window, keeping what the KV cache already holds (with ``reuse_cache``)."""
        native = self._native
        reuse = self.options.reuse_cache
        items: list[tuple] = []
        parts: list[tuple] = []  # (kind, text tokens or _Block, first item)
        n_pieces = sum(1 for i in range(len(chunks)) if chunks.kind(i) == AUDIO)
        self.stats.encoded_audio_chunks = 0
        with ExitStack() as stack:
            k = 0  # the piece the next audio chunk holds
            for i in range(len(chunks)):
                if chunks.kind(i) == TEXT:
                    toks = chunks.text_tokens(i)
                    parts.append((TEXT, toks, len(items)))
                    items += [("t", t) for t in toks]
                    continue
                for block in self._audio_blocks(chunks, i, audio, k, n_pieces, reuse, stack):
                    parts.append((AUDIO, block, len(items)))
                    items.append(("a", block.digest, block.n_pos))
                k += 1
            known = (self._kv or []) if reuse else []
            keep = 0
            limit = min(
                len(known), len(items) - 1
            )  # always re-decode the last token for its logits
            while keep < limit and known[keep] == items[keep]:
                keep += 1
            keep_pos = sum(_positions(item) for item in items[:keep])
            native.forget_from(keep_pos)
            self._kv = items[:keep]
            n_past = keep_pos
            for kind, payload, first in parts:
                if kind == TEXT:
                    todo = payload[max(0, keep - first) :]
                    if todo:
                        n_past = native.decode_tokens(todo, n_past)
                elif first >= keep:
                    prompt, j = payload.chunk(native, stack)
                    n_past = native.decode_audio(prompt, j, payload.embd, n_past)
                self._kv = items[: first + (len(payload) if kind == TEXT else 1)]
        self.stats.prompt_positions = n_past
        self.stats.reused_positions = keep_pos
        self.stats.audio_chunks = sum(1 for it in items if it[0] == "a")
        self.stats.reused_audio_chunks = sum(1 for it in items[:keep] if it[0] == "a")
        return n_past

    def _audio_blocks(
        self,
        chunks: AudioPrompt,
        i: int,
        audio: np.ndarray,
        k: int,
        n_pieces: int,
        reuse: bool,
        stack: ExitStack,
    ) -> list[_Block]:
        """The blocks of audio chunk ``i`` (the window's piece ``k``), each with its embeddings."""
        native = self._native
        rate = native.sample_rate
        span = PIECE_SECONDS * rate
        piece = audio[k * span : (k + 1) * span]
        if piece.size < rate // 50:
            # The one-frame tail mtmd adds to a window within a hop of a multiple of 8 s: too
            # short to stand alone, and nothing to keep.
            return [self._window_block(chunks, i, piece)]
        step = min(self.options.encoder_block_seconds, PIECE_SECONDS) * rate
        starts = list(range(0, piece.size, step))
        if len(starts) > 1 and piece.size - starts[-1] < MIN_SAMPLES:
            starts.pop()  # a sliver joins the block before it (mtmd refuses tiny audio)
        if len(starts) == 1 and n_pieces == 1 and piece.size < step - 1:
            return [
                self._window_block(chunks, i, piece)
            ]  # the window is one open block: mtmd's own encoding
        whole = piece.size == span
        blocks = []
        for b, start in enumerate(starts):
            end = starts[b + 1] if b + 1 < len(starts) else piece.size
            samples = piece[start:end]
            # Settled: audio follows it, or it is full (see _whole_blocks), so it will not grow.
            settled = end < piece.size or whole or end - start == step - 1
            if settled:
                # 200 (or 800) mel frames come from step - 1 samples (frame f is centred on sample
                # f * hop); the full step would make mtmd add a one-frame window.
                samples = samples[: step - 1]
            blocks.append(self._block(samples, settled and reuse, stack))
        if sum(block.n_pos for block in blocks) != chunks.n_pos(i):
            if len(blocks) == 1:
                raise NativeError(
                    f"an {piece.size / rate:.2f} s piece gave {blocks[0].n_pos} audio positions alone and "
                    f"{chunks.n_pos(i)} in its window; this mmproj does not cut audio into {PIECE_SECONDS} s pieces"
                )
            log.debug(
                "audio blocks do not line up with mtmd's chunk; encoding the %.2f s piece whole",
                piece.size / rate,
            )
            whole_piece = piece[: span - 1] if whole else piece
            return [self._block(whole_piece, whole and reuse, stack)]
        return blocks

    def _window_block(self, chunks: AudioPrompt, i: int, piece: np.ndarray) -> _Block:
        """Audio chunk ``i`` of the window as one block, encoded through the window's own chunk."""
        self.stats.encoded_audio_chunks += 1
        embd = self._native.encode_audio(chunks, i)
        digest = hashlib.blake2b(piece.tobytes(), digest_size=16).digest()
        return _Block(digest, embd, chunks.n_pos(i), None, (chunks, i))

    def _block(self, samples: np.ndarray, keep: bool, stack: ExitStack) -> _Block:
        """``samples`` encoded on their own; from the cache when they were before (``keep``)."""
        digest = hashlib.blake2b(samples.tobytes(), digest_size=16).digest()
        if keep and digest in self._blocks:
            self._blocks.move_to_end(digest)
            embd = self._blocks[digest]
            return _Block(digest, embd, embd.shape[0], samples)
        native = self._native
        alone = stack.enter_context(native.tokenize(native.marker, samples))
        j = next(n for n in range(len(alone)) if alone.kind(n) == AUDIO)
        self.stats.encoded_audio_chunks += 1
        embd = native.encode_audio(alone, j)
        if alone.n_pos(j) != embd.shape[0]:
            raise NativeError(
                f"this mmproj gives {alone.n_pos(j)} positions for {embd.shape[0]} audio tokens"
            )
        if keep:
            self._blocks[digest] = embd
            while len(self._blocks) > MAX_CACHED_BLOCKS:
                self._blocks.popitem(last=False)
        return _Block(digest, embd, embd.shape[0], samples, (alone, j))

    def _decode(
        self, n_past: int, budget: int, forced: list[int], after_header: bool
    ) -> tuple[list[int], list[float]]:
        """Greedy decoding with the repeat penalty, verifying the previous output as a draft.

        ``forced`` (the committed prefix's tokens) is prefilled where the text begins: at once
        when the prompt ends with the ``<asr_text>`` of a forced language (``after_header``),
        else after the model writes it.
        """
        native = self._native
        out: list[int] = []
        probs: list[float] = []
        draft = self._draft if self.options.draft else []
        record = self._kv.append if self._kv is not None else (lambda item: None)

        forced_pending = bool(forced)

        def force(chosen: list[int], n_past: int) -> tuple[int, np.ndarray]:
            """Prefill ``chosen`` (the token just picked, already in ``out``) and the forced
            prefix; the new position and the logits after them."""
            nonlocal draft, forced_pending
            forced_pending = False
            take = forced[: max(0, budget - len(out))]
            if chosen or take:
                n_past = native.decode_tokens(chosen + take, n_past)
            for t in take:
                out.append(t)
                probs.append(1.0)
                record(("t", t))
            self.stats.forced = len(take)
            draft = self._realign(draft, out)
            return n_past, native.logits(-1)

        logits = native.logits(-1)
        if forced and after_header:
            n_past, logits = force([], n_past)
        while True:
            token, p = self._pick(logits, out)
            if native.is_eog(token) or len(out) >= budget:
                break
            out.append(token)
            probs.append(p)
            record(("t", token))
            if forced_pending and token == self._asr_text:
                n_past, logits = force([token], n_past)
                continue
            k = len(out)
            if draft[:k] == out and len(draft) > k:
                # Verify draft[k:] in one batch: the token just chosen plus the draft after it
                # (up to its <asr_text> while the prefix waits to be forced after that).
                end = k + min(len(draft) - k, budget - k, 64)
                if forced_pending and self._asr_text in draft[k:end]:
                    end = draft.index(self._asr_text, k) + 1
                batch = [token] + draft[k:end]
                n_past = native.decode_tokens(batch, n_past, all_logits=True)
                for j in range(len(batch)):
                    logits = native.logits(j)
                    if j == len(batch) - 1:
                        break
                    nxt, p = self._pick(logits, out)
                    if nxt != batch[j + 1] or native.is_eog(nxt) or len(out) >= budget:
                        break
                    out.append(nxt)
                    probs.append(p)
                    record(("t", nxt))
                    self.stats.drafted += 1
                # Drop what the rejected part of the draft left in the cache.
                native.forget_from(n_past - (len(batch) - 1 - j))
                n_past -= len(batch) - 1 - j
                if forced_pending and out[-1] == self._asr_text:
                    n_past, logits = force([], n_past)
                continue
            n_past = native.decode_tokens([token], n_past)
            logits = native.logits(-1)
        self._draft = out
        self.stats.generated = len(out)
        return out, probs

    def _realign(self, draft: list[int], out: list[int]) -> list[int]:
        """The draft re-cut so it starts with ``out``: the previous output's tokens after the
        text ``out`` spells (a forced prefix is tokenized afresh, so its tokens may differ from
        the ones the model wrote for it); empty when the texts part."""
        if draft[: len(out)] == out:
            return draft
        target = b"".join(self._native.piece(t) for t in out)
        spelled = b""
        for i, t in enumerate(draft):
            if len(spelled) >= len(target):
                break
            spelled += self._native.piece(t)
        else:
            i = len(draft)
        return out + draft[i:] if spelled == target else []

    def _pick(self, logits: np.ndarray, history: list[int]) -> tuple[int, float]:
        """Greedy choice after the repeat penalty over the last ``repeat_last_n`` output tokens."""
        if self._penalty != 1.0 and history:
            recent = np.unique(np.asarray(history[-self._last_n :], dtype=np.int64))
            logits = np.array(logits)
            values = logits[recent]
            logits[recent] = np.where(values > 0, values / self._penalty, values * self._penalty)
        token = int(np.argmax(logits))
        top = float(logits[token])
        prob = 1.0 / float(np.exp(logits - top, dtype=np.float64).sum())
        return token, prob


@dataclass
class _Block:
    """One encoded block of a window: what identifies it, its embeddings, how to prefill it."""

    digest: bytes
    embd: np.ndarray
    n_pos: int
    samples: np.ndarray | None  # None: it is a chunk of the window itself
    source: tuple[AudioPrompt, int] | None = None  # a tokenized chunk holding it, once there is one

    def chunk(self, native: NativeSpeechModel, stack: ExitStack) -> tuple[AudioPrompt, int]:
        """A tokenized audio chunk for the prefill helper (it lays out the positions)."""
        if self.source is None:
            alone = stack.enter_context(native.tokenize(native.marker, self.samples))
            self.source = (alone, next(n for n in range(len(alone)) if alone.kind(n) == AUDIO))
        return self.source


def _positions(item: tuple) -> int:
    return item[2] if item[0] == "a" else 1
