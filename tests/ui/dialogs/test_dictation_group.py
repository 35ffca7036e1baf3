"""The settings dialog's dictation group: fields, the live shortcut check, the result."""

from __future__ import annotations

from desktop_rt.config import Settings
from desktop_rt.dictation.settings import DictationSettings
from desktop_rt.ui.dialogs.dictation_group import DictationGroup
from desktop_rt.ui.dialogs.settings_dialog import SettingsDialog


def test_the_group_edits_every_dictation_setting(qtbot):
    group = DictationGroup(DictationSettings())
    qtbot.addWidget(group)
    group.enabled.setChecked(True)
    group.shortcut.setText("Super+Shift+D")
    group.trigger.setCurrentIndex(group.trigger.findData("toggle"))
    group.preview.setChecked(False)
    assert group.result() == DictationSettings(
        enabled=True, shortcut="Super+Shift+D", trigger="toggle", preview=False
    )
    assert group.shortcut_problem.text() == ""
    assert group.shortcut.accessibleName() == "Dictation shortcut"


def test_a_shortcut_that_cannot_work_is_named_and_the_old_one_kept(qtbot):
    group = DictationGroup(DictationSettings(shortcut="ctrl+alt+d"))
    qtbot.addWidget(group)
    group.shortcut.setText("space")
    assert "no modifier" in group.shortcut_problem.text()
    assert group.result().shortcut == "ctrl+alt+d"


def test_the_settings_dialog_carries_the_group(qtbot):
    dialog = SettingsDialog(Settings(), devices=[])
    qtbot.addWidget(dialog)
    dialog.dictation.enabled.setChecked(True)
    assert dialog.result_settings().dictation.enabled
