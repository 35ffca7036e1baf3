"""Whisper (CTranslate2) through faster-whisper's public API, int8 on the CPU.

Call order: ``WhisperBackend(folder, options)``, ``transcribe(window)`` per window, ``close()``.
A window of at most 30 s (longer audio is taken 30 s at a time) goes: log-mel features, one
encoder pass over the window plus padding (``WhisperOptions.context``; all 30 s for a ``whole``
window), language detection when none is given, one deterministic decoding pass (temperature
0, no fallback, no conditioning on earlier windows), the no-speech skip, segments cut at
timestamp tokens and words read back (:mod:`~desktop_rt.engine.asr.whisper_segments`); an
unsure decoding whose words look written over silence gives none. Invariant: the same window,
prompt, language, task and ``whole`` always give the same words. ``task="translate"`` writes
English (multilingual models only; traits say ``can_translate``). A prompt is tokenized once
while it is among the last few distinct ones. Why it is cut down this way:
docs/design/whisper.md.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE, Word
from desktop_rt.engine.asr.backend import BackendTraits, DetectedLanguage, Task
from desktop_rt.engine.asr.ct2_folder import check_ctranslate2_dir
from desktop_rt.engine.asr.spelling import SpellingFolder
from desktop_rt.engine.asr.whisper_segments import (
    TimedSegment,
    looks_hallucinated,
    segment_words,
    split_at_timestamps,
)
from desktop_rt.errors import ModelCorruptError

if TYPE_CHECKING:
    from faster_whisper import WhisperModel
    from faster_whisper.tokenizer import Tokenizer

__all__ = ["WhisperOptions", "WhisperBackend"]

_WINDOW_SECONDS = 30  # Whisper's fixed input length


@dataclass(frozen=True)
class WhisperOptions:
    """How a Whisper model is loaded and decoded."""

    threads: int = 0  # inference threads; 0: measured on this machine (thread_choice)
    compute_type: str = "int8"  # CTranslate2 compute type
    beam_size: int = 1  # 1: greedy decoding
    device: str = "cpu"
    context: str = "fit"  # "fit": encoder sees the window plus padding; "full": always 30 s
    context_pad_seconds: float = 2.0  # "fit": padding after the window the encoder also sees
    min_context_seconds: float = 10.0  # "fit": the least the encoder sees
    # "decoding": a word's probability is how sure greedy decoding was of it, summed over the
    # spellings agreement treats as the same word (engine/asr/spelling.py); "alignment":
    # faster-whisper's, from its word-alignment pass (always so with beam search).
    word_probability: str = "decoding"
    # "decoding" probabilities only for windows up to this long (s); longer ones report
    # "alignment". None: every window.
    decoding_probability_seconds: float | None = 4.0


_PREPEND = "\"'“¿([{-"
_APPEND = "\"'.。,，!！?？:：”)]}、"
_NO_SPEECH_THRESHOLD = 0.6  # faster-whisper's defaults for skipping a silent window
_LOG_PROB_THRESHOLD = -1.0
_MAX_INITIAL_TIMESTAMP = 1.0
_TOKENS_PER_SECOND = 10.0  # bound on new tokens per window second (speech is ~5 with timestamps)
_PROMPTS_KEPT = 8  # distinct prompts whose tokens are kept (a stream and its translation: 2-4)


@dataclass(frozen=True)
class _Encoded:
    """One window through the encoder."""

    output: Any  # ctranslate2.StorageView
    frames: int  # mel frames of the window's audio (at most Whisper's 3000)
    duration: float  # seconds those frames span


class WhisperBackend:
    """An :class:`~desktop_rt.engine.asr.backend.AsrBackend` for CTranslate2 Whisper folders.

    Decoding is deterministic (temperature 0, no fallback, no conditioning on earlier windows):
    the streaming layer compares consecutive hypotheses and needs the same audio to give the
    same words.
    """

    def __init__(
        self,
        folder: Path | str,
        options: WhisperOptions = WhisperOptions(),
        name: str | None = None,
    ):
        folder = Path(folder)
        check_ctranslate2_dir(folder)
        self._name = name or folder.name
        self.options = options
        self._model: WhisperModel | None = _load_model(folder, options)
        self.detected_language: DetectedLanguage | None = None  # what the last call detected
        self._tokenizers: dict[tuple[str, Task], Tokenizer] = {}
        self._prompt_tokens: OrderedDict[str, list[int]] = OrderedDict()
        self.prompt_encodings = 0
        """Prompts tokenized so far: each distinct prompt once while it is kept."""
        self._spellings: SpellingFolder | None = None
        if self._folds_spelling:
            # ~0.1 s, here rather than in the first window, whose caption it would delay
            self._spellings = _spelling_folder(self._model)

    @property
    def name(self) -> str:
        return self._name

    @property
    def traits(self) -> BackendTraits:
        """Whisper is streamed at the engine's own pace, with no grid and no forced prefix;
        multilingual models translate to English; a turn of up to 30 s is decoded whole, and
        whole windows get the full 30 s context."""
        model = self._model
        return BackendTraits(
            can_translate=model is not None and model.model.is_multilingual,
            window_seconds=_WINDOW_SECONDS,
            whole_context=True,
        )

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
        """Transcribe (or translate) a window; audio longer than Whisper's 30 s is taken 30 s
        at a time.

        ``prefix`` is not forced (the traits say so) and is ignored. ``whole``: the encoder
        hears the full 30 s (``context = "full"``) whatever the options say."""
        if task == "translate" and not self.traits.can_translate:
            raise ValueError(f"the model '{self._name}' is English-only and cannot translate")
        limit = _WINDOW_SECONDS * SAMPLE_RATE
        if len(audio) <= limit:
            return self._transcribe_window(audio, prompt, language, task, whole)
        words: list[Word] = []
        for start in range(0, len(audio), limit):
            piece = self._transcribe_window(
                audio[start : start + limit], prompt, language, task, whole
            )
            words += [w.shifted(start / SAMPLE_RATE) for w in piece]
            prompt = "".join(w.text for w in words)[-200:] or prompt
        return words

    def close(self) -> None:
        model, self._model = self._model, None
        if model is not None:
            del model

    # -- one window -------------------------------------------------------------------------
    def _transcribe_window(
        self, audio: np.ndarray, prompt: str | None, language: str | None, task: Task, whole: bool
    ) -> list[Word]:
        """One encoder pass and one decoding pass over a window of at most 30 s."""
        model = self._model
        if model is None:
            raise RuntimeError("backend is closed")
        audio = np.ascontiguousarray(audio, dtype=np.float32)
        encoded = self._encode(model, audio, whole)
        if encoded is None:
            return []
        tokenizer = self._tokenizer(self._language(model, encoded, language), task)
        limit = self.options.decoding_probability_seconds
        folds = self._folds_spelling and (limit is None or len(audio) <= limit * SAMPLE_RATE)
        result = self._decode(model, encoded, tokenizer, prompt, folds)
        tokens = [int(t) for t in result.sequences_ids[0]]
        weak = _is_weak(result.scores[0], len(tokens))
        if weak and result.no_speech_prob > _NO_SPEECH_THRESHOLD:
            return []
        segments = _aligned_segments(model, tokenizer, encoded, tokens)
        if not segments:
            return []
        folded = (
            self._folded_probabilities(tokenizer.eot, tokens, result.logits[0]) if folds else {}
        )
        words = segment_words(segments, tokenizer.eot, tokenizer.decode, tokens, folded)
        return [] if weak and looks_hallucinated(words) else words

    def _encode(self, model: WhisperModel, audio: np.ndarray, whole: bool) -> _Encoded | None:
        """The encoder's output for the window plus padding (all 30 s for a ``whole`` window);
        None for a window with no frame."""
        from faster_whisper.audio import pad_or_trim

        features = model.feature_extractor(audio)
        content_frames = features.shape[-1] - 1
        if content_frames <= 0:
            return None
        frames = int(min(model.feature_extractor.nb_max_frames, content_frames))
        segment = pad_or_trim(features[:, :frames])
        context = None if whole else self._context_frames(len(audio))
        if context:
            segment = segment[..., :context]
        duration = float(frames * model.feature_extractor.time_per_frame)
        return _Encoded(model.encode(segment), frames, duration)

    def _language(self, model: WhisperModel, encoded: _Encoded, language: str | None) -> str:
        """``language``, else the one detected from the encoder output (kept in
        :attr:`detected_language`, which is None when the language was given)."""
        self.detected_language = None
        if language is not None:
            return language
        if not model.model.is_multilingual:
            return "en"
        token, probability = model.model.detect_language(encoded.output)[0][0]
        detected = str(token[2:-2])
        self.detected_language = (detected, float(probability))
        return detected

    def _decode(
        self,
        model: WhisperModel,
        encoded: _Encoded,
        tokenizer: Tokenizer,
        prompt: str | None,
        folds: bool,
    ) -> Any:
        """One greedy or beam pass with timestamps; CTranslate2's ``WhisperGenerationResult``.

        New tokens are bounded by the window's length, which only cuts decoder loops short."""
        from faster_whisper.transcribe import get_suppressed_tokens

        previous = self._prompt_ids(tokenizer, prompt)
        prompt_tokens = model.get_prompt(tokenizer, previous, without_timestamps=False)
        max_length = min(
            model.max_length, len(prompt_tokens) + int(_TOKENS_PER_SECOND * encoded.duration) + 16
        )
        return model.model.generate(
            encoded.output,
            [prompt_tokens],
            beam_size=self.options.beam_size,
            patience=1,
            length_penalty=1,
            repetition_penalty=1,
            no_repeat_ngram_size=0,
            max_length=max_length,
            return_scores=True,
            return_logits_vocab=folds,
            return_no_speech_prob=True,
            suppress_blank=True,
            suppress_tokens=get_suppressed_tokens(tokenizer, [-1]),
            max_initial_timestamp_index=int(round(_MAX_INITIAL_TIMESTAMP / model.time_precision)),
        )[0]

    @property
    def _folds_spelling(self) -> bool:
        return self.options.word_probability == "decoding" and self.options.beam_size == 1

    def _folded_probabilities(
        self, eot: int, tokens: list[int], step_scores: Sequence[Any]
    ) -> dict[int, float]:
        """Step index -> folded probability of the text token chosen there."""
        folder = self._spellings
        if folder is None:
            return {}
        return {
            i: folder.probability(np.asarray(step_scores[i]), t)
            for i, t in enumerate(tokens)
            if t < eot and i < len(step_scores)
        }

    def _prompt_ids(self, tokenizer: Tokenizer, prompt: str | None) -> list[int]:
        """The prompt's text tokens (the same for every language and task), tokenized once
        while it is among the last :data:`_PROMPTS_KEPT` distinct prompts."""
        text = prompt.strip() if prompt else ""
        if not text:
            return []
        cache = self._prompt_tokens
        ids = cache.get(text)
        if ids is None:
            ids = cache[text] = tokenizer.encode(" " + text)
            self.prompt_encodings += 1
            if len(cache) > _PROMPTS_KEPT:
                cache.popitem(last=False)
        else:
            cache.move_to_end(text)
        return ids

    def _tokenizer(self, language: str, task: Task) -> Tokenizer:
        from faster_whisper.tokenizer import Tokenizer

        model = self._model
        if model is None:
            raise RuntimeError("backend is closed")
        key = (language, task)
        if key not in self._tokenizers:
            self._tokenizers[key] = Tokenizer(
                model.hf_tokenizer,
                model.model.is_multilingual,
                task=task,
                language=language,
            )
        return self._tokenizers[key]

    def _context_frames(self, samples: int) -> int | None:
        """Mel frames (100 per second, an even count for the encoder's stride) to encode."""
        if self.options.context != "fit":
            return None
        seconds = max(
            samples / 16000 + self.options.context_pad_seconds, self.options.min_context_seconds
        )
        frames = 2 * int(np.ceil(seconds * 50))
        return frames if frames < 3000 else None


