"""Settings dialog: what the window listens to (microphone, system audio, meeting, one app)."""

from __future__ import annotations

from dataclasses import replace

from desktop_rt.config import APPLICATION, MEETING, MICROPHONE, SYSTEM_AUDIO, Settings
from desktop_rt.engine.audio.microphone import InputDevice
from desktop_rt.engine.audio.output_devices import SYSTEM_AUDIO_LABEL
from desktop_rt.ui.dialogs.settings_dialog import SettingsDialog
from desktop_rt.ui.dialogs.source_combo import SourceChoice
from tests.support.pulse_daemon import play_as, pulse_daemon

DEVICES = [InputDevice(0, "Built-in", "ALSA", 2, 44100.0, True)]


def choose(dialog: SettingsDialog, data: SourceChoice) -> None:
    for index in range(dialog.source.count()):
        if SourceChoice(*dialog.source.itemData(index)) == data:
            dialog.source.setCurrentIndex(index)
            return
    raise AssertionError(f"no item {data}")


def test_the_source_is_chosen_and_shown_again(qtbot):
    dialog = SettingsDialog(Settings(), devices=DEVICES)
    qtbot.addWidget(dialog)
    labels = [dialog.source.itemText(i) for i in range(dialog.source.count())]
    assert SYSTEM_AUDIO_LABEL in labels
    assert SourceChoice(*dialog.source.currentData()) == SourceChoice(MICROPHONE)
    assert dialog.result_settings() == Settings()
    for kind in (SYSTEM_AUDIO, MEETING):
        choose(dialog, SourceChoice(kind))
        result = dialog.result_settings()
        assert result == Settings().with_group(audio=replace(Settings().audio, source=kind))
        again = SettingsDialog(result, devices=DEVICES)
        qtbot.addWidget(again)
        assert again.result_settings() == result
    assert dialog.source.accessibleName()


def opened(qtbot, settings: Settings) -> SettingsDialog:
    """A new dialog: it lists the application streams playing as it opens."""
    dialog = SettingsDialog(settings, devices=DEVICES)
    qtbot.addWidget(dialog)
    return dialog


def test_an_application_playing_now_can_be_chosen_and_stays_when_it_stops(qtbot):
    daemon = pulse_daemon()
    player = play_as(daemon, "beckett", "Dialog Player")
    shown: list[SettingsDialog] = []  # the player's stream is another process's: reopen

    def offers_the_player() -> bool:
        shown.append(opened(qtbot, Settings()))
        source = shown[-1].source
        labels = [source.itemText(i) for i in range(source.count())]
        return "Only the sound of Dialog Player" in labels

    try:
        qtbot.waitUntil(offers_the_player, timeout=10_000)
    finally:
        player.terminate()
        player.wait(10)
    dialog = shown[-1]
    choose(dialog, SourceChoice(APPLICATION, "Dialog Player"))
    result = dialog.result_settings()
    assert (result.audio.source, result.audio.application) == (APPLICATION, "Dialog Player")

    def shows_it_stopped() -> bool:  # the choice is still offered, and still chosen
        shown.append(opened(qtbot, result))
        return shown[-1].source.currentText().endswith("(not playing now)")

    qtbot.waitUntil(shows_it_stopped, timeout=10_000)
    again = shown[-1]
    assert again.source.currentText() == "Only the sound of Dialog Player (not playing now)"
    assert again.result_settings() == result
