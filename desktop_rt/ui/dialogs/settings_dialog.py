"""Settings: input device, mode and hands-free sensitivity (with a live meter), text, theme and
font, overlay, language, and the embedded server (port, API key, allowed origins).

The dialog edits a copy; :meth:`SettingsDialog.result_settings` gives the new :class:`Settings`.
Every field has a label with a mnemonic (its buddy) and an accessible name of its own.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSlider,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop_rt.config import HANDS_FREE, PUSH_TO_TALK, Settings
from desktop_rt.engine.audio.microphone import InputDevice, list_input_devices
from desktop_rt.ui.dialogs.dictation_group import DictationGroup
from desktop_rt.ui.dialogs.source_combo import source_combo
from desktop_rt.ui.widgets.level_meter import LevelMeter

__all__ = ["SettingsDialog", "LANGUAGES", "THEME_NAMES"]

THEME_NAMES = {
    "system": "Follow the system (light or dark)",
    "light": "Light",
    "dark": "Dark",
    "high_contrast": "High contrast (yellow on black)",
}

LANGUAGES = [
    (None, "Detect automatically"),
    ("en", "English"),
    ("de", "German"),
    ("fr", "French"),
    ("es", "Spanish"),
    ("it", "Italian"),
    ("pt", "Portuguese"),
    ("nl", "Dutch"),
    ("pl", "Polish"),
    ("ru", "Russian"),
    ("uk", "Ukrainian"),
    ("tr", "Turkish"),
    ("zh", "Chinese"),
    ("ja", "Japanese"),
    ("ko", "Korean"),
    ("ar", "Arabic"),
    ("hi", "Hindi"),
]


def _row(form: QFormLayout, label: str, field: QWidget | QHBoxLayout, buddy: QWidget) -> None:
    """A form row whose label (with its mnemonic) names ``buddy``, for keyboard and screen readers."""
    text = QLabel(label)
    text.setBuddy(buddy)
    buddy.setAccessibleName(label.replace("&", ""))
    form.addRow(text, field)


def font_combo(current: str | None) -> QComboBox:
    combo = QComboBox()
    combo.addItem("System font", None)
    for family in QFontDatabase.families():
        combo.addItem(family, family)
    if current and combo.findData(current) < 0:
        combo.addItem(f"{current} (not installed)", current)
    combo.setCurrentIndex(max(0, combo.findData(current)))
    return combo


def language_combo(current: str | None) -> QComboBox:
    combo = QComboBox()
    for code, name in LANGUAGES:
        combo.addItem(name if code is None else f"{name} ({code})", code)
    if current is not None and combo.findData(current) < 0:
        combo.addItem(current, current)
    combo.setCurrentIndex(max(0, combo.findData(current)))
    return combo


class SettingsDialog(QDialog):
    """See the module docstring. ``devices``: the inputs to offer (None: ask PortAudio)."""

    def __init__(
        self,
        settings: Settings,
        parent: QWidget | None = None,
        devices: list[InputDevice] | None = None,
    ):
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self._settings = settings
        layout = QVBoxLayout(self)
        # One tab per concern (Ctrl+Tab moves between them): the dialog fits small screens,
        # and each tab's mnemonics only need to differ from each other.
        self.tabs = QTabWidget()
        self.tabs.setAccessibleName("Settings pages")
        self.tabs.addTab(self._audio_group(settings, devices), "Audio")
        self.tabs.addTab(self._captions_group(settings), "Captions")
        self.tabs.addTab(self._server_group(settings), "Server")
        self.dictation = DictationGroup(settings.dictation)
        self.tabs.addTab(self.dictation, "Dictation")
        layout.addWidget(self.tabs)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        for which, text in (
            (QDialogButtonBox.StandardButton.Ok, "&OK"),
            (QDialogButtonBox.StandardButton.Cancel, "&Cancel"),
        ):
            button = buttons.button(which)
            button.setText(text)
            button.setAccessibleName(text.replace("&", ""))
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def _audio_group(self, settings: Settings, devices: list[InputDevice] | None) -> QGroupBox:
        audio = QGroupBox("Microphone and turns")
        form = QFormLayout(audio)
        self.device = QComboBox()
        self.device.addItem("System default", None)
        for device in list_input_devices() if devices is None else devices:
            self.device.addItem(f"{device.name} ({device.hostapi})", device.name)
        if settings.audio.input_device and self.device.findData(settings.audio.input_device) < 0:
            self.device.addItem(
                f"{settings.audio.input_device} (not connected)", settings.audio.input_device
            )
        self.device.setCurrentIndex(max(0, self.device.findData(settings.audio.input_device)))
        _row(form, "&Input device", self.device, self.device)
        self.source = source_combo(settings.audio)
        _row(form, "&Listen to", self.source, self.source)
        self.mode = QComboBox()
        self.mode.addItem("Push-to-talk: hold Space or the Talk button", PUSH_TO_TALK)
        self.mode.addItem("Hands-free: a pause ends each turn", HANDS_FREE)
        self.mode.setCurrentIndex(self.mode.findData(settings.audio.mode))
        _row(form, "&Mode", self.mode, self.mode)
        self.threshold = QSlider(Qt.Orientation.Horizontal)
        self.threshold.setRange(5, 95)
        self.threshold.setValue(round(settings.vad.threshold * 100))
        self.threshold.setAccessibleDescription(
            "How sure the voice detector must be before hands-free starts a turn."
        )
        self.threshold_label = QLabel()
        row = QHBoxLayout()
        row.addWidget(self.threshold, 1)
        row.addWidget(self.threshold_label)
        _row(form, "Voice &threshold", row, self.threshold)
        self.level_meter = LevelMeter(threshold=settings.vad.threshold)
        self.level_meter.setAccessibleName("Live level")
        form.addRow("Live level", self.level_meter)
        self.silence = QSpinBox()
        self.silence.setRange(100, 10_000)
        self.silence.setSingleStep(100)
        self.silence.setSuffix(" ms")
        self.silence.setValue(settings.vad.silence_duration_ms)
        _row(form, "&Pause that ends a turn", self.silence, self.silence)
        self.padding = QSpinBox()
        self.padding.setRange(0, 2000)
        self.padding.setSingleStep(50)
        self.padding.setSuffix(" ms")
        self.padding.setValue(settings.vad.prefix_padding_ms)
        _row(form, "Audio kept &before speech", self.padding, self.padding)
        self.threshold.valueChanged.connect(self._threshold_changed)
        self._threshold_changed(self.threshold.value())
        return audio

    def _captions_group(self, settings: Settings) -> QGroupBox:
        text = QGroupBox("Captions and theme")
        form = QFormLayout(text)
        self.font_size = QSpinBox()
        self.font_size.setRange(8, 96)
        self.font_size.setValue(settings.captions.font_size)
        self.font_size.setSuffix(" pt")
        _row(form, "Te&xt size", self.font_size, self.font_size)
        self.shade_uncertain = QCheckBox("&Shade words the recogniser was unsure of (dotted)")
        self.shade_uncertain.setChecked(settings.captions.shade_uncertain)
        self.shade_uncertain.setAccessibleName("Shade uncertain words")
        form.addRow(self.shade_uncertain)
        self.font_family = font_combo(settings.appearance.font_family)
        _row(form, "&Font", self.font_family, self.font_family)
        self.theme = QComboBox()
        for key, name in THEME_NAMES.items():
            self.theme.addItem(name, key)
        self.theme.setCurrentIndex(max(0, self.theme.findData(settings.appearance.theme)))
        _row(form, "T&heme", self.theme, self.theme)
        self.language = language_combo(settings.transcription.language)
        _row(form, "&Language", self.language, self.language)
        self.translate = QCheckBox("Translate to &English (a second line beneath the captions)")
        self.translate.setChecked(settings.transcription.translate)
        self.translate.setAccessibleName("Translate to English")
        form.addRow(self.translate)
        self.overlay = QCheckBox("Show the always-on-top caption o&verlay")
        self.overlay.setChecked(settings.overlay.enabled)
        self.overlay.setAccessibleName("Show the caption overlay")
        form.addRow(self.overlay)
        self.overlay_font = QSpinBox()
        self.overlay_font.setRange(8, 120)
        self.overlay_font.setSuffix(" pt")
        self.overlay_font.setValue(settings.overlay.font_size)
        _row(form, "Overla&y text size", self.overlay_font, self.overlay_font)
        self.overlay_opacity = QDoubleSpinBox()
        self.overlay_opacity.setRange(0.1, 1.0)
        self.overlay_opacity.setSingleStep(0.05)
        self.overlay_opacity.setValue(settings.overlay.opacity)
        _row(form, "Overlay back&ground opacity", self.overlay_opacity, self.overlay_opacity)
        return text

    def _server_group(self, settings: Settings) -> QGroupBox:
        server = QGroupBox("Server for other programs (OpenAI Realtime compatible)")
        form = QFormLayout(server)
        self.port = QSpinBox()
        self.port.setRange(0, 65535)
        self.port.setValue(settings.server.port)
        self.port.setToolTip("0 picks a free port")
        _row(form, "Po&rt on 127.0.0.1", self.port, self.port)
        self.require_key = QCheckBox("Require an &API key")
        self.require_key.setChecked(bool(settings.server.api_key))
        self.require_key.setAccessibleName("Require an API key")
        self.api_key = QLineEdit(settings.server.api_key or "")
        self.api_key.setPlaceholderText("the key clients must send")
        self.generate = QPushButton("Ge&nerate")
        self.generate.setAccessibleName("Generate a new API key")
        self.generate.clicked.connect(lambda: self.api_key.setText(Settings.new_api_key()))
        key_row = QHBoxLayout()
        key_row.addWidget(self.api_key, 1)
        key_row.addWidget(self.generate)
        form.addRow(self.require_key)
        _row(form, "API &key", key_row, self.api_key)
        self.origins = QLineEdit(", ".join(settings.server.allowed_origins))
        self.origins.setPlaceholderText(
            "e.g. http://localhost:3000 (browsers from other origins are refused)"
        )
        _row(form, "Allowed &web origins", self.origins, self.origins)
        self.require_key.toggled.connect(self._key_toggled)
        self._key_toggled(self.require_key.isChecked())
        return server

    def _threshold_changed(self, value: int) -> None:
        self.threshold_label.setText(f"{value / 100:.2f}")
        self.level_meter.set_threshold(value / 100)

    def _key_toggled(self, on: bool) -> None:
        self.api_key.setEnabled(on)
        if on and not self.api_key.text().strip():
            self.api_key.setText(Settings.new_api_key())

    def result_settings(self) -> Settings:
        s = self._settings
        key = self.api_key.text().strip() if self.require_key.isChecked() else ""
        origins = tuple(
            o.strip() for o in self.origins.text().replace(";", ",").split(",") if o.strip()
        )
        return s.with_group(
            audio=replace(
                s.audio,
                input_device=self.device.currentData(),
                mode=self.mode.currentData(),
                source=self.source.currentData()[0],
                application=self.source.currentData()[1],
                output_device=self.source.currentData()[2],
            ),
            vad=replace(
                s.vad,
                threshold=self.threshold.value() / 100,
                silence_duration_ms=self.silence.value(),
                prefix_padding_ms=self.padding.value(),
            ),
            captions=replace(
                s.captions,
                font_size=self.font_size.value(),
                shade_uncertain=self.shade_uncertain.isChecked(),
            ),
            appearance=replace(
                s.appearance,
                theme=self.theme.currentData(),
                font_family=self.font_family.currentData(),
            ),
            overlay=replace(
                s.overlay,
                enabled=self.overlay.isChecked(),
                font_size=self.overlay_font.value(),
                opacity=round(self.overlay_opacity.value(), 2),
            ),
            transcription=replace(
                s.transcription,
                language=self.language.currentData(),
                translate=self.translate.isChecked(),
            ),
            dictation=self.dictation.result(),
            server=replace(
                s.server, port=self.port.value(), api_key=key or None, allowed_origins=origins
            ),
        )
