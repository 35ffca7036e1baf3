"""Settings dialog: what the user changes is what comes back (and survives a save)."""

from __future__ import annotations

from desktop_rt.config import HANDS_FREE, Settings, load_settings, save_settings
from desktop_rt.engine.audio.microphone import InputDevice
from desktop_rt.live.capture import LevelReading
from desktop_rt.ui.dialogs.settings_dialog import SettingsDialog

DEVICES = [
    InputDevice(3, "USB Mic", "ALSA", 1, 48000.0, False),
    InputDevice(0, "Built-in", "ALSA", 2, 44100.0, True),
]


def test_settings_dialog_round_trip(qtbot, tmp_path):
    dialog = SettingsDialog(Settings(), devices=DEVICES)
    qtbot.addWidget(dialog)
    assert dialog.result_settings() == Settings()  # untouched: unchanged
    dialog.device.setCurrentIndex(dialog.device.findData("USB Mic"))
    dialog.mode.setCurrentIndex(dialog.mode.findData(HANDS_FREE))
    dialog.threshold.setValue(70)
    dialog.silence.setValue(900)
    dialog.padding.setValue(200)
    dialog.font_size.setValue(30)
    dialog.language.setCurrentIndex(dialog.language.findData("de"))
    dialog.overlay.setChecked(True)
    dialog.port.setValue(9001)
    dialog.require_key.setChecked(True)
    dialog.origins.setText("http://localhost:3000; https://example.org")
    result = dialog.result_settings()
    assert result.audio.input_device == "USB Mic" and result.audio.mode == HANDS_FREE
    assert (result.vad.threshold, result.vad.silence_duration_ms, result.vad.prefix_padding_ms) == (
        0.7,
        900,
        200,
    )
    assert result.captions.font_size == 30 and result.transcription.language == "de"
    assert result.overlay.enabled and result.server.port == 9001
    assert result.server.api_key and result.server.api_key.startswith("drt-")
    assert result.server.allowed_origins == ("http://localhost:3000", "https://example.org")
    path = tmp_path / "settings.json"
    save_settings(result, path)
    assert load_settings(path).settings == result
    # Reopened on those settings, the dialog shows them.
    again = SettingsDialog(result, devices=DEVICES)
    qtbot.addWidget(again)
    assert again.result_settings() == result
    again.require_key.setChecked(False)
    assert again.result_settings().server.api_key is None


def test_settings_dialog_meter_shows_the_threshold_live(qtbot):
    dialog = SettingsDialog(Settings(), devices=[])
    qtbot.addWidget(dialog)
    dialog.threshold.setValue(35)
    assert dialog.level_meter.threshold == 0.35
    dialog.level_meter.set_reading(LevelReading(-12.0, 0.8, 0.0))
    assert dialog.level_meter.speech == 0.8


def test_settings_dialog_keeps_a_remembered_device_that_is_unplugged(qtbot):
    settings = Settings().with_group(audio=Settings().audio.__class__(input_device="Headset"))
    dialog = SettingsDialog(settings, devices=DEVICES)
    qtbot.addWidget(dialog)
    assert "not connected" in dialog.device.currentText()
    assert dialog.result_settings().audio.input_device == "Headset"


def test_settings_dialog_theme_and_font(qtbot):
    dialog = SettingsDialog(Settings(), devices=DEVICES)
    qtbot.addWidget(dialog)
    assert dialog.theme.currentData() == "system" and dialog.font_family.currentData() is None
    dialog.theme.setCurrentIndex(dialog.theme.findData("high_contrast"))
    family = dialog.font_family.itemData(1)
    dialog.font_family.setCurrentIndex(1)
    result = dialog.result_settings()
    assert result.appearance.theme == "high_contrast" and result.appearance.font_family == family
    again = SettingsDialog(result, devices=DEVICES)
    qtbot.addWidget(again)
    assert again.result_settings() == result
