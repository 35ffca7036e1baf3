"""What held the UI thread during a stall: thread CPU from /proc, Python stacks, one cause line.

Pure helpers of :mod:`desktop_rt.ui.stall_sampler` (no Qt). :func:`thread_times` reads every
thread's run and run-queue time (``/proc/self/task/*/schedstat``, nanoseconds; :class:`ThreadClock` keeps the files open); :func:`stack_of`
turns a frame into short ``file:function:line`` entries, innermost first; :func:`attribute`
makes a :class:`Stall` of a gap, the snapshots around it and the stacks sampled in it, and
:func:`top_causes` counts stalls by cause. A cause is one of:

- ``ui: <frame>``: the UI thread ran Python code (its innermost frame of ours, and the innermost);
- ``qt: native``: the UI thread ran, inside the event loop (painting, layout, C++ slots);
- ``gil: <thread> <frame>``: the UI thread slept while another Python thread ran (held the GIL);
- ``gil: <thread> without a core``: the UI thread slept, the GIL was held (the watchdog, a
  Python thread too, waited for it as long: ``gil_wait_ms``), and no Python thread ran: the
  holder was preempted, and this Python thread waited longest in the run queue (``gil: held by
  a thread asleep`` when none waited: a C call that blocks without releasing the GIL);
- ``cpu: run queue``: the UI thread was runnable but had no core (the machine, or our threads);
- ``qt: waiting``: the UI thread slept in the event loop, nobody held the GIL and no other
  thread ran (the X server, a native lock); ``Stall.ui_wait`` says where the kernel saw it sleep
  (``S futex_wait_queue``: a lock; ``S do_sys_poll``: the event loop idle);
- ``gc: generation 2 in <thread>``: a full garbage collection took half the gap or more (a
  young generation's that long was preempted: the other rules judge those).

A UI thread asleep in Python code while nobody ran and the GIL was free is that code (a
blocking call).
"""

from __future__ import annotations

import collections
import os
import sysconfig
import threading
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import FrameType

__all__ = [
    "ThreadTimes",
    "GcPause",
    "ThreadSample",
    "Stall",
    "thread_times",
    "ThreadClock",
    "kernel_wait",
    "stack_of",
    "attribute",
    "cpu_by_name",
    "top_causes",
]

_TASKS = Path("/proc/self/task")
_LIBRARIES = (sysconfig.get_paths()["stdlib"], "site-packages", "dist-packages", "<frozen")
_NAMES: dict[int, str] = {}
_GIL_MS = 25.0


@dataclass(frozen=True)
class ThreadTimes:
    """One snapshot: ``at`` (monotonic s) and per native thread id (run ns, run-queue wait ns)."""

    at: float
    times: Mapping[int, tuple[int, int]]


@dataclass(frozen=True)
class ThreadSample:
    """The Python stacks seen once during a stall, by thread name (innermost frame first)."""

    at: float
    ui_stack: tuple[str, ...]
    ui_in_loop: bool
    others: Mapping[str, tuple[str, ...]]
    ui_wait: str = ""  # the UI thread's state and kernel wait channel (:func:`kernel_wait`)


@dataclass(frozen=True)
class GcPause:
    """One run of Python's cyclic garbage collector (it holds the GIL throughout)."""

    start: float
    end: float
    generation: int
    thread: str


@dataclass(frozen=True)
class Stall:
    """A heartbeat gap of ``seconds`` ending at ``end``, and what it is attributed to."""

    end: float
    seconds: float
    cause: str
    ui_run_ms: float = 0.0
    ui_queue_ms: float = 0.0
    busy_threads: Mapping[str, float] = field(default_factory=dict)  # name -> ms run
    samples: tuple[ThreadSample, ...] = ()
    gil_wait_ms: float = 0.0  # how long the watchdog thread waited for the GIL in the gap
    queued_threads: Mapping[str, float] = field(default_factory=dict)  # Python: ms runnable
    ui_wait: str = ""  # the UI thread's most frequent kernel wait in the samples


def _name(tid: int) -> str:
    """The Python name of native thread ``tid``, else its kernel name (``comm``)."""
    name = _NAMES.get(tid)
    if name is None:
        for thread in threading.enumerate():
            if thread.native_id == tid:
                return thread.name  # not cached: a later thread may reuse the id
        try:
            name = (_TASKS / str(tid) / "comm").read_text().strip()
        except OSError:
            name = str(tid)
        _NAMES[tid] = name
    return name


def thread_times(at: float) -> ThreadTimes:
    """Run and run-queue nanoseconds of every thread of this process (empty off Linux)."""
    clock = ThreadClock()
    try:
        return clock.read(at)
    finally:
        clock.close()


