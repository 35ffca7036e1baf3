"""Audio capture behind one small API: a microphone through sounddevice, or a file replayed live.

An :class:`AudioSource` is started with two callbacks and delivers float32 mono blocks at its
``samplerate`` on a thread of its own:

- ``on_block(samples)`` must return at once: the consumer copies the block into a bounded queue
  (see :class:`desktop_rt.live.capture.CaptureFeed`) and does everything else elsewhere;
- ``on_status(SourceStatus)`` reports the device opening, open, lost (unplugged, failed),
  ended (a file source reached its end) and closed. A lost device is reopened when it returns.

:class:`SoundDeviceSource` is the real microphone. :class:`FileAudioSource` replays a file (or
samples) at wall-clock pace or a multiple of it and can simulate the device going away and
coming back; tests use it where a machine has no microphone.
"""

from __future__ import annotations

import logging
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
    "LOST",
    "ENDED",
    "CLOSED",
    "SourceStatus",
    "BlockCallback",
    "StatusCallback",
    "AudioSource",
    "InputDevice",
    "list_input_devices",
    "SoundDeviceSource",
    "FileAudioSource",
]

log = logging.getLogger(__name__)

OPENING, OPEN, LOST, ENDED, CLOSED = "opening", "open", "lost", "ended", "closed"


@dataclass(frozen=True)
class SourceStatus:
    """``state`` is one of OPENING, OPEN, LOST, ENDED, CLOSED; ``message`` is for people."""

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


# --- sounddevice ------------------------------------------------------------------------------


@dataclass(frozen=True)
class InputDevice:
    index: int
    name: str
    hostapi: str
    channels: int
    default_samplerate: float
    is_default: bool


def _sounddevice():
    import sounddevice  # raises OSError when the PortAudio library is missing

    return sounddevice


def list_input_devices(refresh: bool = False) -> list[InputDevice]:
    """Input devices PortAudio sees. ``refresh`` re-scans (only while no stream is open)."""
    try:
        sd = _sounddevice()
        if refresh:
            sd._terminate()
            sd._initialize()
        hostapis = sd.query_hostapis()
        default_in = sd.default.device[0]
        devices = []
        for index, info in enumerate(sd.query_devices()):
            if info["max_input_channels"] > 0:
                devices.append(
                    InputDevice(
                        index,
                        info["name"],
                        hostapis[info["hostapi"]]["name"],
                        info["max_input_channels"],
                        float(info["default_samplerate"]),
                        index == default_in,
                    )
                )
        return devices
    except (OSError, RuntimeError, ValueError) as exc:  # no PortAudio, or PortAudio failed
        log.warning("could not list input devices: %s", exc)
        return []


class _SourceThread:
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


class SoundDeviceSource(_SourceThread):
    """A microphone via sounddevice, supervised: opened, watched, and reopened after a loss.

    ``device`` is a device name (as listed) or None for the default input. The device opens at
    16 kHz when it can, else at its default rate (the consumer resamples). A stream is lost when
    PortAudio ends it or no block arrives for ``stall_seconds``; the supervisor then re-scans
    the devices every ``retry_seconds`` and reopens the same device when it is back.
    """

    def __init__(
        self,
        device: str | None = None,
        *,
        block_seconds: float = 0.02,
        retry_seconds: float = 1.0,
        stall_seconds: float = 2.0,
    ):
        self.device = device
        self.name = device or "default microphone"
        self.samplerate = SAMPLE_RATE
        self.block_seconds = block_seconds
        self.retry_seconds = retry_seconds
        self.stall_seconds = stall_seconds
        self.overflows = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_block = 0.0

    _thread_name = "desktop-rt-mic"

    def _thread_main(self, on_block: BlockCallback, on_status: StatusCallback) -> None:
        self._supervise(on_block, on_status)

    def _device_index(self, sd) -> int | None:
        if self.device is None:
            index = sd.default.device[0]
            return None if index is None or index < 0 else int(index)
        for index, info in enumerate(sd.query_devices()):
            if info["name"] == self.device and info["max_input_channels"] > 0:
                return index
        return None

    def _open(self, sd, on_block: BlockCallback):
        index = self._device_index(sd)
        if index is None:
            return None
        info = sd.query_devices(index)
        try:
            sd.check_input_settings(
                device=index, channels=1, samplerate=SAMPLE_RATE, dtype="float32"
            )
            rate = SAMPLE_RATE
        except Exception:  # noqa: BLE001 - PortAudio says no in several ways
            rate = int(info["default_samplerate"])
        self.samplerate = rate
        self.name = info["name"]

        def callback(indata, frames, when, status) -> None:
            if status.input_overflow:
                self.overflows += 1
            self._last_block = time.monotonic()
            on_block(indata[:, 0].copy())

        stream = sd.InputStream(
            device=index,
            channels=1,
            samplerate=rate,
            dtype="float32",
            blocksize=int(rate * self.block_seconds),
            callback=callback,
        )
        self._last_block = time.monotonic()
        stream.start()
        return stream

    def _supervise(self, on_block: BlockCallback, on_status: StatusCallback) -> None:
        stream = None
        lost_reported = False
        on_status(SourceStatus(OPENING, self.name, f"Opening {self.name}…"))
        try:
            sd = _sounddevice()
        except OSError as exc:
            on_status(
                SourceStatus(
                    LOST, self.name, f"No audio system: {exc}. Install PortAudio (libportaudio2)."
                )
            )
            self._stop.wait()
            on_status(SourceStatus(CLOSED, self.name))
            return
        first = True
        while not self._stop.is_set():
            if stream is None:
                try:
                    if not first:
                        sd._terminate()  # re-scan: PortAudio lists devices once per init
                        sd._initialize()
                    stream = self._open(sd, on_block)
                except Exception as exc:  # noqa: BLE001 - any PortAudio failure means "not now"
                    log.info("opening %s failed: %s", self.name, exc)
                    stream = None
                first = False
                if stream is None:
                    if not lost_reported:
                        lost_reported = True
                        on_status(
                            SourceStatus(
                                LOST,
                                self.name,
                                f"The microphone “{self.name}” is not available. Plug it in or choose "
                                "another input in Settings; listening resumes when it is back.",
                            )
                        )
                    self._stop.wait(self.retry_seconds)
                    continue
                lost_reported = False
                on_status(SourceStatus(OPEN, self.name, f"Listening on {self.name}"))
            self._stop.wait(min(0.25, self.stall_seconds / 4))
            stalled = time.monotonic() - self._last_block > self.stall_seconds
            if not stream.active or stalled:
                self._close(stream)
                stream = None
                lost_reported = True
                on_status(
                    SourceStatus(
                        LOST,
                        self.name,
                        f"The microphone “{self.name}” stopped delivering sound (unplugged?). "
                        "The text so far is kept; listening resumes when it is back.",
                    )
                )
        if stream is not None:
            self._close(stream)
        on_status(SourceStatus(CLOSED, self.name))

    @staticmethod
    def _close(stream) -> None:
        try:
            stream.abort()
            stream.close()
        except Exception as exc:  # noqa: BLE001 - a lost device fails to close, too
            log.debug("closing a lost stream: %s", exc)


# --- file replay ------------------------------------------------------------------------------


class FileAudioSource(_SourceThread):
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
            from desktop_rt.engine.audio.codecs import load_audio_file

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
