"""Helpers for the capture tests: a collector of source output, a recording sink, a tone."""

from __future__ import annotations

import threading

import numpy as np

from desktop_rt.engine.audio.sources import SourceStatus


class Collector:
    """Gathers what a source or feed reports, with a way to wait for a condition."""

    def __init__(self):
        self.blocks: list[np.ndarray] = []
        self.statuses: list[SourceStatus] = []
        self.changed = threading.Condition()

    def block(self, samples):
        with self.changed:
            self.blocks.append(samples)
            self.changed.notify_all()

    def status(self, status):
        with self.changed:
            self.statuses.append(status)
            self.changed.notify_all()

    def states(self):
        return [s.state for s in self.statuses]

    def wait(self, predicate, timeout=10.0):
        with self.changed:
            assert self.changed.wait_for(predicate, timeout), "timed out"


class SessionRecorder:
    """The audio-sink side of a local session, recording the calls it gets in order."""

    def __init__(self):
        self.calls: list[tuple[str, int]] = []
        self.lock = threading.Lock()

    def append(self, samples):
        with self.lock:
            if self.calls and self.calls[-1][0] == "append":
                self.calls[-1] = ("append", self.calls[-1][1] + len(samples))
            else:
                self.calls.append(("append", len(samples)))

    def commit(self):
        with self.lock:
            self.calls.append(("commit", 0))

    def clear(self):
        with self.lock:
            self.calls.append(("clear", 0))


def tone(seconds: float, rate: int = 16000) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
