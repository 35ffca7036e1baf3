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
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from desktop_rt.engine.backends.base import Word
from desktop_rt.engine.models import check_ctranslate2_dir
from desktop_rt.errors import ModelCorruptError

__all__ = ["WhisperOptions", "WhisperBackend"]


@dataclass(frozen=True)
class WhisperOptions:
    threads: int = 0  # 0: one per core
    compute_type: str = "int8"
    beam_size: int = 1
    device: str = "cpu"
    context: str = "fit"  # "fit": encoder sees the window plus padding; "full": always 30 s
    context_pad_seconds: float = 2.0
    min_context_seconds: float = 10.0


class _OnePassDone(Exception):
    """Raised inside faster-whisper to stop its seek loop after the first decoding pass."""


def _short_context_model_class():
    from faster_whisper import WhisperModel

    class ShortContextWhisperModel(WhisperModel):
        """faster-whisper's model, with a shorter encoder input and one decoding pass.

        Encoding only the first ``context_frames`` mel frames skips the 30 s padding. With
        word timestamps, faster-whisper seeks to the last word's end and decodes the rest of
        the window again; for a streaming window (always under 30 s) that second pass only
        re-reads the trailing fraction of a word or silence, doubling the cost and inventing
        words there. ``passes`` counts decoding passes so the caller can stop after one.
        """

        context_frames: int | None = None
        passes: int = 0

        def encode(self, features):
            if self.passes:
                raise _OnePassDone
            if self.context_frames:
                features = features[..., : self.context_frames]
            return super().encode(features)

        def generate_with_fallback(self, *args, **kwargs):
            if self.passes:
                raise _OnePassDone
            self.passes += 1
            return super().generate_with_fallback(*args, **kwargs)

    return ShortContextWhisperModel


class WhisperBackend:
    """An :class:`~desktop_rt.engine.backends.base.AsrBackend` for CTranslate2 Whisper folders.

    Decoding is deterministic (temperature 0, no fallback, no conditioning on earlier windows):
    the streaming layer compares consecutive hypotheses and needs the same audio to give the
    same words.
    """

    def __init__(self, folder: Path | str, options: WhisperOptions = WhisperOptions(), name: str | None = None):
        folder = Path(folder)
        check_ctranslate2_dir(folder)
        self._name = name or folder.name
        self.options = options
        threads = options.threads or os.cpu_count() or 1
        try:
            self._model = _short_context_model_class()(
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

    @property
    def name(self) -> str:
        return self._name

    def transcribe(
        self,
        audio: np.ndarray,
        *,
        prompt: str | None = None,
        language: str | None = None,
    ) -> Sequence[Word]:
        if self._model is None:
            raise RuntimeError("backend is closed")
        audio = np.ascontiguousarray(audio, dtype=np.float32)
        self._model.context_frames = self._context_frames(len(audio))
        self._model.passes = 0
        segments, _info = self._model.transcribe(
            audio,
            language=language,
            initial_prompt=prompt or None,
            word_timestamps=True,
            beam_size=self.options.beam_size,
            best_of=1,
            temperature=0.0,
            condition_on_previous_text=False,
            vad_filter=False,
            without_timestamps=False,
        )
        words: list[Word] = []
        try:
            for segment in segments:
                for w in segment.words or ():
                    if w.word.strip():
                        words.append(Word(w.word, float(w.start), float(w.end), float(w.probability)))
        except _OnePassDone:
            pass
        return words

    def _context_frames(self, samples: int) -> int | None:
        """Mel frames (100 per second, an even count for the encoder's stride) to encode."""
        if self.options.context != "fit":
            return None
        seconds = max(samples / 16000 + self.options.context_pad_seconds, self.options.min_context_seconds)
        frames = 2 * int(np.ceil(seconds * 50))
        return frames if frames < 3000 else None

    def close(self) -> None:
        model, self._model = self._model, None
        if model is not None:
            del model
