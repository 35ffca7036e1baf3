"""The computer's output as an audio source: what it plays, captured through a loopback.

:class:`LoopbackSource` is an :class:`~desktop_rt.engine.audio.sources.AudioSource` like the
microphone: a thread opens the loopback of an output (the default one unless named) through
``soundcard`` at 16 kHz mono (the sound server mixes down and resamples), delivers blocks, and
reports OPENING, OPEN, LOST (no sound server, no such output, a stream that failed) and CLOSED.
After a loss it tries again every ``retry_seconds``. See docs/design/audio_sources.md.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.audio.output_devices import (
    SYSTEM_AUDIO_LABEL,
    LoopbackUnavailableError,
    loopback_microphone,
    soundcard_module,
)
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

__all__ = ["LoopbackSource"]

log = logging.getLogger(__name__)


class LoopbackSource(ThreadedSource):
    """What an output plays, as float32 mono blocks at 16 kHz. ``output``: None for the default."""

    _thread_name = "desktop-rt-loopback"

    def __init__(
        self,
        output: str | None = None,
        *,
        block_seconds: float = 0.02,
        retry_seconds: float = 1.0,
    ):
        self.output = output
        self.name = SYSTEM_AUDIO_LABEL if output is None else f"System audio of {output}"
        self.samplerate = SAMPLE_RATE
        self.block = max(1, int(SAMPLE_RATE * block_seconds))
        self.retry_seconds = retry_seconds
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _thread_main(self, on_block: BlockCallback, on_status: StatusCallback) -> None:
        on_status(SourceStatus(OPENING, self.name, f"Opening {self.name}…"))
        reported: str | None = None
        while not self._stop.is_set():
            try:
                recorder = self._open()
            except LoopbackUnavailableError as exc:
                if reported != str(exc):
                    reported = str(exc)
                    on_status(SourceStatus(LOST, self.name, str(exc)))
                self._stop.wait(self.retry_seconds)
                continue
            reported = None
            on_status(SourceStatus(OPEN, self.name, f"Listening to {self.name}"))
            failure = self._deliver(recorder, on_block)
            if failure is not None:
                reported = failure
                on_status(SourceStatus(LOST, self.name, failure))
                self._stop.wait(self.retry_seconds)
        on_status(SourceStatus(CLOSED, self.name))

    def _open(self) -> Any:
        sc = soundcard_module()
        mic = loopback_microphone(sc, self.output)
        try:
            recorder = mic.recorder(samplerate=SAMPLE_RATE, channels=1, blocksize=self.block)
            recorder.__enter__()
        except Exception as exc:  # noqa: BLE001 - the sound server refused the stream
            raise LoopbackUnavailableError(
                f"Could not open {self.name}: {exc}. Check the sound settings, then choose Retry."
            ) from exc
        return recorder

    def _deliver(self, recorder: Any, on_block: BlockCallback) -> str | None:
        """Blocks until stopped (None) or the stream fails (a message for people)."""
        failure = None
        try:
            while not self._stop.is_set():
                data = recorder.record(numframes=self.block)
                on_block(data[:, 0].copy())
        except Exception as exc:  # noqa: BLE001 - a failed stream raises RuntimeError and others
            log.info("capturing %s failed: %s", self.name, exc)
            failure = (
                f"{self.name} stopped delivering sound ({exc}). The text so far is kept; "
                "listening resumes when the output is back."
            )
        try:
            recorder.__exit__(None, None, None)
        except Exception as exc:  # noqa: BLE001 - a failed stream may fail to close, too
            log.debug("closing %s: %s", self.name, exc)
        return failure
