"""A backend's English translation, seen as a backend of its own: :class:`EnglishTranslation`.

``EnglishTranslation(backend)`` is an :class:`~desktop_rt.engine.asr.backend.AsrBackend` whose
``transcribe`` asks ``backend`` for ``task="translate"``; it shares the model (nothing is loaded
twice) and never closes it. Anything that drives a backend (streaming, whole files, the worker)
then translates unchanged. Only a backend whose traits say ``can_translate`` can be wrapped:
any other raises :class:`TranslationUnsupportedError`. Why: docs/design/translation.md.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.backend import AsrBackend, BackendTraits, DetectedLanguage, Task
from desktop_rt.errors import DesktopRtError

__all__ = ["EnglishTranslation", "TranslationUnsupportedError"]


class TranslationUnsupportedError(DesktopRtError, ValueError):
    """The model cannot translate (its backend's traits say so)."""

    def __init__(self, model: str):
        super().__init__(
            f"The model '{model}' cannot translate speech to English; use a multilingual "
            f"Whisper model (English-only Whisper models and GGUF models do not translate)."
        )
        self.model = model


class EnglishTranslation:
    """``backend``'s words in English (see the module docstring)."""

    def __init__(self, backend: AsrBackend):
        if not backend.traits.can_translate:
            raise TranslationUnsupportedError(backend.name)
        self._backend = backend

    @property
    def name(self) -> str:
        return self._backend.name

    @property
    def traits(self) -> BackendTraits:
        return self._backend.traits

    @property
    def detected_language(self) -> DetectedLanguage | None:
        """The language spoken, as the wrapped backend detected it."""
        return self._backend.detected_language

    def transcribe(
        self,
        audio: np.ndarray,
        *,
        prompt: str | None = None,
        language: str | None = None,
        prefix: str | None = None,
        task: Task = "translate",
        whole: bool = False,
    ) -> Sequence[Word]:
        """The window's speech in English, whatever ``task`` says (this view only translates)."""
        if whole:  # as the traits are the wrapped backend's, it takes ``whole``
            return self._backend.transcribe(
                audio, prompt=prompt, language=language, prefix=prefix, task="translate", whole=True
            )
        return self._backend.transcribe(
            audio, prompt=prompt, language=language, prefix=prefix, task="translate"
        )

    def close(self) -> None:
        """Nothing: the wrapped backend belongs to its owner."""
