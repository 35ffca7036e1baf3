"""The real microphone, through sounddevice (PortAudio): listed, opened, watched and reopened.

:func:`list_input_devices` lists the inputs PortAudio sees. :class:`SoundDeviceSource` is an
:class:`~desktop_rt.engine.audio.sources.AudioSource`: a supervisor thread opens the device, reports
a stream that ended or stalled as LOST (before it closes the stream, which can hang on a broken
driver), and reopens the same device when it is back.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.audio.sources import (
    CLOSED,
    LOST,
    OPEN,
    OPENING,
    BlockCallback,
    SourceStatus,
    StatusCallback,
    ThreadedSource,
)

__all__ = ["InputDevice", "list_input_devices", "SoundDeviceSource"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class InputDevice:
    index: int
    name: str
    hostapi: str
    channels: int
    default_samplerate: float
    is_default: bool


def _sounddevice() -> Any:
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


class SoundDeviceSource(ThreadedSource):
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

    def _device_index(self, sd: Any) -> int | None:
        if self.device is None:
            index = sd.default.device[0]
            return None if index is None or index < 0 else int(index)
        for index, info in enumerate(sd.query_devices()):
            if info["name"] == self.device and info["max_input_channels"] > 0:
                return index
        return None

    def _open(self, sd: Any, on_block: BlockCallback) -> Any:
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

        def callback(indata: np.ndarray, frames: int, when: Any, status: Any) -> None:
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
                lost_reported = True
                # Report first: closing a stream on a hung driver can hang too.
                on_status(
                    SourceStatus(
                        LOST,
                        self.name,
                        f"The microphone “{self.name}” stopped delivering sound (unplugged?). "
                        "The text so far is kept; listening resumes when it is back.",
                    )
                )
                self._close(stream)
                stream = None
        if stream is not None:
            self._close(stream)
        self._report_closed(on_status)

    def _report_closed(self, on_status: StatusCallback) -> None:
        log.info("closed %s: %d input overflows", self.name, self.overflows)
        on_status(SourceStatus(CLOSED, self.name))

    @staticmethod
    def _close(stream: Any) -> None:
        try:
            stream.abort()
            stream.close()
        except Exception as exc:  # noqa: BLE001 - a lost device fails to close, too
            log.debug("closing a lost stream: %s", exc)
