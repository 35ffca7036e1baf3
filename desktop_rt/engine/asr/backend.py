"""The contract every speech backend fulfils, and the traits it declares.

A backend turns one window of 16 kHz mono float32 audio into timed words. It keeps no state
between calls that changes the result (the streaming layer owns all streaming state), so the
same window, prompt and prefix always give the same words. How the streaming engine should
drive it (update pace, block grid, forced prefix) and whether it can translate are declared
once in :attr:`AsrBackend.traits`; nobody probes a backend for optional attributes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

import numpy as np

from desktop_rt.core_types import Word

__all__ = ["AsrBackend", "BackendTraits", "DetectedLanguage", "Task"]

DetectedLanguage = tuple[str, float]
"""A language a backend detected: ``(ISO code, probability)``."""

Task = Literal["transcribe", "translate"]
"""What a backend writes: the speech's own words, or their English translation."""


@dataclass(frozen=True, slots=True)
class BackendTraits:
    """How a backend wants to be streamed.

    - ``min_update_seconds``: the least new audio worth a streaming update (0: as often as the
      streaming engine likes).
    - ``update_grid_seconds``: the backend encodes a window in blocks this long from its start
      and keeps the ones it encoded; streaming then hears whole blocks (``None``: no grid).
    - ``forces_prefix``: ``transcribe(prefix=...)`` prefills that text as the start of its
      output and returns only the words after it.
    - ``can_translate``: ``transcribe(task="translate")`` writes the speech in English
      (Whisper's translate task); a backend without it is never given that task.
    - ``window_seconds``: the most audio one ``transcribe`` call hears as one window (Whisper:
      30 s); a turn that fits is decoded whole when it ends (``None``: turns are not).
    - ``whole_context``: ``transcribe(whole=True)`` hears a window decoded once, whole (a
      file's window, an ended turn), with the full context the model was trained on (Whisper:
      30 s) where streaming passes get a cheaper one; a backend without it is never given
      ``whole``.
    """

    min_update_seconds: float = 0.0
    update_grid_seconds: float | None = None
    forces_prefix: bool = False
    can_translate: bool = False
    window_seconds: float | None = None
    whole_context: bool = False


@runtime_checkable
class AsrBackend(Protocol):
    """Transcribes a window of audio into words with times and probabilities."""

    @property
    def name(self) -> str:
        """Model id shown to users and clients."""

    @property
    def traits(self) -> BackendTraits:
        """How the streaming engine should drive this backend."""

    @property
    def detected_language(self) -> DetectedLanguage | None:
        """What the last ``transcribe`` given no language detected, or ``None``."""

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
        """Transcribe ``audio`` (float32, mono, 16 kHz) and return its words in order.

        ``prompt`` is text that came just before the window (it conditions spelling and
        style); ``language`` is an ISO code or ``None`` to detect it. ``prefix`` is text the
        window's speech starts with; only a backend whose traits say ``forces_prefix`` is given
        one, and it returns only the words after it. ``task="translate"`` (only for a backend
        whose traits say ``can_translate``): the words are the speech translated to English;
        ``language`` is still the language spoken. ``whole=True`` (only for a backend whose
        traits say ``whole_context``): the window is decoded once, whole, not re-heard as a
        stream grows.
        """

    def close(self) -> None:
        """Free the model. The backend is unusable afterwards."""
