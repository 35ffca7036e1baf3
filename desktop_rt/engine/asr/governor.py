"""Paces inference within a CPU budget, fairly between streams: :class:`ComputeGovernor`.

Call order (the inference worker's thread, or a simulation with its own clock): before a
stream's turn ask ``ready_at(key, now, active)`` (or ``ready_times`` for several), the earliest
time its next pass may start; order due streams by ``usage``; after the turn ``record(key, start, cost)``; ``forget(key)``
when the stream closes. Pure: it keeps no clock, times are the caller's seconds.

A pass's cost is its busy time (:attr:`PassCost.busy`): the CPU seconds inference took, at
most its wall time; time its threads waited for a core (other sessions, the server) is not
counted, nor is it kept idle for. Invariant: when no pass costs more than its estimate (the
stream's costliest pass of the last window, else any stream's), the busy time of passes within
any ``window_seconds`` is at most ``budget * window_seconds``; a pass that costs more
overshoots by the difference once. Each
of ``n`` active streams may use what the others leave, keeping room for one more pass of each,
and may start a pass while it used less than ``1/n`` of the budget (that pass may end over
it; a pass costing more than ``1/n`` starts once per window); its own next pass is reckoned
at its typical cost, not its costliest; a stream
``behind`` (a flood) passes at most once per window and within ``flood_share`` of the time
while another stream keeps up, and room for its pass is held only once that pass is due.
A whole-turn decode is recorded with ``decode=True``: it counts against the budget and its own
stream's usage (its share), but never in a pass estimate (its stream's or, for a stream with
no passes yet, any stream's), and spacing after a pass counts the busy run it ends (a flush's
pass and the decode right after it are one run): its busy time spread at the budget's rate
from the run's start. docs/design/streaming.md, *Governor*, says why.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Hashable, Iterable
from dataclasses import dataclass
from math import inf
from statistics import median

__all__ = ["GovernorConfig", "PassCost", "CostSummary", "ComputeGovernor", "busy_within"]


@dataclass(frozen=True)
class GovernorConfig:
    """The CPU budget of one inference worker."""

    budget: float = 0.8
    """Fraction of the inference thread(s) passes may keep busy over any ``window_seconds``."""
    window_seconds: float = 10.0
    flood_share: float = 0.05
    """While another stream keeps up, a flood's passes take at most this fraction of the
    worker's time (and never more than ``budget``): each starts at least ``cost / share``
    after its last one began."""

    def __post_init__(self) -> None:
        if not 0.0 < self.budget <= 1.0:
            raise ValueError(f"cpu budget must be in (0, 1], not {self.budget}")
        if self.window_seconds <= 0.0:
            raise ValueError(f"budget window must be positive, not {self.window_seconds}")
        if not 0.0 < self.flood_share <= 1.0:
            raise ValueError(f"flood share must be in (0, 1], not {self.flood_share}")


@dataclass(frozen=True, slots=True)
class PassCost:
    """What one turn's inference cost: wall and thread CPU seconds, over this much audio."""

    wall: float
    cpu: float
    audio_seconds: float = 0.0

    @property
    def busy(self) -> float:
        """Seconds it kept the inference thread busy, what the budget counts: its CPU seconds,
        at most its wall time (the time its thread waited for a core went to other work); its
        wall time where no CPU time was measured."""
        return min(self.wall, self.cpu) if self.cpu > 0.0 else self.wall


@dataclass(frozen=True, slots=True)
class CostSummary:
    """The passes of the last window (whole-turn decodes among them): their share of it and
    what they cost."""

    passes: int
    busy_fraction: float
    wall_per_pass: float
    cpu_per_pass: float
    wall_per_audio_second: float


@dataclass(frozen=True, slots=True)
class _Pass:
    key: Hashable
    start: float
    end: float
    cost: PassCost
    decode: bool = False  # a whole-turn decode: busy time, not a pass to estimate from


_SPIKE = 2.0  # a pass over this many times a stream's median is a spike, not its typical cost
_RUN_GAP = 0.01  # a decode this soon after a pass makes one busy run with it (results between)


