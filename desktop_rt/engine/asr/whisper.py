"""Whisper (CTranslate2) through faster-whisper, int8 on the CPU.

Whisper pads every input to 30 s before the encoder, so a 3 s window costs as much as a 30 s
one; that padding is what makes re-transcribing a sliding window too slow for realtime on a
small CPU. CTranslate2's encoder accepts shorter inputs, so by default the encoder only sees the
window plus ``context_pad_seconds`` of padding, and never less than ``min_context_seconds``
(measured here: 3-5x less encoder time for typical windows). Shorter than about 8 s of context
the model starts to repeat itself or invent a trailing word; at 10 s the transcripts of the
LibriVox test sentences were identical to full-context ones. ``context="full"`` restores the
stock behaviour.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE, Word
from desktop_rt.engine.asr.backend import BackendTraits
from desktop_rt.engine.asr.ct2_folder import check_ctranslate2_dir
from desktop_rt.engine.asr.spelling import SpellingFolder, word_probabilities
from desktop_rt.errors import ModelCorruptError

__all__ = ["WhisperOptions", "WhisperBackend", "default_threads"]

_WINDOW_SECONDS = 30  # Whisper's fixed input length


def default_threads() -> int:
    """Inference threads when none are set: one core fewer than the machine has, at most four.

    The spare core is for what must never wait on the model: audio capture, the speech gate,
    the server's sockets and the window. Measured with bench/bench_streaming.py on two cores,
    one CTranslate2 thread gave the same word latency as two (median 1.34 s against 1.33 s)
    for 0.91 CPU s per audio s instead of 1.04-1.09: Whisper base's small matrices keep a
    second thread half idle. Past four threads base gains nothing measurable.
    """
    return max(1, min(4, (os.cpu_count() or 2) - 1))


@dataclass(frozen=True)
class WhisperOptions:
    threads: int = 0  # 0: default_threads()
    compute_type: str = "int8"
    beam_size: int = 1
    device: str = "cpu"
    context: str = "fit"  # "fit": encoder sees the window plus padding; "full": always 30 s
    context_pad_seconds: float = 2.0
    min_context_seconds: float = 10.0
    # "decoding": a word's probability is how sure greedy decoding was of it, summed over the
    # spellings agreement treats as the same word (see engine/backends/spelling.py);
    # "alignment": faster-whisper's, from its word-alignment pass (always so with beam search).
    word_probability: str = "decoding"
    # ...for windows up to this long; longer ones report "alignment". Scores over the whole
    # vocabulary at every step cost ~5% more CPU per pass (LibriVox stream: 24.2 against 22.9
    # CPU s), and the streaming layer reads probabilities only at a segment's onset (windows
    # under ~2.6 s). None: every window.
    decoding_probability_seconds: float | None = 4.0


_PREPEND = "\"'“¿([{-"
_APPEND = "\"'.。,，!！?？:：”)]}、"
_NO_SPEECH_THRESHOLD = 0.6  # faster-whisper's defaults for skipping a silent window
_LOG_PROB_THRESHOLD = -1.0
_MAX_INITIAL_TIMESTAMP = 1.0
_TOKENS_PER_SECOND = 10.0  # bound on new tokens per window second (speech is ~5 with timestamps)


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
        threads = options.threads or default_threads()
        try:
            from faster_whisper import WhisperModel

            self._model = WhisperModel(
                str(folder),
                device=options.device,
                compute_type=options.compute_type,
                cpu_threads=threads,
                num_workers=1,
                local_files_only=True,
            )
        except (RuntimeError, ValueError, OSError) as exc:
            raise ModelCorruptError(
                f"Could not load the Whisper model in {folder}: {exc}. The files are damaged or "
                f"not a CTranslate2 Whisper model; re-download or re-convert it."
            ) from exc
        self.detected_language: tuple[str, float] | None = (
            None  # (code, probability) of the last call
        )
        self._spellings: SpellingFolder | None = None
        if self._folds_spelling:
            hf = self._model.hf_tokenizer
            eot = hf.token_to_id("<|endoftext|>")
            # ~0.1 s, here rather than in the first window, whose caption it would delay
            self._spellings = SpellingFolder(
                lambda t: hf.decode([t]) if t < eot else f"special{t}", hf.get_vocab_size()
            )

    @property
    def name(self) -> str:
        return self._name

    @property
    def traits(self) -> BackendTraits:
        """Whisper is streamed at the engine's own pace, with no grid and no forced prefix."""
        return BackendTraits()

    def transcribe(
        self,
        audio: np.ndarray,
        *,
        prompt: str | None = None,
        language: str | None = None,
        prefix: str | None = None,
    ) -> Sequence[Word]:
        """Transcribe a window; audio longer than Whisper's 30 s is taken 30 s at a time.

        ``prefix`` is not forced (the traits say so) and is ignored."""
        limit = _WINDOW_SECONDS * SAMPLE_RATE
        if len(audio) <= limit:
            return self._transcribe_window(audio, prompt=prompt, language=language)
        words: list[Word] = []
        for start in range(0, len(audio), limit):
            piece = self._transcribe_window(
                audio[start : start + limit], prompt=prompt, language=language
            )
            words += [w.shifted(start / SAMPLE_RATE) for w in piece]
            prompt = "".join(w.text for w in words)[-200:] or prompt
        return words

    def _transcribe_window(
        self,
        audio: np.ndarray,
        *,
        prompt: str | None = None,
        language: str | None = None,
    ) -> Sequence[Word]:
        """One encoder pass and one greedy/beam decoding pass over the window.

        This is faster-whisper's ``transcribe`` (temperature 0, timestamps, word alignment,
        its no-speech skip) cut down to what a streaming window needs: the encoder runs once
        (faster-whisper encodes the window a second time to detect the language), only on the
        window plus padding, and there is no second seek pass (with word timestamps
        faster-whisper decodes the window's trailing fraction of a word again, which doubles
        the cost and invents words there). The result is word for word what faster-whisper's
        first pass gives. New tokens are bounded by the window's length, which only cuts
        decoder loops short.

        Forcing the committed words as a decoder prefix was tried and does not pay:
        CTranslate2 feeds a prefix through the decoder token by token, as costly as
        generating it.
        """
        model = self._model
        if model is None:
            raise RuntimeError("backend is closed")
        from faster_whisper.audio import pad_or_trim
        from faster_whisper.transcribe import get_suppressed_tokens

        audio = np.ascontiguousarray(audio, dtype=np.float32)
        features = model.feature_extractor(audio)
        content_frames = features.shape[-1] - 1
        if content_frames <= 0:
            return []
        segment_size = min(model.feature_extractor.nb_max_frames, content_frames)
        segment = pad_or_trim(features[:, :segment_size])
        context = self._context_frames(len(audio))
        if context:
            segment = segment[..., :context]
        encoder_output = model.encode(segment)

        self.detected_language = None
        if language is None:
            if model.model.is_multilingual:
                token, probability = model.model.detect_language(encoder_output)[0][0]
                language = token[2:-2]
                self.detected_language = (language, float(probability))
            else:
                language = "en"
        tokenizer = self._tokenizer(language)

        previous = tokenizer.encode(" " + prompt.strip()) if prompt and prompt.strip() else []
        prompt_tokens = model.get_prompt(tokenizer, previous, without_timestamps=False)
        duration = segment_size * model.feature_extractor.time_per_frame
        max_length = min(
            model.max_length, len(prompt_tokens) + int(_TOKENS_PER_SECOND * duration) + 16
        )
        limit = self.options.decoding_probability_seconds
        folds = self._folds_spelling and (limit is None or len(audio) <= limit * SAMPLE_RATE)
        result = model.model.generate(
            encoder_output,
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
        tokens = list(result.sequences_ids[0])
        avg_logprob = result.scores[0] * len(tokens) / (len(tokens) + 1)
        if result.no_speech_prob > _NO_SPEECH_THRESHOLD and avg_logprob <= _LOG_PROB_THRESHOLD:
            return []

        segments, _seek, _single = model._split_segments_by_timestamps(
            tokenizer=tokenizer,
            tokens=tokens,
            time_offset=0.0,
            segment_size=segment_size,
            segment_duration=duration,
            seek=0,
        )
        segments = [s for s in segments if any(t < tokenizer.eot for t in s["tokens"])]
        if not segments:
            return []
        model.add_word_timestamps(
            [segments],
            tokenizer,
            encoder_output,
            segment_size,
            _PREPEND,
            _APPEND,
            last_speech_timestamp=0.0,
        )
        folded = self._folded_probabilities(tokenizer, tokens, result.logits[0]) if folds else {}
        words: list[Word] = []
        cursor = 0
        for seg in segments:
            text_tokens = [t for t in seg["tokens"] if t < tokenizer.eot]
            steps = None
            if folded:
                steps, cursor = _steps_of(tokens, text_tokens, cursor)
            if seg["start"] == seg["end"] or not tokenizer.decode(seg["tokens"]).strip():
                continue
            seg_words = [w for w in seg.get("words") or () if w["word"]]
            probs: list[float | None] = [None] * len(seg_words)
            if steps is not None:
                probs = word_probabilities(
                    [w["word"] for w in seg_words],
                    [(tokenizer.decode([t]), folded[i]) for t, i in zip(text_tokens, steps)],
                )
            for w, p in zip(seg_words, probs):
                if w["word"].strip():
                    prob = float(w["probability"]) if p is None else p
                    words.append(Word(w["word"], float(w["start"]), float(w["end"]), prob))
        return words

    @property
    def _folds_spelling(self) -> bool:
        return self.options.word_probability == "decoding" and self.options.beam_size == 1

    def _folded_probabilities(self, tokenizer, tokens: list[int], step_scores) -> dict[int, float]:
        """Step index -> folded probability of the text token chosen there."""
        folder = self._spellings
        if folder is None:
            return {}
        return {
            i: folder.probability(np.asarray(step_scores[i]), t)
            for i, t in enumerate(tokens)
            if t < tokenizer.eot and i < len(step_scores)
        }

    def _tokenizer(self, language: str):
        from faster_whisper.tokenizer import Tokenizer

        cache = self.__dict__.setdefault("_tokenizers", {})
        if language not in cache:
            cache[language] = Tokenizer(
                self._model.hf_tokenizer,
                self._model.model.is_multilingual,
                task="transcribe",
                language=language,
            )
        return cache[language]

    def _context_frames(self, samples: int) -> int | None:
        """Mel frames (100 per second, an even count for the encoder's stride) to encode."""
        if self.options.context != "fit":
            return None
        seconds = max(
            samples / 16000 + self.options.context_pad_seconds, self.options.min_context_seconds
        )
        frames = 2 * int(np.ceil(seconds * 50))
        return frames if frames < 3000 else None

    def close(self) -> None:
        model, self._model = self._model, None
        if model is not None:
            del model


def _steps_of(sequence: list[int], run: list[int], cursor: int) -> tuple[list[int] | None, int]:
    """Where ``run`` occurs contiguously in ``sequence`` at or after ``cursor``: its step indices."""
    n = len(run)
    for start in range(cursor, len(sequence) - n + 1):
        if sequence[start : start + n] == run:
            return list(range(start, start + n)), start + n
    return None, cursor
