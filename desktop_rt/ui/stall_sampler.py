"""Finds what blocks the UI thread: a heartbeat on it, a watchdog thread sampling stacks when late.

:class:`StallSampler` (create and :meth:`~StallSampler.start` it on the UI thread): a
``heartbeat_ms`` QTimer notes each beat; a gap over ``threshold_ms`` is a stall. A watchdog
thread wakes every ``poll_ms``, keeps a few seconds of per-thread CPU snapshots
(:func:`~desktop_rt.ui.stall_causes.thread_times`) and, while the heartbeat is late, samples
every thread's Python stack (``sys._current_frames``) and where the kernel holds the UI thread
(:func:`~desktop_rt.ui.stall_causes.kernel_wait`); ``gc.callbacks`` note Python's garbage
collections. The watchdog is a Python thread too: how late it woke, less its own run-queue
time, is how long it waited for the GIL, which tells a GIL held by a preempted thread from an
idle event loop. When the late beat comes, the stall is
attributed (:func:`~desktop_rt.ui.stall_causes.attribute`) and kept in :attr:`stalls`.

The app turns it on with ``DESKTOP_RT_STALL_LOG=<file>`` (:func:`sampler_from_env`): each
stall is logged, and the file gets one JSON line per stall and a summary when it stops.
"""

from __future__ import annotations

import collections
import gc
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from types import FrameType

from PySide6.QtCore import QObject, Qt, QTimer

from desktop_rt.ui.stall_causes import (
    GcPause,
    Stall,
    ThreadClock,
    ThreadSample,
    ThreadTimes,
    attribute,
    frame_paths,
    kernel_wait,
    stack_of,
    thread_times,
    top_causes,
    ui_frame,
)

__all__ = ["StallSampler", "STALL_LOG_ENV", "sampler_from_env"]

log = logging.getLogger(__name__)

STALL_LOG_ENV = "DESKTOP_RT_STALL_LOG"
"""Write the UI thread's stalls (> 50 ms) to this file (JSON lines) and the log."""


