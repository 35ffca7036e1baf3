"""Which audio source(s) the window's settings ask for, made ready to start.

:func:`source_for` gives the one source of a plain session: the microphone (``input_device``),
system audio (a loopback of ``output_device``, the default output when None) or one
``application``'s sound.
:func:`meeting_sources` gives meeting mode's pair, labelled: the microphone as "You" and system
audio as "Others". See docs/design/audio_sources.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from desktop_rt.config import APPLICATION, SYSTEM_AUDIO, AudioSettings, Settings
from desktop_rt.engine.audio.app_streams import AppAudioSource
from desktop_rt.engine.audio.loopback import LoopbackSource
from desktop_rt.engine.audio.microphone import SoundDeviceSource
from desktop_rt.engine.audio.sources import AudioSource
from desktop_rt.errors import DesktopRtError

__all__ = [
    "YOU",
    "OTHERS",
    "LabelledSource",
    "NoApplicationChosenError",
    "source_for",
    "meeting_sources",
]

YOU = "You"
"""The speaker label of the microphone's words in meeting mode."""
OTHERS = "Others"
"""The speaker label of system audio's words in meeting mode."""


@dataclass(frozen=True)
class LabelledSource:
    """A source and the speaker label its words get in captions, history and exports."""

    speaker: str
    source: AudioSource


class NoApplicationChosenError(DesktopRtError):
    """The settings ask for one application's sound but name none."""


def source_for(settings: Settings) -> AudioSource:
    """The source of a one-stream session; in meeting mode the microphone (see
    :func:`meeting_sources`). The app's default source factory."""
    audio = settings.audio
    if audio.source == SYSTEM_AUDIO:
        return LoopbackSource(audio.output_device)
    if audio.source == APPLICATION:
        if not audio.application:
            raise NoApplicationChosenError(
                "No application is chosen to listen to. Choose one in Settings, under Listen to."
            )
        return AppAudioSource(audio.application)
    return SoundDeviceSource(audio.input_device)


def meeting_sources(
    audio: AudioSettings, microphone: AudioSource | None = None
) -> tuple[LabelledSource, LabelledSource]:
    """The microphone ("You"; ``microphone`` or the input device) and "Others": one
    ``application``'s sound when the settings name one (a call app), else system audio."""
    mic = microphone if microphone is not None else SoundDeviceSource(audio.input_device)
    others: AudioSource = (
        AppAudioSource(audio.application)
        if audio.application
        else LoopbackSource(audio.output_device)
    )
    return LabelledSource(YOU, mic), LabelledSource(OTHERS, others)
