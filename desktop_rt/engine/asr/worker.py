"""The one thread that runs inference, for every open session, fairly and within a CPU budget.

Sessions never call the model: each gets a :class:`WorkerStream` from
:meth:`InferenceWorker.open_stream` and submits the commands its session drains (audio chunks,
flushes, clears, configuration); the worker thread applies them in order to the stream's own
transcriber (:func:`~desktop_rt.engine.asr.worker_turn.run_turn`) and hands results to the
stream's ``on_result``, called **on the worker thread**. Call order: ``start()``, then
``open_stream()`` / ``submit()`` / ``close()`` from any thread, then ``stop()``. Invariants: at
most one inference per turn; turns are spaced by the :class:`ComputeGovernor` so inference
stays within ``WorkerConfig.cpu_budget``, and of the streams due the one that used least of
the budget goes first, and one with more than two turns of audio waiting that it sent faster
than real time (a flood, until it is down to half a turn) yields to those keeping up: shorter turns (``flood_turn_seconds``), its
passes within ``flood_share`` of the time; audio waits (``WorkerStream.lag_seconds``), it is
never skipped. A flush's whole-turn decode is a job of its own that never starts in front of
another stream's queued turn: alone, a stream's decode runs right after its flush; beside
others it runs in a gap (none has a turn queued or ran a pass within
``decode_quiet_seconds``), next once it waited its turn's length, or as its stream's turn once
that stream's next flush waits for it (:mod:`.worker_decodes`); every one runs, in order, and
is charged to its own stream, apart from its pass estimates. A closed stream's pending commands are dropped
at once and none of its results is delivered afterwards.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Protocol

from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.asr.governor import ComputeGovernor, CostSummary, GovernorConfig, PassCost
from desktop_rt.engine.asr.inference_cpu import inference_cpu
from desktop_rt.engine.asr.worker_decodes import DecodeView, PendingDecode, decode_to_run
from desktop_rt.engine.asr.worker_results import (
    ConsumedResult,
    FailedResult,
    FlushedResult,
    ResultCallback,
    Transcriber,
    TranscriberFactory,
    WordsResult,
    WorkerResult,
)
from desktop_rt.engine.asr.worker_stream import WorkerStream
from desktop_rt.engine.asr.worker_turn import run_decode, run_turn
from desktop_rt.engine.protocol.events import AudioChunk, Command

__all__ = [
    "Clock",
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

_NO_PASS_SECONDS = 0.005  # a turn this cheap ran no model pass (the speech gate, bookkeeping):
# the governor does not count it, so thousands of them do not slow every decision


@dataclass(frozen=True)
class WorkerConfig:
    max_turn_seconds: float = 8.0
    """Audio inserted into one stream per turn at most; the rest waits for its next turn."""
    cpu_budget: float = 0.8
    """Fraction of the inference thread(s) passes may keep busy over any ``budget_window``
    (1.0: passes back to back, as fast as the machine goes)."""
    budget_window: float = 10.0
    """Seconds over which ``cpu_budget`` holds."""
    flood_share: float = 0.05
    """While another stream keeps up, a flood's passes take at most this fraction of the time."""
    flood_turn_seconds: float = 4.0
    """Audio a flood's turn takes in while another stream keeps up: its window, and so its
    pass, stays as short as a live stream's, which waits for that pass."""
    decode_quiet_seconds: float = 1.0
    """A whole-turn decode waits while another stream ran a model pass this recently (it is in
    speech: its next pass is near); at most its turn's length (or ``budget_window``)."""

    def __post_init__(self) -> None:
        if self.flood_turn_seconds <= 0.0:
            raise ValueError(f"flood turn must be positive, not {self.flood_turn_seconds} s")
        if self.decode_quiet_seconds < 0.0:
            raise ValueError(f"decode quiet must be at least 0, not {self.decode_quiet_seconds} s")

    @property
    def governor(self) -> GovernorConfig:
        return GovernorConfig(self.cpu_budget, self.budget_window, self.flood_share)


class Clock(Protocol):
    """Where the worker reads time: wall (monotonic) and the CPU seconds of inference (the
    calling thread's and its model's own threads'; 0.0 throughout where not measured)."""

    def now(self) -> float: ...

    def thread_time(self) -> float: ...


class SystemClock:
    def now(self) -> float:
        return time.monotonic()

    def thread_time(self) -> float:
        return inference_cpu()


class WorkerStoppedError(RuntimeError):
    """The worker was stopped (or never started); it takes no new streams."""


@dataclass(frozen=True)
class _PassJob:
    """A stream's turn: its commands, then one inference."""

    stream: WorkerStream
    transcriber: Transcriber
    commands: list[Command]


