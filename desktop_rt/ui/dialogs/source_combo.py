"""The settings' "Listen to" list: the microphone, system audio, meeting mode, or one application.

:func:`source_combo` builds the combo box; each item's data is a :class:`SourceChoice`, the
three :class:`~desktop_rt.config.AudioSettings` fields it sets. System audio is the default
output's, or, where there are several outputs, one of them; applications are those playing now
(Linux), plus the one chosen before when it is not playing, each alone or as meeting mode's
"Others".
"""

from __future__ import annotations

from typing import NamedTuple

from PySide6.QtWidgets import QComboBox

from desktop_rt.config import (
    APPLICATION,
    MEETING,
    MICROPHONE,
    SYSTEM_AUDIO,
    AudioSettings,
    SourceKind,
)
from desktop_rt.engine.audio.app_streams import AppStreamsUnavailableError, list_app_streams
from desktop_rt.engine.audio.output_devices import (
    SYSTEM_AUDIO_LABEL,
    OutputDevice,
    list_output_devices,
)

__all__ = ["SOURCE_NAMES", "SourceChoice", "source_combo", "playing_applications"]


class SourceChoice(NamedTuple):
    source: SourceKind
    application: str | None = None
    output_device: str | None = None

    @classmethod
    def of(cls, audio: AudioSettings) -> SourceChoice:
        """The choice ``audio`` holds (fields the source does not use count as None)."""
        app = audio.application if audio.source in (APPLICATION, MEETING) else None
        output = audio.output_device if audio.source == SYSTEM_AUDIO else None
        return cls(audio.source, app, output)


SOURCE_NAMES: dict[SourceKind, str] = {
    MICROPHONE: "The microphone (the input device)",
    SYSTEM_AUDIO: SYSTEM_AUDIO_LABEL,
    MEETING: "Meeting: the microphone (You) and system audio (Others)",
}


def playing_applications() -> list[str]:
    """Names of the applications playing now, each once ([] where they cannot be listed)."""
    try:
        names = [s.application for s in list_app_streams() if s.application]
    except AppStreamsUnavailableError:
        return []
    return list(dict.fromkeys(names))


def source_combo(
    audio: AudioSettings,
    applications: list[str] | None = None,
    outputs: list[OutputDevice] | None = None,
) -> QComboBox:
    """The combo box, on ``audio``'s choice. ``applications``, ``outputs``: None asks the system."""
    combo = QComboBox()
    for kind, label in SOURCE_NAMES.items():
        combo.addItem(label, SourceChoice(kind))
    outputs = list_output_devices() if outputs is None else outputs
    for output in outputs if len(outputs) > 1 else ():
        combo.addItem(f"System audio of {output.name}", SourceChoice(SYSTEM_AUDIO, None, output.id))
    names = playing_applications() if applications is None else applications
    for name in names:
        combo.addItem(f"Only the sound of {name}", SourceChoice(APPLICATION, name))
        combo.addItem(
            f"Meeting: the microphone (You) and {name} (Others)", SourceChoice(MEETING, name)
        )
    want = SourceChoice.of(audio)
    if want not in [SourceChoice(*combo.itemData(i)) for i in range(combo.count())]:
        if want.source == MEETING:
            label = f"Meeting: the microphone (You) and {want.application} (Others)"
            combo.addItem(f"{label} (not playing now)", want)
        elif want.application:
            combo.addItem(f"Only the sound of {want.application} (not playing now)", want)
        elif want.output_device:
            combo.addItem(f"System audio of {want.output_device} (not connected now)", want)
    for index in range(combo.count()):
        if SourceChoice(*combo.itemData(index)) == want:
            combo.setCurrentIndex(index)
    return combo
