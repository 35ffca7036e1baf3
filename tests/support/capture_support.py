"""Helpers for the capture tests: a collector of source output, a recording sink, a tone, and a
file source that can stall like a hung driver."""

from __future__ import annotations

import threading

import numpy as np

from desktop_rt.engine.audio.sources import FileAudioSource, SourceStatus


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


class StallingFileSource(FileAudioSource):
    """A file replayed as a microphone that can stop delivering blocks without closing or saying
    anything (:meth:`stall`), as a hung driver does, and start again (:meth:`resume`)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._flowing = threading.Event()
        self._flowing.set()

    def stall(self) -> None:
        self._flowing.clear()

    def resume(self) -> None:
        self._flowing.set()

    def _next_block(self) -> np.ndarray:
        while not self._flowing.wait(0.05) and not self._stop.is_set():
            pass
        return super()._next_block()
