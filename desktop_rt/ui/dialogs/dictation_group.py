"""The settings dialog's "Dictation into other apps" group: on/off, shortcut, hold or toggle,
preview. :meth:`DictationGroup.result` gives the new :class:`DictationSettings`; a shortcut
that cannot work is named under the field as it is typed (the old one is kept if saved so).
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QGroupBox, QLabel, QLineEdit

from desktop_rt.dictation.errors import DictationError
from desktop_rt.dictation.settings import DictationSettings
from desktop_rt.dictation.shortcut import parse_shortcut

__all__ = ["DictationGroup", "TRIGGER_NAMES"]

TRIGGER_NAMES = {
    "hold": "Hold the shortcut while speaking",
    "toggle": "Tap the shortcut to start, tap again to stop",
}


class DictationGroup(QGroupBox):
    """See the module docstring."""

    def __init__(self, settings: DictationSettings):
        super().__init__("Dictation into other apps")
        self._settings = settings
        form = QFormLayout(self)
        self.enabled = QCheckBox("&Dictation: type what I say into the app that has focus (X11)")
        self.enabled.setChecked(settings.enabled)
        self.enabled.setAccessibleName("Dictation into other apps")
        form.addRow(self.enabled)
        self.shortcut = QLineEdit(settings.shortcut)
        self.shortcut.setPlaceholderText("e.g. ctrl+alt+space")
        self.shortcut_problem = QLabel()
        self.shortcut_problem.setWordWrap(True)
        self._add_row(form, "Dictation &shortcut", self.shortcut)
        form.addRow(self.shortcut_problem)
        self.trigger = QComboBox()
        for key, name in TRIGGER_NAMES.items():
            self.trigger.addItem(name, key)
        self.trigger.setCurrentIndex(max(0, self.trigger.findData(settings.trigger)))
        self._add_row(form, "Hold or tap the shortc&ut", self.trigger)
        self.preview = QCheckBox("Show a &quick preview of the words not yet typed")
        self.preview.setChecked(settings.preview)
        self.preview.setAccessibleName("Dictation preview")
        form.addRow(self.preview)
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
        )
