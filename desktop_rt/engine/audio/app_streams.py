"""One application's sound on Linux (PulseAudio, or PipeWire's PulseAudio server).

:func:`list_app_streams` lists the applications playing now (``pactl -f json list
sink-inputs``). :class:`AppAudioSource` is an :class:`~desktop_rt.engine.audio.sources.AudioSource`
of what one application (by its ``application.name``) plays, recorded from a monitor of its own
stream (``parec --monitor-stream``), so other sounds are left out and its routing is untouched.
While the application plays nothing it reports LOST and looks again every ``retry_seconds``.
Both tools are PulseAudio's (pulseaudio-utils). See docs/design/audio_sources.md.
"""

from __future__ import annotations

import json
import logging
import subprocess
import threading
from dataclasses import dataclass

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
from desktop_rt.errors import DesktopRtError

__all__ = ["AppStream", "AppStreamsUnavailableError", "list_app_streams", "AppAudioSource"]

log = logging.getLogger(__name__)


class AppStreamsUnavailableError(DesktopRtError):
    """The sound server cannot be asked which applications play (no pactl, no server)."""


@dataclass(frozen=True)
class AppStream:
    """One playing stream: ``index`` is the server's sink-input number (changes per stream)."""

    index: int
    application: str
    media: str


def list_app_streams() -> list[AppStream]:
    """Streams playing now, in the server's order; raises :class:`AppStreamsUnavailableError`."""
    try:
        done = subprocess.run(
            ["pactl", "-f", "json", "list", "sink-inputs"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise AppStreamsUnavailableError(
            f"Cannot list the applications playing ({exc}). Install pulseaudio-utils (pactl)."
        ) from exc
    if done.returncode != 0:
        raise AppStreamsUnavailableError(
            f"The sound server did not list its streams: {done.stderr.strip() or done.returncode}. "
            "Start PulseAudio or PipeWire (pipewire-pulse)."
        )
    try:
        inputs = json.loads(done.stdout or "[]")
        return [
            AppStream(
                int(i["index"]),
                str(i["properties"].get("application.name", "")),
                str(i["properties"].get("media.name", "")),
            )
            for i in inputs
        ]
    except (ValueError, KeyError, TypeError) as exc:
        raise AppStreamsUnavailableError(f"pactl answered something unexpected ({exc}).") from exc


class AppAudioSource(ThreadedSource):
    """What ``application`` plays, as float32 mono blocks at 16 kHz (see the module docstring)."""

    _thread_name = "desktop-rt-app-audio"

    def __init__(
        self, application: str, *, block_seconds: float = 0.02, retry_seconds: float = 1.0
    ):
        self.application = application
        self.name = f"Sound of {application}"
        self.samplerate = SAMPLE_RATE
        self.block = max(1, int(SAMPLE_RATE * block_seconds))
        self.retry_seconds = retry_seconds
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._process: subprocess.Popen[bytes] | None = None

    def stop(self) -> None:
        self._stop.set()
        process = self._process
        if process is not None and process.poll() is None:
            process.terminate()
        super().stop()

    def _thread_main(self, on_block: BlockCallback, on_status: StatusCallback) -> None:
        on_status(SourceStatus(OPENING, self.name, f"Opening {self.name}…"))
        reported = ""
        while not self._stop.is_set():
            try:
                index = self._find()
                process = self._record(index)
            except DesktopRtError as exc:
                if reported != str(exc):
                    reported = str(exc)
                    on_status(SourceStatus(LOST, self.name, str(exc)))
                self._stop.wait(self.retry_seconds)
                continue
            reported = ""  # its stream ending is reported as "not playing" by the next look
            on_status(SourceStatus(OPEN, self.name, f"Listening to {self.application}"))
            self._deliver(process, on_block)
        on_status(SourceStatus(CLOSED, self.name))

    def _find(self) -> int:
        for stream in list_app_streams():
            if stream.application == self.application:
                return stream.index
        raise AppStreamsUnavailableError(
            f"{self.application} is not playing anything; captions start when it plays."
        )

    def _record(self, index: int) -> subprocess.Popen[bytes]:
        args = ["parec", f"--monitor-stream={index}", "--format=float32le", "--raw"]
        args += [f"--rate={SAMPLE_RATE}", "--channels=1", "--latency-msec=20"]
        try:
            process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        except OSError as exc:
            raise AppStreamsUnavailableError(
                f"Cannot record {self.application} ({exc}). Install pulseaudio-utils (parec)."
            ) from exc
        self._process = process
        return process

    def _deliver(self, process: subprocess.Popen[bytes], on_block: BlockCallback) -> None:
        """Blocks until the stream ends or the source is stopped."""
        assert process.stdout is not None
        size = self.block * 4
        pending = b""
        while True:
            data = process.stdout.read(size - len(pending))
            if not data:
                break
            pending += data
            if len(pending) == size:
                on_block(np.frombuffer(pending, dtype="<f4").copy())
                pending = b""
        if process.poll() is None:
            process.terminate()
        process.wait()
        self._process = None
