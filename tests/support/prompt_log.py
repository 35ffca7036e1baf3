"""A real backend whose every pass's prompt is written down: :class:`PromptLog`.

It runs the backend it wraps unchanged (same traits, same words) and keeps each pass's
``prompt`` in ``prompts``, so a test sees what the real model was prompted with.
"""

from __future__ import annotations

from desktop_rt.engine.asr.backend import AsrBackend, DetectedLanguage

__all__ = ["PromptLog"]


class PromptLog:
    """See the module docstring."""

    def __init__(self, backend: AsrBackend):
        self.backend = backend
        self.name = backend.name
        self.traits = backend.traits
        self.prompts: list[str | None] = []

    @property
    def detected_language(self) -> DetectedLanguage | None:
        return self.backend.detected_language

    def transcribe(self, audio, *, prompt=None, **options):
        self.prompts.append(prompt)
        return self.backend.transcribe(audio, prompt=prompt, **options)

    def close(self) -> None:
        pass  # the wrapped backend is its owner's to close