class StallSampler(QObject):
    """See the module docstring. ``on_stall`` runs on the watchdog thread."""

    def __init__(
        self,
        threshold_ms: float = 50.0,
        heartbeat_ms: int = 10,
        poll_ms: int = 20,
        keep_beats: bool = False,
        parent: QObject | None = None,
    ):
        super().__init__(parent)
        self.threshold = threshold_ms / 1000
        self._poll = poll_ms / 1000
        self.stalls: list[Stall] = []
        self.beats = 0
        self.beat_times: list[float] | None = [] if keep_beats else None
        """Every beat's time (monotonic s), when asked for with ``keep_beats`` (benchmarks)."""
        self._beat = time.monotonic()
        self._ui_ident = threading.get_ident()
        self._ui_tid = threading.get_native_id()
        self._loop_frame: FrameType | None = None
        self._watch_tid = 0
        self._gaps: collections.deque[tuple[float, float]] = collections.deque()
        self._samples: collections.deque[ThreadSample] = collections.deque(maxlen=400)
        self._times: collections.deque[ThreadTimes] = collections.deque(maxlen=600)
        self._gc: collections.deque[GcPause] = collections.deque(maxlen=2000)
        self._held: collections.deque[tuple[float, float]] = collections.deque(maxlen=600)
        self._gc_start: dict[int, float] = {}  # thread ident -> when its collection began
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._watchdog: threading.Thread | None = None
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(heartbeat_ms)
        self._timer.timeout.connect(self._on_beat)
        self.on_stall: list[Callable[[Stall], None]] = []

    def start(self) -> None:
        """Start the heartbeat and the watchdog (call on the UI thread)."""
        if self._watchdog is not None:
            return
        self._ui_ident, self._ui_tid = threading.get_ident(), threading.get_native_id()
        self._beat = time.monotonic()
        self._stop.clear()
        self._watchdog = threading.Thread(target=self._watch, name="stall-watchdog", daemon=True)
        self._watchdog.start()
        gc.callbacks.append(self._on_gc)
        self._timer.start()

    def stop(self) -> list[Stall]:
        """Stop both (UI thread); attribute the stalls still open; return all stalls."""
        self._timer.stop()
        if self._on_gc in gc.callbacks:
            gc.callbacks.remove(self._on_gc)
        self._stop.set()
        if self._watchdog is not None:
            self._watchdog.join(5)
            self._watchdog = None
        self._times.append(thread_times(time.monotonic()))
        self._finish(final=True)
        return self.stalls

    def summary(self, n: int = 10) -> list[tuple[str, int, float, float]]:
        """(cause, stalls, total ms, longest ms), most stalled time first."""
        return top_causes(self.stalls, n)

    # ---- UI thread ---------------------------------------------------------------------------

    def _on_beat(self) -> None:
        now = time.monotonic()
        if self._loop_frame is None:
            self._loop_frame = sys._getframe(1)  # the frame that runs the event loop
        gap = now - self._beat
        self._beat = now
        self.beats += 1
        if self.beat_times is not None:
            self.beat_times.append(now)
        if gap > self.threshold:
            with self._lock:
                self._gaps.append((now, gap))

    # ---- any thread --------------------------------------------------------------------------

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        """Python's collector starts or stops (in the thread that allocated): note the pause."""
        now, ident = time.monotonic(), threading.get_ident()
        if phase == "start":
            self._gc_start[ident] = now
            return
        began = self._gc_start.pop(ident, None)
        if began is not None:
            name = threading.current_thread().name
            self._gc.append(GcPause(began, now, info.get("generation", -1), name))

    # ---- watchdog thread ---------------------------------------------------------------------

    def _watch(self) -> None:
        self._watch_tid = threading.get_native_id()
        clock = ThreadClock()
        try:
            self._watch_with(clock)
        finally:
            clock.close()

    def _watch_with(self, clock: ThreadClock) -> None:
        queued = 0.0  # the watchdog's own run-queue ms so far
        while True:
            asked = time.monotonic()
            if self._stop.wait(self._poll):
                return
            now = time.monotonic()
            times = clock.read(now)
            queue_now = times.times.get(self._watch_tid, (0, 0))[1] / 1e6
            late = (now - asked - self._poll) * 1000  # waited for a core or for the GIL
            self._held.append((now, max(0.0, late - (queue_now - queued))))
            queued = queue_now
            self._times.append(times)
            if now - self._beat > self.threshold:
                self._sample(now)
            self._finish(final=False)

    def _sample(self, now: float) -> None:
        frames = sys._current_frames()
        names = {t.ident: t.name for t in threading.enumerate()}
        ui = frames.get(self._ui_ident)
        others = {
            names.get(ident, str(ident)): stack_of(frame, 8)
            for ident, frame in frames.items()
            if ident not in (self._ui_ident, threading.get_ident())
        }
        in_loop = ui is None or ui is self._loop_frame
        stack = (ui_frame(stack_of(ui), frame_paths(ui)),) + stack_of(ui)[1:]
        wait = kernel_wait(self._ui_tid)
        self._samples.append(ThreadSample(now, stack, in_loop, others, wait))

    def _finish(self, final: bool) -> None:
        """Attribute the gaps whose end the CPU snapshots already cover (all of them if final)."""
        while True:
            with self._lock:
                if not self._gaps:
                    return
                end, gap = self._gaps[0]
                latest = self._times[-1].at if self._times else 0.0
                if not final and latest < end:
                    return
                self._gaps.popleft()
            self._add(end, gap)

    def _add(self, end: float, gap: float) -> None:
        start = end - gap
        times = list(self._times)
        before = [t for t in times if t.at <= start + self._poll]
        after = [t for t in times if t.at >= end]
        around = (before[-1], after[0]) if before and after else None
        samples = [s for s in list(self._samples) if start <= s.at <= end]
        pauses = [p for p in list(self._gc) if p.end > start and p.start < end]
        held = max((ms for at, ms in list(self._held) if start < at <= end + self._poll), default=0)
        stall = attribute(
            end,
            gap,
            self._ui_tid,
            around,
            samples,
            (self._watch_tid,),
            gc=pauses,
            gil_wait_ms=held,
        )
        self.stalls.append(stall)
        for callback in self.on_stall:
            callback(stall)


def _writer(path: Path) -> Callable[[Stall], None]:
    def write(stall: Stall) -> None:
        log.warning(
            "UI thread stalled %.0f ms: %s (ran %.0f ms, queued %.0f ms, GIL waited %.0f ms; "
            "busy: %s; queued: %s)",
            stall.seconds * 1000,
            stall.cause,
            stall.ui_run_ms,
            stall.ui_queue_ms,
            stall.gil_wait_ms,
            dict(stall.busy_threads),
            dict(stall.queued_threads),
        )
        with path.open("a") as fh:
            fh.write(json.dumps(asdict(stall)) + "\n")

    return write


def sampler_from_env(parent: QObject | None = None) -> StallSampler | None:
    """A started sampler writing to ``$DESKTOP_RT_STALL_LOG``, or None when it is unset."""
    target = os.environ.get(STALL_LOG_ENV)
    if not target:
        return None
    sampler = StallSampler(parent=parent)
    sampler.on_stall.append(_writer(Path(target)))
    sampler.start()
    log.info("sampling UI stalls over %.0f ms into %s", sampler.threshold * 1000, target)
    return sampler