def _load_model(folder: Path, options: WhisperOptions) -> WhisperModel:
    try:
        from faster_whisper import WhisperModel

        from desktop_rt.engine.asr.thread_choice import measured_threads

        return WhisperModel(
            str(folder),
            device=options.device,
            compute_type=options.compute_type,
            cpu_threads=options.threads
            or measured_threads(folder, options.compute_type, options.device),
            num_workers=1,
            local_files_only=True,
        )
    except (RuntimeError, ValueError, OSError) as exc:
        raise ModelCorruptError(
            f"Could not load the Whisper model in {folder}: {exc}. The files are damaged or "
            f"not a CTranslate2 Whisper model; re-download or re-convert it."
        ) from exc


def _spelling_folder(model: WhisperModel) -> SpellingFolder:
    hf = model.hf_tokenizer
    eot = hf.token_to_id("<|endoftext|>")

    def decode(token: int) -> str:
        return str(hf.decode([token])) if token < eot else f"special{token}"

    return SpellingFolder(decode, int(hf.get_vocab_size()))


def _aligned_segments(
    model: WhisperModel, tokenizer: Tokenizer, encoded: _Encoded, tokens: list[int]
) -> list[TimedSegment]:
    """The decoded window's segments that hold text, their words aligned to the audio
    (faster-whisper's word alignment fills each one's ``words``)."""
    segments = [
        s
        for s in split_at_timestamps(
            tokens, tokenizer.timestamp_begin, model.time_precision, encoded.duration
        )
        if any(t < tokenizer.eot for t in s["tokens"])
    ]
    if segments:
        model.add_word_timestamps(
            [segments],
            tokenizer,
            encoded.output,
            encoded.frames,
            _PREPEND,
            _APPEND,
            last_speech_timestamp=0.0,
        )
    return segments


def _is_weak(score: float, n_tokens: int) -> bool:
    """Whether decoding was unsure of its text: faster-whisper's average log-probability
    test (its no-speech skip needs this and a no-speech probability over 0.6)."""
    avg_logprob = score * n_tokens / (n_tokens + 1)
    return avg_logprob <= _LOG_PROB_THRESHOLD
