"""One session's place in the inference worker: :class:`WorkerStream` and its command queue.

``submit`` and ``close`` are thread-safe (they go through the worker's lock); the rest is the
worker's, called under its lock. ``lag_seconds`` is the audio queued and not yet taken in by
the transcriber: how far the stream's captions are behind what it sent; ``ahead_seconds`` is
how much more audio it sent over a recent span than that span lasted (a stream at real time
is never ahead, however far behind the worker is). While a flushed item waits for its
whole-turn decode (``_decode``), turns take only audio: the next flush, clear or configure
waits for that decode (:mod:`.worker_decodes`).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING

from desktop_rt.core_types import SAMPLE_RATE, Word
from desktop_rt.engine.asr.worker_decodes import PendingDecode
from desktop_rt.engine.asr.worker_results import (
    FailedResult,
    FlushedResult,
    ResultCallback,
    Transcriber,
    WorkerResult,
)
from desktop_rt.engine.protocol.events import AudioChunk, Clear, Command, Flush

if TYPE_CHECKING:
    from desktop_rt.engine.asr.worker import InferenceWorker

__all__ = ["WorkerStream"]


class WorkerStream:
    """One session's place in the worker. ``submit`` and ``close`` are thread-safe."""

    def __init__(
        self,
        worker: InferenceWorker,
        transcriber: Transcriber,
        on_result: ResultCallback,
        name: str,
    ):
        self._worker = worker
        self._transcriber: Transcriber | None = transcriber
        self._on_result = on_result
        self.name = name
        self._pending: deque[Command] = deque()
        self._pending_samples = 0  # audio samples in _pending
        self._delivering = threading.RLock()  # close() waits for a delivery in progress
        self._item_id: str | None = None
        self._tentative: tuple[Word, ...] = ()
        self._dropped = 0  # samples of cleared audio dropped from the queue, reported at the Clear
        self.closed = False
        self._arrivals: deque[tuple[float, int]] = deque()  # (time, samples) of recent audio
        self._arrived = 0  # samples in _arrivals
        self._opened_at: float | None = None  # when its first command came (worker clock)
        self.flooding = False
        """Set by the worker while the stream is a flood (docs/design/streaming.md, *Governor*)."""
        self.passes = 0
        """Recognizer passes (``process``/``finish`` calls) run for this stream: diagnostics."""
        self._decode: PendingDecode | None = None  # a flushed item waiting to be decoded whole
        self._last_pass: float | None = None  # when its latest model pass began (worker clock)
        self._turn_samples = 0  # audio taken in since its last flush or clear
        self._flushed_samples = 0  # audio of the item its latest flush ended

    def submit(self, commands: Iterable[Command]) -> None:
        """Queue session commands (``AudioChunk``, ``Flush``, ``Clear``, ``Configure``) in order."""
        self._worker._submit(self, list(commands))

    def close(self) -> None:
        """Leave the worker now: pending commands are dropped, no result is delivered after this."""
        self._worker._close(self)

    @property
    def has_work(self) -> bool:
        """Commands queued, or a flushed item waiting to be decoded whole."""
        return bool(self._pending) or self._decode is not None

    @property
    def lag_seconds(self) -> float:
        """Seconds of audio sent and waiting for the transcriber (read from any thread)."""
        return self._pending_samples / SAMPLE_RATE

    # ---- the queue (under the worker's lock) ------------------------------------------------

    def _queue(self, commands: Iterable[Command], now: float) -> None:
        if self._opened_at is None:
            self._opened_at = now
        for command in commands:
            if isinstance(command, Clear):
                self._drop_cleared(command.item_id)
            elif isinstance(command, AudioChunk):
                self._pending_samples += len(command.samples)
                self._arrivals.append((now, len(command.samples)))
                self._arrived += len(command.samples)
            self._pending.append(command)

    def ahead_seconds(self, now: float, span: float) -> float:
        """Audio seconds sent within the last ``span`` seconds (since the stream began, if
        later) beyond that time: 0 at real time, large for a client sending faster."""
        while self._arrivals and self._arrivals[0][0] < now - span:
            self._arrived -= self._arrivals.popleft()[1]
        if self._opened_at is None:
            return 0.0
        return self._arrived / SAMPLE_RATE - (now - max(self._opened_at, now - span))

    def _drop_cleared(self, item_id: str) -> None:
        """A Clear makes the item's queued audio moot: drop it now instead of transcribing it."""
        kept: deque[Command] = deque()
        for queued in self._pending:
            if isinstance(queued, AudioChunk) and queued.item_id == item_id:
                self._dropped += len(queued.samples)
                self._pending_samples -= len(queued.samples)
            else:
                kept.append(queued)
        self._pending = kept

    def _drop_all(self) -> None:
        self._pending.clear()
        self._pending_samples = 0
        self._decode = None

    def _settle(
        self, results: list[WorkerResult], item: str | None, now: float, max_wait: float
    ) -> list[WorkerResult]:
        """After a turn: the ``item`` its flush left to decode becomes the pending decode (it
        may wait its turn's length, at most ``max_wait``); a turn that failed while one was
        pending answers that flush first, undecoded (the failure dropped the stream's audio),
        so the session hears of the failure after it. Returns the results to deliver."""
        if item is not None:
            wait = min(self._flushed_samples / SAMPLE_RATE, max_wait)
            self._decode = PendingDecode(item, now, wait)
        elif self._decode and any(isinstance(r, FailedResult) for r in results):
            answered = FlushedResult(self._decode.item_id, ())
            self._decode = None
            return [answered, *results]
        return results

    @property
    def _can_pass(self) -> bool:
        """Whether it has a turn to take now: commands queued, and while a decode is pending,
        audio first."""
        if not self._pending:
            return False
        return self._decode is None or isinstance(self._pending[0], AudioChunk)

    def _take_turn(self, max_samples: int) -> list[Command]:
        """Commands up to the first flush, with at most ``max_samples`` of audio (at least one
        command; a chunk longer than what is left is split, its rest staying first in the
        queue); only audio while a decode is pending."""
        budget = max(1, max_samples)
        taken: list[Command] = []
        pending = self._pending
        while pending:
            command = pending[0]
            if isinstance(command, AudioChunk):
                if budget <= 0:
                    break
                if len(command.samples) > budget:
                    rest = AudioChunk(command.item_id, command.samples[budget:])
                    command = AudioChunk(command.item_id, command.samples[:budget])
                    pending[0] = rest
                    pending.appendleft(command)
                budget -= len(command.samples)
                self._pending_samples -= len(command.samples)
                self._turn_samples += len(command.samples)
            elif self._decode is not None:
                break
            taken.append(pending.popleft())
            if isinstance(command, Clear):
                self._turn_samples = 0
            elif isinstance(command, Flush):
                self._flushed_samples, self._turn_samples = self._turn_samples, 0
                break
        return taken

    def __repr__(self) -> str:
        return f"<WorkerStream {self.name} pending={len(self._pending)} closed={self.closed}>"
