"""The settings dialog's "Translate to English" box, and the setting's round trip to disk."""

from __future__ import annotations

from dataclasses import replace

from desktop_rt.config import Settings, load_settings, save_settings
from desktop_rt.ui.dialogs.settings_dialog import SettingsDialog


def test_the_box_shows_and_sets_the_setting(qtbot):
    dialog = SettingsDialog(Settings(), devices=[])
    qtbot.addWidget(dialog)
    assert not dialog.translate.isChecked() and dialog.translate.accessibleName()
    dialog.translate.setChecked(True)
    result = dialog.result_settings()
    assert result.transcription.translate
    assert result == Settings().with_group(
        transcription=replace(Settings().transcription, translate=True)
    )
    again = SettingsDialog(result, devices=[])
    qtbot.addWidget(again)
    assert again.translate.isChecked() and again.result_settings() == result


def test_the_setting_is_saved_and_loaded(tmp_path):
    path = tmp_path / "settings.json"
    settings = Settings().with_group(
        transcription=replace(Settings().transcription, translate=True)
    )
    save_settings(settings, path)
    assert load_settings(path).settings.transcription.translate
