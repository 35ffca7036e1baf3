"""The contract every speech backend fulfils.

A backend turns one window of 16 kHz mono float32 audio into timed words. It keeps no state
between calls that changes the result (the streaming layer owns all streaming state), so the
same window and prompt always give the same words.
"""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from desktop_rt.core_types import Word

__all__ = ["AsrBackend"]

@runtime_checkable
class AsrBackend(Protocol):
    """Transcribes a window of audio into words with times and probabilities."""

    @property
    def name(self) -> str:
        """Model id shown to users and clients."""

    def transcribe(
        self,
        audio: np.ndarray,
        *,
        prompt: str | None = None,
        language: str | None = None,
    ) -> Sequence[Word]:
        """Transcribe ``audio`` (float32, mono, 16 kHz) and return its words in order.

        ``prompt`` is text that came just before the window (it conditions spelling and
        style); ``language`` is an ISO code or ``None`` to detect it.
        """

    def close(self) -> None:
        """Free the model. The backend is unusable afterwards."""

    # Optional: ``min_update_seconds`` (float), the least new audio worth a streaming update on
    # this backend; StreamingTranscriber waits for at least that much. ``update_grid_seconds``
    # (float or None): the backend encodes a window in blocks this long from its start and keeps
    # the ones it encoded; StreamingTranscriber then hears whole blocks. ``detected_language``
    # (``(code, probability)`` or None): what the last ``transcribe`` detected when it was
    # given no language; StreamingTranscriber then passes it on instead of detecting again.