@dataclass(frozen=True)
class _DecodeJob:
    """A flushed item of a stream decoded whole."""

    stream: WorkerStream
    transcriber: Transcriber
    decode: PendingDecode


_Job = _PassJob | _DecodeJob


class InferenceWorker:
    """Owns inference for all sessions on one thread.

    A turn takes one stream's pending commands up to and including the first flush, inserts at
    most ``max_turn_seconds`` of audio (and no more than its transcriber has room for: a long
    append is split), then runs one inference: a stream that floods audio or
    holds a long item gets its turn like the others, and one behind gets fewer, longer passes.
    The thread sleeps on a condition while no stream has a turn due; nothing polls. Results
    are delivered on this thread: an asyncio owner hops to its loop with
    ``loop.call_soon_threadsafe``.
    """

    def __init__(
        self,
        transcriber_factory: TranscriberFactory,
        config: WorkerConfig = WorkerConfig(),
        *,
        name: str = "desktop-rt-inference",
        clock: Clock | None = None,
    ):
        self._factory = transcriber_factory
        self.config = config
        self._name = name
        self._clock: Clock = clock or SystemClock()
        self._governor = ComputeGovernor(config.governor)
        self._cond = threading.Condition()
        self._ring: deque[WorkerStream] = deque()
        self._thread: threading.Thread | None = None
        self._driven = False
        self._stopping = False
        self._opened = 0

    # ---- lifecycle -------------------------------------------------------------------------

    def start(self, own_thread: bool = True) -> None:
        """Start the inference thread; ``own_thread=False``: the caller runs the turns itself
        with :meth:`run_due_turn` (a simulation on a virtual clock)."""
        with self._cond:
            if self._thread is not None or self._driven:
                raise RuntimeError("the inference worker is already started")
            self._stopping = False
            if not own_thread:
                self._driven = True
                return
            self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
            self._thread.start()

    def stop(self, timeout: float | None = None) -> None:
        """Drop every stream and end the thread; an inference in progress finishes first."""
        with self._cond:
            self._stopping = True
            for stream in self._ring:
                stream.closed = True
                stream._drop_all()
            self._ring.clear()
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    @property
    def running(self) -> bool:
        alive = self._driven or (self._thread is not None and self._thread.is_alive())
        return alive and not self._stopping

    # ---- streams ---------------------------------------------------------------------------

    def open_stream(
        self, on_result: ResultCallback, transcriber: Transcriber | None = None
    ) -> WorkerStream:
        """A new stream with its own (or the given) transcriber; ``on_result``: worker thread."""
        transcriber = self._factory() if transcriber is None else transcriber
        with self._cond:
            if self._stopping or not (self._thread is not None or self._driven):
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

    def lags(self) -> dict[str, float]:
        """Each open stream's lag: seconds of audio waiting for its transcriber."""
        with self._cond:
            return {stream.name: stream.lag_seconds for stream in self._ring}

    def cost_summary(self) -> CostSummary:
        """What inference cost over the last budget window (``/health``, benchmarks)."""
        with self._cond:
            return self._governor.summary(self._clock.now())

    def _submit(self, stream: WorkerStream, commands: list[Command]) -> None:
        if not commands:
            return
        with self._cond:
            if stream.closed:
                return
            stream._queue(commands, self._clock.now())
            self._cond.notify_all()

    def _close(self, stream: WorkerStream) -> None:
        with self._cond:
            if stream.closed:
                return
            stream.closed = True
            stream._drop_all()
            with contextlib.suppress(ValueError):
                self._ring.remove(stream)
            self._governor.forget(stream.name)
            # the worker drops its own reference after a running inference; free the rest now
            stream._transcriber = None
            self._cond.notify_all()
        with stream._delivering:
            pass  # a result being delivered right now completes before close() returns

    # ---- turns -----------------------------------------------------------------------------

    def run_due_turn(self) -> float | None:
        """Run one turn on the caller's thread if one is due (a worker started with
        ``own_thread=False``). Returns when to call again: now after a turn, later when none
        is due yet, ``None`` when no stream has work."""
        with self._cond:
            now = self._clock.now()
            choice = None if self._stopping else self._choose(now)
        if isinstance(choice, (_PassJob, _DecodeJob)):
            self._run_job(choice)
            return self._clock.now()
        return choice

    def _choose(self, now: float) -> _Job | float | None:
        """A decode due by :func:`decode_to_run`, else the due stream that used least of the
        budget, its turn taken off its queue (its pending decode, if its next command waits
        for that); else when the next one is due (``None``: no stream has work). Under the
        lock."""
        governor = self._governor
        live = [s for s in self._ring if s._transcriber is not None]
        waiting = [s for s in live if s._pending]
        if not waiting and not any(s._decode for s in live):
            return None
        usage = {s.name: governor.usage(s.name, now) for s in self._ring}
        active = {s.name for s in self._ring if s._pending or s._decode or usage[s.name] > 0.0}
        floods = self._floods(now)
        queued = {s.name for s in waiting if not s.flooding}
        decoding, wake = self._decode_due(now, live, active, queued)
        if decoding is not None:
            return decoding
        ready = governor.ready_times(now, [s.name for s in waiting], active, floods)
        best: WorkerStream | None = None
        for stream in waiting:  # in ring order: ties go to the one waiting longest
            at = ready[stream.name]
            if at > now + 1e-9:
                wake = min(wake, at)
            elif best is None or usage[stream.name] < usage[best.name]:
                best = stream
        if best is None:
            return wake
        self._ring.remove(best)
        self._ring.append(best)  # to the back: the others' turns come first at equal usage
        assert best._transcriber is not None
        if best._decode is not None and not best._can_pass:
            return _DecodeJob(best, best._transcriber, best._decode)
        yields = best.flooding and any(not s.flooding and s.name in active for s in self._ring)
        cfg = self.config
        turn = min(cfg.max_turn_seconds, cfg.flood_turn_seconds) if yields else cfg.max_turn_seconds
        turn = min(turn, best._transcriber.room_seconds)  # its pass hears all its window
        return _PassJob(best, best._transcriber, best._take_turn(int(turn * SAMPLE_RATE)))

    def _decode_due(
        self, now: float, live: list[WorkerStream], active: set[str], queued: set[str]
    ) -> tuple[_DecodeJob | None, float]:
        """The decode to run now by :func:`decode_to_run`, or when one may. Under the lock."""
        views = [
            DecodeView(s.name, s._decode, s.name in queued, s._last_pass, s.name in active)
            for s in live
        ]
        name, wake = decode_to_run(now, views, self.config.decode_quiet_seconds)
        for stream in live:
            if stream.name == name and stream._decode and stream._transcriber:
                return _DecodeJob(stream, stream._transcriber, stream._decode), wake
        return None, wake

    def _floods(self, now: float) -> set[str]:
        """Streams flooding: more than two turns of audio waiting and, over the last budget
        window, more than a turn sent beyond real time (a stream at real time is never one,
        however far behind several sessions leave it), until down to half a turn. Under the
        lock."""
        turn, span = self.config.max_turn_seconds, self.config.budget_window
        for stream in self._ring:
            lag, ahead = stream.lag_seconds, stream.ahead_seconds(now, span)
            if stream.flooding:
                stream.flooding = lag >= turn / 2
            else:
                stream.flooding = lag > 2 * turn and ahead > turn
        return {s.name for s in self._ring if s.flooding}

    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    if self._stopping:
                        return
                    now = self._clock.now()
                    choice = self._choose(now)
                    if isinstance(choice, (_PassJob, _DecodeJob)):
                        break
                    self._cond.wait(None if choice is None else max(0.0, choice - now))
            self._run_job(choice)
            del choice  # the closed stream's transcriber (and its audio) goes with it

    def _run_job(self, job: _Job) -> None:
        stream, clock = job.stream, self._clock
        start, cpu = clock.now(), clock.thread_time()
        decode_item: str | None = None
        if isinstance(job, _DecodeJob):
            with self._cond:
                stream._decode = None
            results = run_decode(stream, job.transcriber, job.decode.item_id)
            audio = 0
        else:
            outcome = run_turn(stream, job.transcriber, job.commands)
            results, decode_item = outcome.results, outcome.decode_item
            audio = sum(len(c.samples) for c in job.commands if isinstance(c, AudioChunk))
        end = clock.now()
        with self._cond:
            if end - start >= _NO_PASS_SECONDS:
                cost = PassCost(end - start, clock.thread_time() - cpu, audio / SAMPLE_RATE)
                decode = isinstance(job, _DecodeJob)
                self._governor.record(stream.name, start, cost, decode=decode)  # closed
                if stream.closed:  # meanwhile: it counts, but keeps no estimate
                    self._governor.forget(stream.name)
                elif not decode:
                    stream._last_pass = start
            if not stream.closed:
                results = stream._settle(results, decode_item, end, self.config.budget_window)
        for result in results:
            self._deliver(stream, result)

    def _deliver(self, stream: WorkerStream, result: WorkerResult) -> None:
        with stream._delivering:
            if stream.closed:
                return
            try:
                stream._on_result(result)
            except Exception:  # a broken callback must not kill the thread every session shares
                log.exception("result callback of %s failed", stream.name)