class ThreadClock:
    """:func:`thread_times` for a watchdog: the files stay open (one ``pread`` each per read);
    threads are listed again when Python's thread count changed, or every ``relist`` reads."""

    def __init__(self, relist: int = 50):
        self._fds: dict[int, int] = {}
        self._relist = relist
        self._reads = 0
        self._python_threads = -1

    def read(self, at: float) -> ThreadTimes:
        count = threading.active_count()
        if self._reads % self._relist == 0 or count != self._python_threads:
            self._scan()
            self._python_threads = count
        self._reads += 1
        times: dict[int, tuple[int, int]] = {}
        for tid, fd in list(self._fds.items()):
            try:
                run, wait, _ = os.pread(fd, 128, 0).split()
            except (OSError, ValueError):  # the thread ended
                os.close(self._fds.pop(tid))
                continue
            times[tid] = (int(run), int(wait))
        return ThreadTimes(at, times)

    def _scan(self) -> None:
        try:
            tids = [int(tid) for tid in os.listdir(_TASKS)]
        except OSError:
            return
        for tid in tids:
            if tid not in self._fds:
                try:
                    self._fds[tid] = os.open(_TASKS / str(tid) / "schedstat", os.O_RDONLY)
                except OSError:
                    continue  # ended between the listing and the open

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()


def kernel_wait(tid: int) -> str:
    """Thread ``tid``'s state and, asleep, where in the kernel: ``"S futex_wait_queue"``
    (a lock: the GIL, a mutex), ``"S do_sys_poll"`` (an event loop's poll), ``"R"``; "" off Linux."""
    task = _TASKS / str(tid)
    try:
        state = (task / "stat").read_text().rsplit(")", 1)[1].split()[0]
        channel = (task / "wchan").read_text().strip()
    except (OSError, IndexError):
        return ""
    return state if state == "R" or channel in ("", "0") else f"{state} {channel}"


def stack_of(frame: FrameType | None, limit: int = 25) -> tuple[str, ...]:
    """``file:function:line`` of ``frame`` and its callers, innermost first."""
    out: list[str] = []
    while frame is not None and len(out) < limit:
        code = frame.f_code
        out.append(f"{Path(code.co_filename).name}:{code.co_name}:{frame.f_lineno}")
        frame = frame.f_back
    return tuple(out)


def _ours(stack: Sequence[str], paths: Sequence[str]) -> str | None:
    for entry, path in zip(stack, paths, strict=False):
        if not any(lib in path for lib in _LIBRARIES):
            return entry
    return None


def frame_paths(frame: FrameType | None, limit: int = 25) -> tuple[str, ...]:
    """The full file paths of :func:`stack_of`'s entries (to tell our code from libraries')."""
    out: list[str] = []
    while frame is not None and len(out) < limit:
        out.append(frame.f_code.co_filename)
        frame = frame.f_back
    return tuple(out)


def ui_frame(stack: Sequence[str], paths: Sequence[str]) -> str:
    """The UI code named by a stack: our innermost frame, and the innermost if it differs."""
    ours = _ours(stack, paths)
    inner = stack[0] if stack else "?"
    if ours is None or ours == inner:
        return ours or inner
    return f"{ours} > {inner}"


def _deltas(before: ThreadTimes, after: ThreadTimes) -> dict[int, tuple[float, float]]:
    out = {}
    for tid, (run, wait) in after.times.items():
        run0, wait0 = before.times.get(tid, (0, 0))  # not there before: started since
        out[tid] = ((run - run0) / 1e6, (wait - wait0) / 1e6)
    return out


def attribute(
    end: float,
    seconds: float,
    ui_tid: int,
    around: tuple[ThreadTimes, ThreadTimes] | None,
    samples: Iterable[ThreadSample],
    ignore: Sequence[int] = (),
    python: Collection[str] | None = None,
    gc: Sequence[GcPause] = (),
    gil_wait_ms: float = 0.0,
) -> Stall:
    """A :class:`Stall` for a gap of ``seconds`` ending at ``end`` (see the module docstring).

    A Python thread that ran 25 ms or more, and four times what the UI thread ran, held the GIL
    (a thread waiting for the GIL wakes every 5 ms, so on a loaded machine it counts as queued
    too: the run-queue time alone cannot tell the GIL from a busy machine); otherwise
    the largest of the UI thread's run, run-queue and asleep time decides, and asleep while the
    watchdog waited ``gil_wait_ms`` for the GIL (25 ms, or 30 % of the time asleep if less, at
    least 10 ms) is the GIL's holder without a core. ``ignore``: native ids not to count as busy (the sampler's own thread); ``python``: the
    names of the Python threads (default: those alive now).
    """
    taken = tuple(samples)
    deltas = _deltas(*around) if around is not None else {}
    ui_run, ui_queue = deltas.get(ui_tid, (0.0, 0.0))
    if python is None:
        python = {t.name for t in threading.enumerate()}
    busy = _by_name(deltas, ui_tid, ignore, 0)
    queued = {n: ms for n, ms in _by_name(deltas, ui_tid, ignore, 1).items() if n in python}
    waits = Counter(s.ui_wait for s in taken if s.ui_wait)
    stall = Stall(
        end,
        seconds,
        "",
        ui_run_ms=round(ui_run, 1),
        ui_queue_ms=round(ui_queue, 1),
        busy_threads=busy,
        samples=taken,
        gil_wait_ms=round(gil_wait_ms, 1),
        queued_threads=queued,
        ui_wait=waits.most_common(1)[0][0] if waits else "",
    )
    ms = seconds * 1000
    collecting = _collecting([p for p in gc if p.generation == 2], end - seconds, end)
    if collecting is not None and collecting[0] >= 0.5 * ms:
        busy = {**busy, collecting[1]: busy.get(collecting[1], 0.0)}
        cause = f"gc: generation {collecting[2]} in {collecting[1]}"
        return replace(stall, cause=cause, busy_threads=busy)
    return replace(stall, cause=_cause(stall, python))


