"""The settings dialog's "Dictation into other apps" group: on/off, shortcut, hold or toggle,
typing or pasting, preview, typing each turn when it ends. :meth:`DictationGroup.result`
gives the new :class:`DictationSettings`; a shortcut that cannot work is named under the
field as it is typed (the old one is kept if saved so). On Wayland, where the shortcut is
bound in the compositor, the commands to bind are shown in place of the shortcut field.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QGroupBox, QLabel, QLineEdit

from desktop_rt.dictation.errors import DictationError
from desktop_rt.dictation.settings import DictationSettings
from desktop_rt.dictation.shortcut import parse_shortcut
from desktop_rt.dictation.typer_choice import session_kind

__all__ = ["DictationGroup", "TRIGGER_NAMES", "TYPING_NAMES", "WAYLAND_BINDING"]

TRIGGER_NAMES = {
    "hold": "Hold the shortcut while speaking",
    "toggle": "Tap the shortcut to start, tap again to stop",
}
TYPING_NAMES = {
    "type": "Type the words key by key",
    "paste": "Paste the words (clipboard and Ctrl+V; your clipboard is put back)",
}
WAYLAND_BINDING = (
    "On Wayland, bind a key in your desktop's keyboard settings. Sway: "
    "<code>bindsym --no-repeat Ctrl+Alt+space exec desktop-rt dictate press</code> and "
    "<code>bindsym --release Ctrl+Alt+space exec desktop-rt dictate release</code>; "
    "GNOME or KDE custom shortcut: <code>desktop-rt dictate toggle</code>."
)


class DictationGroup(QGroupBox):
    """See the module docstring."""

    def __init__(self, settings: DictationSettings, env: Mapping[str, str] | None = None):
        super().__init__("Dictation into other apps")
        self._settings = settings
        form = QFormLayout(self)
        self.enabled = QCheckBox("&Dictation: type what I say into the app that has focus")
        self.enabled.setChecked(settings.enabled)
        self.enabled.setAccessibleName("Dictation into other apps")
        form.addRow(self.enabled)
        self.shortcut = QLineEdit(settings.shortcut)
        self.shortcut.setPlaceholderText("e.g. ctrl+alt+space")
        self.shortcut_problem = QLabel()
        self.shortcut_problem.setWordWrap(True)
        if session_kind(os.environ if env is None else env) == "wayland":
            self.binding: QLabel | None = QLabel(WAYLAND_BINDING)
            self.binding.setWordWrap(True)
            self.binding.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            form.addRow(self.binding)
        else:
            self.binding = None
            self._add_row(form, "Dictation &shortcut", self.shortcut)
            form.addRow(self.shortcut_problem)
        self.trigger = QComboBox()
        for key, name in TRIGGER_NAMES.items():
            self.trigger.addItem(name, key)
        self.trigger.setCurrentIndex(max(0, self.trigger.findData(settings.trigger)))
        self._add_row(form, "Hold or tap the shortc&ut", self.trigger)
        self.typing = QComboBox()
        for key, name in TYPING_NAMES.items():
            self.typing.addItem(name, key)
        self.typing.setCurrentIndex(max(0, self.typing.findData(settings.typing)))
        self._add_row(form, "Put the words in by", self.typing)
        self.preview = QCheckBox("Show a &quick preview of the words not yet typed")
        self.preview.setChecked(settings.preview)
        self.preview.setAccessibleName("Dictation preview")
        form.addRow(self.preview)
        self.at_turn_end = QCheckBox("Type each turn &when it ends, heard whole (more accurate)")
        self.at_turn_end.setChecked(settings.at_turn_end)
        self.at_turn_end.setAccessibleName("Type each turn when it ends")
        self.at_turn_end.setToolTip(
            "Nothing is typed while you speak; when the turn ends its completed text, heard "
            "whole as offline recognition hears it, is typed once."
        )
        form.addRow(self.at_turn_end)
        self.shortcut.textChanged.connect(self._check)
        self._check(self.shortcut.text())

    @staticmethod
    def _add_row(form: QFormLayout, label: str, field: QLineEdit | QComboBox) -> None:
        text = QLabel(label)
        text.setBuddy(field)
        field.setAccessibleName(label.replace("&", ""))
        form.addRow(text, field)

    def _check(self, text: str) -> bool:
        try:
            parse_shortcut(text)
        except DictationError as exc:
            self.shortcut_problem.setText(str(exc))
            return False
        self.shortcut_problem.setText("")
        return True

    def result(self) -> DictationSettings:
        text = self.shortcut.text().strip()
        shortcut = text if self._check(text) else self._settings.shortcut
        return replace(
            self._settings,
            enabled=self.enabled.isChecked(),
            shortcut=shortcut,
            trigger=self.trigger.currentData(),
            preview=self.preview.isChecked(),
            typing=self.typing.currentData(),
            at_turn_end=self.at_turn_end.isChecked(),
        )
