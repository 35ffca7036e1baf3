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


def test_the_group_chooses_typing_or_pasting(qtbot):
    group = DictationGroup(DictationSettings(typing="paste"))
    qtbot.addWidget(group)
    assert group.typing.currentData() == "paste"
    assert group.typing.accessibleName() == "Put the words in by"
    group.typing.setCurrentIndex(group.typing.findData("type"))
    assert group.result().typing == "type"
    assert DictationSettings().typing == "type"  # typing stays the default


def test_on_wayland_the_group_shows_the_command_to_bind_instead_of_the_shortcut(qtbot):
    group = DictationGroup(DictationSettings(shortcut="ctrl+alt+d"), {"WAYLAND_DISPLAY": "w-0"})
    qtbot.addWidget(group)
    group.show()
    assert group.binding is not None and group.binding.isVisible()
    text = group.binding.text()
    assert "exec desktop-rt dictate press" in text and "desktop-rt dictate toggle" in text
    assert not group.shortcut.isVisible()
    assert group.result().shortcut == "ctrl+alt+d"


def test_on_x11_there_is_no_binding_text(qtbot):
    group = DictationGroup(DictationSettings(), {"DISPLAY": ":0", "XDG_SESSION_TYPE": "x11"})
    qtbot.addWidget(group)
    assert group.binding is None


def test_the_group_chooses_typing_each_turn_when_it_ends(qtbot):
    group = DictationGroup(DictationSettings())
    qtbot.addWidget(group)
    assert not group.at_turn_end.isChecked()  # words as they come stays the default
    assert "&" in group.at_turn_end.text() and group.at_turn_end.accessibleName()
    group.at_turn_end.setChecked(True)
    assert group.result() == DictationSettings(at_turn_end=True)
