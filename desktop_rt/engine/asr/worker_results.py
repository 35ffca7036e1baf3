"""What the inference worker runs and what it hands back: the :class:`Transcriber` it drives
and the results it delivers to a stream's ``on_result`` (on the worker thread)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.agreement import StreamUpdate
from desktop_rt.engine.protocol.events import Respelling

__all__ = [
    "Transcriber",
    "TranscriberFactory",
    "WordsResult",
    "FlushedResult",
    "ConsumedResult",
    "FailedResult",
    "WorkerResult",
    "ResultCallback",
]


class Transcriber(Protocol):
    """What the worker needs of a streaming transcriber (``engine.asr.streaming``)."""

    def insert_audio(self, samples: np.ndarray) -> None: ...

    def process(self) -> StreamUpdate: ...

    def finish(self) -> StreamUpdate: ...

    def clear(self) -> None: ...

    @property
    def room_seconds(self) -> float:
        """Audio to insert at most before the next ``process`` (a turn takes no more)."""

    @property
    def turn_to_decode(self) -> bool:
        """Whether the turn ``finish`` just ended is to be decoded whole."""

    def decode_turn(self) -> tuple[Word, ...] | None:
        """That turn decoded whole (its completed transcript); ``None``: not decoded."""

    def set_language(self, language: str | None) -> None: ...

    def set_prompt(self, prompt: str | None, respellings: tuple[Respelling, ...] = ()) -> None:
        """The user's prompt, and the spellings the committed text it is joined with takes."""


TranscriberFactory = Callable[[], Transcriber]


@dataclass(frozen=True, slots=True)
class WordsResult:
    """Words that became final (new since the last result) and the whole tentative tail."""

    item_id: str
    committed: tuple[Word, ...]
    tentative: tuple[Word, ...]


@dataclass(frozen=True, slots=True)
class FlushedResult:
    """The answer to a ``Flush``: every word still held back, now committed; ``final``: the
    item decoded whole (its completed transcript), ``None`` when it was not."""

    item_id: str
    committed: tuple[Word, ...]
    final: tuple[Word, ...] | None = None


@dataclass(frozen=True, slots=True)
class ConsumedResult:
    """The worker took this many seconds of the stream's audio (flood control)."""

    seconds: float


@dataclass(frozen=True, slots=True)
class FailedResult:
    """Inference failed; the stream's buffered audio was dropped and it goes on."""

    message: str


WorkerResult = WordsResult | FlushedResult | ConsumedResult | FailedResult
ResultCallback = Callable[[WorkerResult], None]
