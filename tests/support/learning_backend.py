"""A speech backend that writes a fixed line and spells a word as its prompt does, as Whisper does.

:class:`LearningBackend` hears ``line``'s words at fixed places of every window (word ``i`` from
``0.3 + 0.6 i`` s for 0.45 s; a window too short for a word does not hear it); a word of
``misspelt`` is written wrong (``"Dashwood"`` as ``"Dashwud"``) unless the pass's prompt holds
its right spelling. With ``copies_context`` it spells such a word as the prompt's spelling of
it nearest the prompt's end does, right or wrong, as Whisper copies the nearer context (a keyword
before committed text that spells the word the old way loses). ``prompts`` records every pass's
prompt (any thread may read it), so a test sees what reached the backend and when.
"""

from __future__ import annotations

import threading

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE, Word
from desktop_rt.engine.asr.backend import BackendTraits

__all__ = ["LearningBackend"]


class LearningBackend:
    """See the module docstring."""

    name = "learning"
    traits = BackendTraits()
    detected_language = None

    def __init__(self, line: str, misspelt: dict[str, str], copies_context: bool = False):
        self.line = line.split()
        self.misspelt = misspelt  # right spelling -> the one written without a prompt
        self.copies_context = copies_context
        self.prompts: list[str | None] = []
        self._lock = threading.Lock()

    def transcribe(self, audio: np.ndarray, *, prompt=None, language=None, prefix=None, **_):
        with self._lock:
            self.prompts.append(prompt)
        seconds = len(audio) / SAMPLE_RATE
        words = []
        for i, word in enumerate(self.line):
            start = 0.3 + 0.6 * i
            if start + 0.45 > seconds:
                break
            if word in self.misspelt:
                word = self._spelling(word, prompt or "")
            words.append(Word(" " + word, start, start + 0.45, 0.9))
        return words

    def _spelling(self, right: str, prompt: str) -> str:
        wrong = self.misspelt[right]
        if self.copies_context:
            return right if prompt.rfind(right) > prompt.rfind(wrong) else wrong
        return right if right in prompt else wrong

    def prompts_seen(self) -> list[str | None]:
        with self._lock:
            return list(self.prompts)

    def close(self) -> None:
        pass
