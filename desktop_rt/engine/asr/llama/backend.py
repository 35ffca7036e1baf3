"""GGUF speech models (Qwen3-ASR first) through llama-cpp-python's mtmd audio input.

Call order: ``LlamaAsrBackend(text, mmproj, options)``, ``transcribe(window, prefix=...)`` per
window, ``close()``. One window: render the prompt (:mod:`.prompt_format`), tokenize it with the
audio (one audio chunk per 8 s piece), prefill it reusing the KV cache (:mod:`.kv_cache`, blocks
from :mod:`.audio_blocks`), decode greedily with the forced prefix and the draft
(:mod:`.decoding`), and read ``language X<asr_text>text`` back as timed words. Invariant: reuse,
blocks of a piece and drafting give the output a cold run gives. Design: docs/design/gguf.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE, Word
from desktop_rt.engine.asr.backend import BackendTraits, DetectedLanguage, Task
from desktop_rt.engine.asr.llama.audio_blocks import MIN_SAMPLES, BlockEncoder, whole_blocks
from desktop_rt.engine.asr.llama.decoding import Decoding, greedy_pick
from desktop_rt.engine.asr.llama.gguf_check import GgufPair, check_pair
from desktop_rt.engine.asr.llama.kv_cache import PromptCache
from desktop_rt.engine.asr.llama.mtmd import NativeError, NativeSpeechModel
from desktop_rt.engine.asr.llama.options import LlamaOptions, TranscriptionStats
from desktop_rt.engine.asr.llama.prompt_format import (
    ASR_TEXT,
    PromptLayout,
    language_name,
    output_words,
)
from desktop_rt.errors import AudioError, ModelCorruptError, ModelFormatError
from desktop_rt.machine import usable_cores

__all__ = ["LlamaOptions", "LlamaAsrBackend", "TranscriptionStats"]

_DEFAULT_OPTIONS = LlamaOptions()


class LlamaAsrBackend:
    """An :class:`~desktop_rt.engine.asr.backend.AsrBackend` for a GGUF text model + audio mmproj.

    Not thread-safe: the model worker owns it. ``close()`` frees every native object; so does
    a failed construction.
    """

    def __init__(
        self,
        text: Path | str,
        mmproj: Path | str | None = None,
        options: LlamaOptions = _DEFAULT_OPTIONS,
        name: str | None = None,
    ):
        pair = check_pair(text, mmproj)  # raises before llama.cpp sees a bad file
        self.pair = pair
        self.options = options
        self._name = name or Path(text).name  # as models.kinds.describe_model names it
        native = _load_native(pair, options)
        self._native: NativeSpeechModel | None = native
        self.layout = PromptLayout(native.marker, native.chat_template() or pair.chat_template)
        self._asr_text = native.token_id(ASR_TEXT)
        penalty, last_n = options.repeat_penalty, options.repeat_last_n
        self._penalty = penalty if penalty is not None else (pair.repeat_penalty or 1.0)
        self._last_n = last_n if last_n is not None else (pair.repeat_last_n or 64)
        self._encoder = BlockEncoder(native, options.encoder_block_seconds)
        self._cache = PromptCache(native, self._encoder)
        self._draft: list[int] = []  # the previous window's output
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
        return self.native.sample_rate

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
        task: Task = "transcribe",
        whole: bool = False,
    ) -> Sequence[Word]:
        """The words of ``audio``; with ``prefix`` (text the window's speech starts with, already
        committed), that text is forced as the start of the output and only the words after
        it are returned. It cannot translate (its traits say so): ``task`` must be transcribe.
        ``whole`` changes nothing: every window is heard with the same context."""
        if task != "transcribe":
            raise ValueError(f"the GGUF model '{self._name}' cannot translate")
        native = self.native
        audio = np.ascontiguousarray(np.asarray(audio, dtype=np.float32).reshape(-1))
        duration = audio.size / SAMPLE_RATE
        if audio.size < MIN_SAMPLES:
            return []
        if native.sample_rate != SAMPLE_RATE:
            import soxr

            audio = soxr.resample(audio, SAMPLE_RATE, native.sample_rate).astype(np.float32)
        forced = language_name(language)
        prefix = (prefix or "").strip()
        tokens, probs = self.generate(audio, prompt=prompt, language=language, prefix=prefix)
        return self._words(tokens, probs, forced, duration, len(prefix))

    def close(self) -> None:
        native, self._native = self._native, None
        self._cache.held, self._draft = [], []
        self._encoder.clear()
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
        budget = self._budget(audio.size / native.sample_rate)
        audio = self._whole_blocks(audio)
        with native.tokenize(text, audio) as chunks:
            needed = chunks.total_pos + budget
            if needed > native.n_ctx:
                raise AudioError(
                    f"A {audio.size / native.sample_rate:.0f} s window needs {needed} context "
                    f"positions; the model was opened with {native.n_ctx}. Transcribe shorter "
                    f"windows (the streaming engine does) or raise LlamaOptions.n_ctx."
                )
            try:
                n_past = self._cache.prefill(chunks, audio, self.options.reuse_cache, self.stats)
            except NativeError as exc:
                self._cache.forget()
                raise AudioError(f"llama.cpp could not process this audio window: {exc}") from exc
        try:
            return self._decode(n_past, budget, forced, text.endswith(ASR_TEXT))
        except NativeError as exc:
            self._draft = []
            self._cache.forget()
            raise AudioError(f"llama.cpp failed while decoding this window: {exc}") from exc

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
        native = self.native
        text = self.layout.render(prompt, language)
        audio = self._whole_blocks(np.ascontiguousarray(audio, dtype=np.float32))
        with native.tokenize(text, audio) as chunks:
            if helper:
                self._cache.prefill_helper(chunks, self.stats)
            else:
                self._cache.prefill(chunks, audio, self.options.reuse_cache, self.stats)
        return np.array(native.logits(-1))

    def _whole_blocks(self, audio: np.ndarray) -> np.ndarray:
        """The window as streaming hears it: see :func:`.audio_blocks.whole_blocks`."""
        return whole_blocks(audio, self.native.sample_rate)

    def _decode(
        self, n_past: int, budget: int, forced: list[int], after_header: bool
    ) -> tuple[list[int], list[float]]:
        decoding = Decoding(
            self.native,
            self._pick,
            budget=budget,
            forced=forced,
            draft=self._draft if self.options.draft else [],
            asr_text=self._asr_text,
            record=self._cache.record,
            stats=self.stats,
        )
        out, probs = decoding.run(n_past, after_header)
        self._draft = out
        return out, probs

    def _pick(self, logits: np.ndarray, history: list[int]) -> tuple[int, float]:
        """Greedy choice after the repeat penalty over the last ``repeat_last_n`` output tokens."""
        return greedy_pick(logits, history, self._penalty, self._last_n)

    def _budget(self, seconds: float) -> int:
        """Output tokens for a window: speech runs at ~3-5 per second; the per-second budget
        plus room for the header never cuts real speech short and keeps a model that loops
        on noise from running for long."""
        options = self.options
        return int(
            min(options.max_tokens, options.token_slack + options.max_tokens_per_second * seconds)
        )

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
        pieces = [self.native.piece(t, special=False) for t in tokens]
        return output_words(pieces, probs, forced, duration, skip)


def _load_native(pair: GgufPair, options: LlamaOptions) -> NativeSpeechModel:
    """The pair loaded in llama.cpp, checked to take audio; user-facing errors otherwise."""
    try:
        native = NativeSpeechModel(
            pair.text,
            pair.mmproj,
            threads=options.threads or usable_cores(),
            n_ctx=options.n_ctx,
            n_batch=options.n_batch,
        )
    except NativeError as exc:
        raise ModelCorruptError(
            f"llama.cpp could not load {pair.text.name} with {pair.mmproj.name}: {exc}. The "
            f"files may be truncated or from a newer llama.cpp; download them again or update "
            f"desktop-rt."
        ) from exc
    if not native.supports_audio or native.sample_rate <= 0:
        native.close()
        raise ModelFormatError(
            f"{pair.mmproj.name} loaded, but llama.cpp reports no audio input for it."
        )
    return native
