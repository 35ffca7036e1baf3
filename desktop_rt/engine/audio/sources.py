"""Audio capture behind one small API, and a file replayed live as a microphone.

An :class:`AudioSource` is started with ``on_block(samples)``, which must return at once (the
consumer, :class:`desktop_rt.live.capture.CaptureFeed`, only queues the block), and
``on_status(SourceStatus)``: opening, open, lost, ended (a file reached its end), closed (and
silent, which the consumer's watchdog reports when blocks stop coming without a word). It
delivers float32 mono blocks at its ``samplerate`` on a thread of its own. The real microphone is
:class:`~desktop_rt.engine.audio.microphone.SoundDeviceSource`; :class:`FileAudioSource` replays
a file at wall-clock pace (or a multiple) and can simulate the device going away and coming back.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE

__all__ = [
    "OPENING",
    "OPEN",
    "SILENT",
    "LOST",
    "ENDED",
    "CLOSED",
    "SourceStatus",
    "BlockCallback",
    "StatusCallback",
    "AudioSource",
    "ThreadedSource",
    "FileAudioSource",
]

OPENING, OPEN, LOST, ENDED, CLOSED = "opening", "open", "lost", "ended", "closed"
SILENT = "silent"
"""Open, but no audio arrived for a while (a stalled driver); reported by the consumer's watchdog."""


@dataclass(frozen=True)
class SourceStatus:
    """``state`` is one of OPENING, OPEN, SILENT, LOST, ENDED, CLOSED; ``message`` is for people."""

    state: str
    device: str
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.state in (OPENING, OPEN, ENDED)


BlockCallback = Callable[[np.ndarray], None]
StatusCallback = Callable[[SourceStatus], None]


class AudioSource(Protocol):
    """Delivers float32 mono blocks at ``samplerate`` from a thread of its own."""

    name: str
    samplerate: int

    def start(self, on_block: BlockCallback, on_status: StatusCallback) -> None: ...

    def stop(self) -> None: ...


class ThreadedSource:
    """``start``/``stop`` for a source whose capture loop runs on a thread of its own.

    Subclasses set ``_stop`` (an Event), ``_thread = None`` and implement ``_thread_main``.
    """

    _thread_name = "desktop-rt-source"
    _stop: threading.Event
    _thread: threading.Thread | None

    def _thread_main(self, on_block: BlockCallback, on_status: StatusCallback) -> None:
        raise NotImplementedError

    def start(self, on_block: BlockCallback, on_status: StatusCallback) -> None:
        if self._thread is not None:
            raise RuntimeError("the source is already started")
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._thread_main,
            args=(on_block, on_status),
            name=self._thread_name,
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None


# --- file replay ------------------------------------------------------------------------------


class FileAudioSource(ThreadedSource):
    """Replays audio at ``pace`` x wall-clock speed, in blocks, like a live microphone.

    Before :meth:`play` (when ``autoplay`` is False) and after the end it delivers silence, as
    an idle microphone does; ``finished`` is set once every sample of the clip was delivered.
    :meth:`simulate_loss` stops delivery and reports LOST (the clip pauses where it is);
    :meth:`simulate_return` reports OPEN and resumes.
    """

    def __init__(
        self,
        audio: str | Path | np.ndarray,
        *,
        pace: float = 1.0,
        block_seconds: float = 0.02,
        autoplay: bool = True,
        name: str | None = None,
        samplerate: int = SAMPLE_RATE,
    ):
        if isinstance(audio, np.ndarray):
            self._samples = np.asarray(audio, dtype=np.float32).reshape(-1)
            self.name = name or "test signal"
        else:
            from desktop_rt.engine.audio.file_decode import load_audio_file

            self._samples = load_audio_file(audio, samplerate)
            self.name = name or Path(audio).name
        if pace <= 0:
            raise ValueError("pace must be positive")
        self.samplerate = samplerate
        self.pace = pace
        self.block = max(1, int(samplerate * block_seconds))
        self.finished = threading.Event()
        self._playing = threading.Event()
        if autoplay:
            self._playing.set()
        self._present = threading.Event()
        self._present.set()
        self._status_changed = threading.Event()
        self._stop = threading.Event()
        self._position = 0
        self._thread: threading.Thread | None = None

    @property
    def duration(self) -> float:
        return len(self._samples) / self.samplerate

    @property
    def position(self) -> float:
        """Seconds of the clip delivered so far."""
        return self._position / self.samplerate

    def play(self) -> None:
        self._playing.set()

    def simulate_loss(self) -> None:
        self._present.clear()
        self._status_changed.set()

    def simulate_return(self) -> None:
        self._present.set()
        self._status_changed.set()

    _thread_name = "desktop-rt-file-source"

    def _thread_main(self, on_block: BlockCallback, on_status: StatusCallback) -> None:
        self._run(on_block, on_status)

    def _next_block(self) -> np.ndarray:
        if not self._playing.is_set() or self._position >= len(self._samples):
            return np.zeros(self.block, dtype=np.float32)
        block = self._samples[self._position : self._position + self.block]
        self._position += len(block)
        if len(block) < self.block:
            block = np.concatenate([block, np.zeros(self.block - len(block), dtype=np.float32)])
        return block

    def _run(self, on_block: BlockCallback, on_status: StatusCallback) -> None:
        on_status(SourceStatus(OPENING, self.name, f"Opening {self.name}…"))
        on_status(SourceStatus(OPEN, self.name, f"Listening on {self.name}"))
        interval = self.block / self.samplerate / self.pace
        deadline = time.monotonic()
        present = True
        while not self._stop.is_set():
            if self._present.is_set() != present:
                present = self._present.is_set()
                self._status_changed.clear()
                if present:
                    on_status(
                        SourceStatus(OPEN, self.name, f"{self.name} is back; listening again")
                    )
                    deadline = time.monotonic()
                else:
                    on_status(
                        SourceStatus(
                            LOST,
                            self.name,
                            f"The microphone “{self.name}” stopped delivering sound (unplugged?). "
                            "The text so far is kept; listening resumes when it is back.",
                        )
                    )
            if not present:
                self._status_changed.wait(0.1)
                if self._stop.is_set():
                    break
                continue
            was_done = self._position >= len(self._samples)
            on_block(self._next_block())
            if not was_done and self._position >= len(self._samples):
                self.finished.set()
                on_status(SourceStatus(ENDED, self.name, f"{self.name} played to the end"))
            deadline += interval
            delay = deadline - time.monotonic()
            if delay < -0.5:  # far behind (a slow machine): do not burst to catch up
                deadline = time.monotonic()
            elif delay > 0:
                self._stop.wait(delay)
        on_status(SourceStatus(CLOSED, self.name))