def busy_within(spans: Iterable[tuple[float, float]], start: float, end: float) -> float:
    """Seconds of ``spans`` (start, end) that lie within ``[start, end]``."""
    return sum(max(0.0, min(e, end) - max(s, start)) for s, e in spans)


def _earliest_fit(spans: list[tuple[float, float]], now: float, room: float, span: float) -> float:
    """Earliest ``t >= now`` at which the busy time in ``[t - span, t]`` is at most ``room``,
    counting only ``spans`` (all ending by ``now``): busy time leaves the window as it slides."""
    excess = busy_within(spans, now - span, now) - room
    if excess <= 1e-9:
        return now
    for s, e in sorted(spans):
        s = max(s, now - span)
        if e <= s:
            continue
        if e - s >= excess:
            return s + excess + span
        excess -= e - s
    return now + span


class ComputeGovernor:
    """Keeps the passes of every stream of one worker within the budget. See the module doc."""

    def __init__(self, config: GovernorConfig = GovernorConfig()):
        self.config = config
        self._passes: deque[_Pass] = deque()
        self._by_key: dict[Hashable, deque[_Pass]] = {}
        self._estimate: dict[Hashable, float] = {}  # each stream's costliest recent pass
        self._typical: dict[Hashable, float] = {}  # median recent pass (at most the costliest)
        self._last_start: dict[Hashable, float] = {}  # each open stream's latest pass began

    def record(self, key: Hashable, start: float, cost: PassCost, *, decode: bool = False) -> None:
        """A turn of stream ``key`` ran from ``start`` and cost ``cost``; ``decode``: it was a
        whole-turn decode (counted against the budget and ``key``'s usage, not estimated from)."""
        done = _Pass(key, start, start + cost.wall, cost, decode)
        self._passes.append(done)
        self._by_key.setdefault(key, deque()).append(done)
        self._drop_old(done.end)
        if decode:
            return
        self._last_start[key] = start
        costs = [p.cost.busy for p in self._by_key[key] if not p.decode]
        self._estimate[key] = max(costs)
        self._typical[key] = min(max(costs), _SPIKE * median(costs))

    def forget(self, key: Hashable) -> None:
        """Stream ``key`` closed: its share goes back to the others (its past passes still
        count against the budget)."""
        self._estimate.pop(key, None)
        self._typical.pop(key, None)
        self._last_start.pop(key, None)

    def estimate(self, key: Hashable) -> float:
        """What the next pass of ``key`` is expected to cost (wall seconds)."""
        if key in self._estimate:
            return self._estimate[key]
        return max((p.cost.busy for p in self._passes if not p.decode), default=0.0)

    def typical(self, key: Hashable) -> float:
        """What a pass of ``key`` usually costs: its costliest recent pass, but not over
        twice their median (a new stream: :meth:`estimate`). Its share is reckoned with it,
        so one slow pass (the machine busy, a long window, a turn's end) does not hold the
        stream back for a whole window; the budget is reckoned with :meth:`estimate`."""
        return self._typical.get(key, self.estimate(key))

    def usage(self, key: Hashable, now: float) -> float:
        """Wall seconds stream ``key``'s passes took within the last window."""
        return busy_within(self._spans(key), now - self.config.window_seconds, now)

    def ready_at(
        self,
        key: Hashable,
        now: float,
        active: Collection[Hashable] = (),
        behind: Collection[Hashable] = (),
    ) -> float:
        """The earliest time stream ``key``'s next pass may start, given the streams now
        ``active`` (with work or recent passes; ``key`` among them or not) and those of them
        ``behind`` (more audio waiting than one turn takes in: a flood)."""
        return self.ready_times(now, [key], active, behind)[key]

    def ready_times(
        self,
        now: float,
        keys: Iterable[Hashable],
        active: Collection[Hashable] = (),
        behind: Collection[Hashable] = (),
    ) -> dict[Hashable, float]:
        """:meth:`ready_at` of each of ``keys``, computed together (one worker decision)."""
        cfg = self.config
        total = cfg.budget * cfg.window_seconds
        spans = self._spans(None)
        floor = now
        if self._passes:  # spacing after the last run keeps the budget smooth, not bursty:
            began, busy = self._last_run()  # its busy time, spread at the budget's rate
            floor = max(now, self._passes[-1].end, began + busy / cfg.budget)
        keeping_up = {k for k in active if k not in behind}
        claims = {k: self._claim(k, now, k in behind and bool(keeping_up)) for k in active}
        claimed = sum(claims.values())
        times: dict[Hashable, float] = {}
        for key in keys:
            cost = min(self.estimate(key), total)
            span = cfg.window_seconds - cost
            at = max(floor, _earliest_fit(spans, now, total - cost, span))
            others = len(active) - (key in active)
            share: float | None = None
            if key in behind and keeping_up - {key}:  # a flood yields: one pass per window,
                share = 0.0  # and its passes no more than its flood share of the time
                at = max(at, self._flood_turn(key))
            elif others:  # many streams: a share under one pass still allows a pass per window
                kept, typical = claimed - claims.get(key, 0.0), self.typical(key)
                equal = total / (others + 1)  # under it a pass may start, and end over it
                share = max(0.0, total - kept - typical, equal if typical <= equal else 0.0)
            if share is not None:
                at = max(at, _earliest_fit(self._spans(key), now, share, span))
            times[key] = at
        return times

    def _last_run(self) -> tuple[float, float]:
        """When the busy run the latest pass ends began, and its busy seconds: with a decode
        that came right after the pass before it (a flush's pass, then its decode), both."""
        passes = reversed(self._passes)
        later = next(passes)
        run = later.cost.busy
        for earlier in passes:
            if not later.decode or later.start - earlier.end > _RUN_GAP:
                break
            run, later = run + earlier.cost.busy, earlier
        return later.start, run

    def _flood_turn(self, key: Hashable) -> float:
        """When a flood's next pass keeps its passes within ``flood_share`` of the time."""
        last = self._last_start.get(key)
        share = min(self.config.flood_share, self.config.budget)
        return -inf if last is None else last + self.estimate(key) / share

    def _claim(self, key: Hashable, now: float, yields: bool) -> float:
        """What an active stream holds of the window: what it used and room for its next pass.
        A flood that yields passes once per window at most: room for its next pass is held
        only once that pass is due, so between its passes the others may use it."""
        used, next_pass = self.usage(key, now), self.estimate(key)
        if not yields:
            return used + next_pass
        return max(used, next_pass) if self._flood_turn(key) <= now else used

    def summary(self, now: float) -> CostSummary:
        """The passes that ended within the last window, for ``/health`` and benchmarks."""
        window = self.config.window_seconds
        recent = [p for p in self._passes if p.end > now - window]
        count = len(recent)
        wall = sum(p.cost.wall for p in recent)
        audio = sum(p.cost.audio_seconds for p in recent)
        return CostSummary(
            passes=count,
            busy_fraction=busy_within(self._spans(None, wall=True), now - window, now) / window,
            wall_per_pass=wall / count if count else 0.0,
            cpu_per_pass=sum(p.cost.cpu for p in recent) / count if count else 0.0,
            wall_per_audio_second=wall / audio if audio else 0.0,
        )

    def _spans(self, key: Hashable | None, wall: bool = False) -> list[tuple[float, float]]:
        """Each pass's busy time (``wall``: its wall time), ending where the pass ended."""
        passes = self._passes if key is None else self._by_key.get(key, ())
        return [(p.start if wall else p.end - p.cost.busy, p.end) for p in passes]

    def _drop_old(self, now: float) -> None:
        horizon = now - self.config.window_seconds
        while self._passes and self._passes[0].end <= horizon:
            old = self._passes.popleft()
            mine = self._by_key.get(old.key)
            if mine and mine[0] is old:
                mine.popleft()
                if not mine:
                    del self._by_key[old.key]