def _by_name(
    deltas: Mapping[int, tuple[float, float]], ui_tid: int, ignore: Sequence[int], which: int
) -> dict[str, float]:
    """Run (``which`` 0) or run-queue (1) ms of the other threads by name, 5 ms or more, most
    first (threads of one name together)."""
    total: dict[str, float] = collections.defaultdict(float)
    for tid, times in deltas.items():
        if tid != ui_tid and tid not in ignore:
            total[_name(tid)] += times[which]
    ranked = sorted(total.items(), key=lambda kv: -kv[1])
    return {name: round(ms, 1) for name, ms in ranked if ms >= 5.0}


def _cause(stall: Stall, python: Collection[str]) -> str:
    """The cause line of a stall that was not a garbage collection."""
    ms, ui_run, ui_queue = stall.seconds * 1000, stall.ui_run_ms, stall.ui_queue_ms
    asleep = ms - ui_run - ui_queue
    busy = {n: r for n, r in stall.busy_threads.items() if n in python}
    python_ran = max(busy.values(), default=0.0)
    code = Counter(s.ui_stack[0] for s in stall.samples if not s.ui_in_loop and s.ui_stack)
    ui = "ui: " + code.most_common(1)[0][0] if code else "qt: native"
    if python_ran >= max(_GIL_MS, 4 * ui_run) and ui_run < 0.5 * ms:
        return "gil: " + _gil_holder(busy, stall.samples)
    if ui_queue >= max(ui_run, asleep):
        return "cpu: run queue"
    if ui_run >= asleep:
        return ui
    if stall.gil_wait_ms >= max(10.0, min(_GIL_MS, 0.3 * asleep)):  # held by one not running
        holder = next(iter(stall.queued_threads), None)
        return f"gil: {holder} without a core" if holder else "gil: held by a thread asleep"
    if code:  # asleep in Python code of ours, the GIL free: a blocking call
        return ui
    return "qt: waiting"  # asleep in the event loop: the X server, a native lock


def _collecting(
    pauses: Sequence[GcPause], start: float, end: float
) -> tuple[float, str, int] | None:
    """(ms of the gap spent in garbage collections, the thread, the oldest generation)."""
    if not pauses:
        return None
    overlap = sum(max(0.0, min(p.end, end) - max(p.start, start)) for p in pauses) * 1000
    longest = max(pauses, key=lambda p: p.end - p.start)
    return overlap, longest.thread, max(p.generation for p in pauses)


def _gil_holder(busy: Mapping[str, float], samples: Sequence[ThreadSample]) -> str:
    """The busiest of the Python threads ``busy`` with a stack sampled, and its most frequent
    innermost frame; else the busiest of them."""
    seen: Counter[tuple[str, str]] = Counter()
    for sample in samples:
        for name, stack in sample.others.items():
            if stack:
                seen[(name, stack[0])] += 1
    for name in busy:
        frames = [(count, frame) for (n, frame), count in seen.items() if n == name]
        if frames:
            return f"{name} {max(frames)[1]}"
    return next(iter(busy), "?")


def cpu_by_name(before: ThreadTimes, after: ThreadTimes) -> dict[str, tuple[float, float]]:
    """(run ms, run-queue ms) of every thread name between two snapshots, busiest first."""
    out: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0])
    for tid, (run, queue) in _deltas(before, after).items():
        out[_name(tid)][0] += run
        out[_name(tid)][1] += queue
    ranked = sorted(out.items(), key=lambda kv: -kv[1][0])
    return {name: (round(run, 1), round(queue, 1)) for name, (run, queue) in ranked}


def top_causes(stalls: Iterable[Stall], n: int = 10) -> list[tuple[str, int, float, float]]:
    """(cause, stalls, total ms, longest ms) for the ``n`` causes with most stalled time."""
    count: Counter[str] = Counter()
    total: dict[str, float] = collections.defaultdict(float)
    longest: dict[str, float] = {}
    for stall in stalls:
        ms = stall.seconds * 1000
        count[stall.cause] += 1
        total[stall.cause] += ms
        longest[stall.cause] = max(longest.get(stall.cause, 0.0), ms)
    ranked = sorted(total, key=lambda c: -total[c])[:n]
    return [(c, count[c], round(total[c], 1), round(longest[c], 1)) for c in ranked]
