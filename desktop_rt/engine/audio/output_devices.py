"""The computer's outputs whose sound can be captured (loopback), through ``soundcard``.

:func:`soundcard_module` imports soundcard or raises :class:`LoopbackUnavailableError` with a
message for people (on Linux the import itself connects to PulseAudio or PipeWire's PulseAudio
server, so "no sound server" surfaces here). :func:`list_output_devices` lists the outputs, the
default first; :func:`loopback_microphone` finds the loopback input that records one output.
Why soundcard: docs/design/audio_sources.md.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from desktop_rt.errors import DesktopRtError

__all__ = [
    "SYSTEM_AUDIO_LABEL",
    "LoopbackUnavailableError",
    "OutputDevice",
    "soundcard_module",
    "list_output_devices",
    "loopback_microphone",
]

log = logging.getLogger(__name__)

SYSTEM_AUDIO_LABEL = "System audio (what this computer plays)"


class LoopbackUnavailableError(DesktopRtError):
    """The computer's output cannot be captured here (no sound server, no such output)."""


@dataclass(frozen=True)
class OutputDevice:
    """An output (speaker) as soundcard lists it: ``id`` is the backend's, ``name`` for people."""

    id: str
    name: str
    is_default: bool


def soundcard_module() -> Any:
    """The imported ``soundcard`` package, or :class:`LoopbackUnavailableError`."""
    try:
        import soundcard
    except ImportError as exc:
        raise LoopbackUnavailableError(
            "Capturing system audio needs the soundcard package: pip install soundcard."
        ) from exc
    except Exception as exc:  # noqa: BLE001 - soundcard connects at import; any failure means no server
        raise LoopbackUnavailableError(
            f"No sound server to capture system audio from ({type(exc).__name__}: {exc}). "
            "Start PulseAudio or PipeWire (pipewire-pulse), then choose Retry."
        ) from exc
    return soundcard


def list_output_devices() -> list[OutputDevice]:
    """Outputs whose sound can be captured, the default first; [] when none can be."""
    try:
        sc = soundcard_module()
        default = sc.default_speaker()
        speakers = sc.all_speakers()
    except Exception as exc:  # noqa: BLE001 - a listing never fails the settings dialog
        log.warning("could not list output devices: %s", exc)
        return []
    devices = [OutputDevice(str(s.id), str(s.name), s.id == default.id) for s in speakers]
    return sorted(devices, key=lambda d: not d.is_default)


def loopback_microphone(sc: Any, output: str | None) -> Any:
    """The loopback input of ``output`` (a speaker id or name; None: the default output).

    Raises :class:`LoopbackUnavailableError` when there is no such output or it has no loopback.
    """
    try:
        speaker = sc.default_speaker() if output is None else sc.get_speaker(output)
        loopbacks = [m for m in sc.all_microphones(include_loopback=True) if m.isloopback]
    except Exception as exc:  # noqa: BLE001 - soundcard raises IndexError, RuntimeError, ...
        which = "the default output" if output is None else f"the output “{output}”"
        raise LoopbackUnavailableError(
            f"Cannot capture {which}: {exc}. Choose another output in Settings."
        ) from exc
    # PulseAudio names a sink's monitor "<sink id>.monitor"; WASAPI reuses the speaker's id.
    for mic in loopbacks:
        if mic.id in (speaker.id, f"{speaker.id}.monitor"):
            return mic
    for mic in loopbacks:
        if speaker.name in mic.name:
            return mic
    raise LoopbackUnavailableError(
        f"The output “{speaker.name}” offers no loopback to capture from. On macOS install a "
        "loopback device (BlackHole) and make it the output; see docs/design/audio_sources.md."
    )
