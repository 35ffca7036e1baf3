"""The "Listen to" list: outputs and applications offered, and a choice no longer there kept."""

from __future__ import annotations

from desktop_rt.config import APPLICATION, MEETING, SYSTEM_AUDIO, AudioSettings
from desktop_rt.engine.audio.output_devices import OutputDevice
from desktop_rt.ui.dialogs.source_combo import SourceChoice, source_combo

OUTPUTS = [OutputDevice("hdmi", "HDMI", True), OutputDevice("usb", "USB headset", False)]


def items(combo) -> list[tuple[str, SourceChoice]]:
    return [(combo.itemText(i), SourceChoice(*combo.itemData(i))) for i in range(combo.count())]


def test_each_output_and_playing_application_is_offered(qtbot):
    combo = source_combo(AudioSettings(), applications=["Zoom"], outputs=OUTPUTS)
    qtbot.addWidget(combo)
    offered = items(combo)
    assert ("System audio of USB headset", SourceChoice(SYSTEM_AUDIO, None, "usb")) in offered
    assert ("Only the sound of Zoom", SourceChoice(APPLICATION, "Zoom")) in offered
    assert [c for _, c in offered].count(SourceChoice(MEETING)) == 1


def test_one_output_is_just_system_audio(qtbot):
    combo = source_combo(AudioSettings(), applications=[], outputs=OUTPUTS[:1])
    qtbot.addWidget(combo)
    assert len(items(combo)) == 3


def test_a_chosen_output_that_is_gone_stays_chosen(qtbot):
    audio = AudioSettings(source=SYSTEM_AUDIO, output_device="bluetooth")
    combo = source_combo(audio, applications=[], outputs=OUTPUTS)
    qtbot.addWidget(combo)
    assert combo.currentText() == "System audio of bluetooth (not connected now)"
    assert SourceChoice(*combo.currentData()) == SourceChoice(SYSTEM_AUDIO, None, "bluetooth")
    chosen = source_combo(
        AudioSettings(source=SYSTEM_AUDIO, output_device="usb"), applications=[], outputs=OUTPUTS
    )
    qtbot.addWidget(chosen)
    assert chosen.currentText() == "System audio of USB headset"


def test_a_playing_application_can_be_meeting_modes_others(qtbot):
    combo = source_combo(AudioSettings(), applications=["Zoom"], outputs=[])
    qtbot.addWidget(combo)
    label = "Meeting: the microphone (You) and Zoom (Others)"
    assert (label, SourceChoice(MEETING, "Zoom")) in items(combo)
    gone = source_combo(
        AudioSettings(source=MEETING, application="Zoom"), applications=[], outputs=[]
    )
    qtbot.addWidget(gone)
    assert gone.currentText() == f"{label} (not playing now)"
    assert SourceChoice(*gone.currentData()) == SourceChoice(MEETING, "Zoom")
