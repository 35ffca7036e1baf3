"""The one thread that runs inference, for every open session, fairly.

Sessions never call the model: each gets a :class:`WorkerStream` from
:meth:`InferenceWorker.open_stream` and submits the commands its session drains (audio chunks,
flushes, clears, configuration); the worker thread applies them in order to the stream's own
transcriber and hands results to the stream's ``on_result``, called **on the worker thread**.
Call order: ``start()``, then ``open_stream()`` / ``submit()`` / ``close()`` from any thread,
then ``stop()``. Invariants: round-robin, at most one inference per stream per round; a closed
stream's pending commands are dropped at once and none of its results is delivered afterwards.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE, Word
from desktop_rt.engine.asr.agreement import StreamUpdate
from desktop_rt.engine.protocol.events import AudioChunk, Clear, Command, Configure, Flush

__all__ = [
    "Transcriber",
    "TranscriberFactory",
    "WordsResult",
    "FlushedResult",
    "ConsumedResult",
    "FailedResult",
    "WorkerResult",
    "WorkerConfig",
    "WorkerStream",
    "InferenceWorker",
    "WorkerStoppedError",
]

log = logging.getLogger(__name__)


class Transcriber(Protocol):
    """What the worker needs of a streaming transcriber (``engine.asr.streaming``)."""

    def insert_audio(self, samples: np.ndarray) -> None: ...

    def process(self) -> StreamUpdate: ...

    def finish(self) -> StreamUpdate: ...

    def clear(self) -> None: ...

    def set_language(self, language: str | None) -> None: ...

    def set_prompt(self, prompt: str | None) -> None: ...


TranscriberFactory = Callable[[], Transcriber]


@dataclass(frozen=True, slots=True)
class WordsResult:
    """Words that became final (new since the last result) and the whole tentative tail."""

    item_id: str
    committed: tuple[Word, ...]
    tentative: tuple[Word, ...]


@dataclass(frozen=True, slots=True)
class FlushedResult:
    """The answer to a ``Flush``: every word still held back, now committed."""

    item_id: str
    committed: tuple[Word, ...]


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


@dataclass(frozen=True)
class WorkerConfig:
    max_turn_seconds: float = 8.0
    """Audio inserted into one stream per turn at most; the rest waits for its next turn."""


class WorkerStoppedError(RuntimeError):
    """The worker was stopped (or never started); it takes no new streams."""


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
        self._delivering = threading.RLock()  # close() waits for a delivery in progress
        self._item_id: str | None = None
        self._tentative: tuple[Word, ...] = ()
        self._dropped = 0  # samples of cleared audio dropped from the queue, reported at the Clear
        self.closed = False
        self.passes = 0
        """Recognizer passes (``process``/``finish`` calls) run for this stream: diagnostics."""

    def submit(self, commands: Iterable[Command]) -> None:
        """Queue session commands (``AudioChunk``, ``Flush``, ``Clear``, ``Configure``) in order."""
        self._worker._submit(self, list(commands))

    def close(self) -> None:
        """Leave the worker now: pending commands are dropped, no result is delivered after this."""
        self._worker._close(self)

    @property
    def has_work(self) -> bool:
        return bool(self._pending)

    def __repr__(self) -> str:
        return f"<WorkerStream {self.name} pending={len(self._pending)} closed={self.closed}>"


class InferenceWorker:
    """Owns inference for all sessions on one thread.

    A turn takes one stream's pending commands up to and including the first flush, inserts at
    most ``max_turn_seconds`` of audio, then runs one inference (the flush's ``finish()``, or
    ``process()`` when audio arrived): a stream that floods audio or holds a long item gets its
    turn like the others, and a stream opened later is served within one round. The thread
    sleeps on a condition while no stream has work; nothing polls. Results are delivered on
    this thread: an asyncio owner hops to its loop with ``loop.call_soon_threadsafe``.
    """

    def __init__(
        self,
        transcriber_factory: TranscriberFactory,
        config: WorkerConfig = WorkerConfig(),
        *,
        name: str = "desktop-rt-inference",
    ):
        self._factory = transcriber_factory
        self.config = config
        self._name = name
        self._cond = threading.Condition()
        self._ring: deque[WorkerStream] = deque()
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._opened = 0

    # ---- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        with self._cond:
            if self._thread is not None:
                raise RuntimeError("the inference worker is already started")
            self._stopping = False
            self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
            self._thread.start()

    def stop(self, timeout: float | None = None) -> None:
        """Drop every stream and end the thread; an inference in progress finishes first."""
        with self._cond:
            self._stopping = True
            for stream in self._ring:
                stream.closed = True
                stream._pending.clear()
            self._ring.clear()
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive() and not self._stopping

    # ---- streams ---------------------------------------------------------------------------

    def open_stream(
        self, on_result: ResultCallback, transcriber: Transcriber | None = None
    ) -> WorkerStream:
        """A new stream with its own (or the given) transcriber; ``on_result``: worker thread."""
        transcriber = self._factory() if transcriber is None else transcriber
        with self._cond:
            if self._stopping or self._thread is None:
                raise WorkerStoppedError("the inference worker is not running")
            self._opened += 1
            stream = WorkerStream(self, transcriber, on_result, f"stream-{self._opened}")
            self._ring.append(stream)
            self._cond.notify_all()
        return stream

    @property
    def stream_count(self) -> int:
        with self._cond:
            return len(self._ring)

    def wait_for_stream_count(self, count: int, timeout: float | None = None) -> bool:
        """Block until exactly ``count`` streams are open; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: len(self._ring) == count, timeout)

    def _submit(self, stream: WorkerStream, commands: list[Command]) -> None:
        if not commands:
            return
        with self._cond:
            if stream.closed:
                return
            for command in commands:
                if isinstance(command, Clear):
                    self._drop_cleared(stream, command.item_id)
                stream._pending.append(command)
            self._cond.notify_all()

    @staticmethod
    def _drop_cleared(stream: WorkerStream, item_id: str) -> None:
        """A Clear makes the item's queued audio moot: drop it now instead of transcribing it."""
        kept: deque[Command] = deque()
        for queued in stream._pending:
            if isinstance(queued, AudioChunk) and queued.item_id == item_id:
                stream._dropped += len(queued.samples)
            else:
                kept.append(queued)
        stream._pending = kept

    def _close(self, stream: WorkerStream) -> None:
        with self._cond:
            if stream.closed:
                return
            stream.closed = True
            stream._pending.clear()
            with contextlib.suppress(ValueError):
                self._ring.remove(stream)
            # the worker drops its own reference after a running inference; free the rest now
            stream._transcriber = None
            self._cond.notify_all()
        with stream._delivering:
            pass  # a result being delivered right now completes before close() returns

    # ---- the thread ------------------------------------------------------------------------

    def _next_turn(self) -> tuple[WorkerStream, Transcriber, list[Command]] | None:
        """Wait for a stream with work and take its turn's commands; None when stopping."""
        with self._cond:
            while True:
                if self._stopping:
                    return None
                for _ in range(len(self._ring)):
                    stream = self._ring[0]
                    self._ring.rotate(-1)  # it goes to the back: one turn per round
                    if stream._pending and stream._transcriber is not None:
                        return stream, stream._transcriber, self._take_turn(stream)
                self._cond.wait()

    def _take_turn(self, stream: WorkerStream) -> list[Command]:
        """Commands up to the first flush, with at most ``max_turn_seconds`` of audio."""
        budget = int(self.config.max_turn_seconds * SAMPLE_RATE)
        taken: list[Command] = []
        pending = stream._pending
        while pending:
            command = pending[0]
            if isinstance(command, AudioChunk):
                if budget <= 0 and taken:
                    break
                budget -= len(command.samples)
            taken.append(pending.popleft())
            if isinstance(command, Flush):
                break
        return taken

    def _run(self) -> None:
        while True:
            turn = self._next_turn()
            if turn is None:
                return
            stream, transcriber, commands = turn
            for result in self._apply(stream, transcriber, commands):
                self._deliver(stream, result)
            # the closed stream's transcriber (and its audio) goes with this frame

    def _deliver(self, stream: WorkerStream, result: WorkerResult) -> None:
        with stream._delivering:
            if stream.closed:
                return
            try:
                stream._on_result(result)
            except Exception:  # a broken callback must not kill the thread every session shares
                log.exception("result callback of %s failed", stream.name)

    def _apply(
        self, stream: WorkerStream, transcriber: Transcriber, commands: Sequence[Command]
    ) -> list[WorkerResult]:
        """Run one turn. Every Flush is answered, with no words if the inference failed."""
        results: list[WorkerResult] = []
        turn = _Turn()
        try:
            self._feed(stream, transcriber, commands, turn)
            if turn.inserted:
                results.append(ConsumedResult(turn.inserted / SAMPLE_RATE))
                turn.inserted = 0
            result = self._infer(stream, transcriber, turn)
            if result is not None:
                results.append(result)
        except Exception as exc:
            log.exception("%s: inference failed", stream.name)
            results += self._recover(stream, transcriber, turn, exc)
        return results

    @staticmethod
    def _feed(
        stream: WorkerStream, transcriber: Transcriber, commands: Sequence[Command], turn: _Turn
    ) -> None:
        """Apply the turn's commands up to inference, noting what they did in ``turn``."""
        for command in commands:
            if isinstance(command, AudioChunk):
                stream._item_id = command.item_id
                transcriber.insert_audio(command.samples)
                turn.inserted += len(command.samples)
                turn.had_audio = True
            elif isinstance(command, Flush):
                turn.flush = command  # always the turn's last command
            elif isinstance(command, Clear):
                transcriber.clear()
                stream._tentative = ()
                turn.inserted += stream._dropped  # reported as consumed: off the queue
                stream._dropped = 0
            elif isinstance(command, Configure):
                transcriber.set_language(command.language)
                transcriber.set_prompt(command.prompt)
            else:
                log.warning("%s: unknown command %r ignored", stream.name, command)

    @staticmethod
    def _infer(stream: WorkerStream, transcriber: Transcriber, turn: _Turn) -> WorkerResult | None:
        """The turn's one inference: the flush's ``finish()``, or ``process()`` after audio."""
        if turn.flush is not None:
            stream.passes += 1
            update = transcriber.finish()
            stream._tentative = ()
            return FlushedResult(turn.flush.item_id, tuple(update.committed))
        if turn.had_audio:  # one pass over the new audio
            stream.passes += 1
            update = transcriber.process()
            committed, tentative = tuple(update.committed), tuple(update.tentative)
            if committed or tentative != stream._tentative:
                stream._tentative = tentative
                return WordsResult(stream._item_id or "", committed, tentative)
        return None

    @staticmethod
    def _recover(
        stream: WorkerStream, transcriber: Transcriber, turn: _Turn, exc: Exception
    ) -> list[WorkerResult]:
        """After a failed turn: report it, drop the stream's audio, answer its flush."""
        results: list[WorkerResult] = []
        if turn.inserted:
            results.append(ConsumedResult(turn.inserted / SAMPLE_RATE))
        stream._tentative = ()
        try:
            transcriber.clear()
        except Exception:
            log.exception("%s: clearing after a failure failed", stream.name)
        results.append(FailedResult(str(exc) or type(exc).__name__))
        if turn.flush is not None:
            results.append(FlushedResult(turn.flush.item_id, ()))
        return results


@dataclass
class _Turn:
    """What one turn's commands did, kept up to date so a failure midway can report it."""

    inserted: int = 0  # samples taken off the queue this turn and not yet reported consumed
    had_audio: bool = False
    flush: Flush | None = None
