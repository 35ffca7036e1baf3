"""Settings: input device, mode and hands-free sensitivity (with a live meter), text, overlay,
language, and the embedded server (port, API key, allowed origins).

The dialog edits a copy; :meth:`SettingsDialog.result_settings` gives the new :class:`Settings`.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt
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
    QVBoxLayout,
    QWidget,
)

from desktop_rt.config import HANDS_FREE, PUSH_TO_TALK, Settings
from desktop_rt.engine.audio.microphone import InputDevice, list_input_devices
from desktop_rt.ui.widgets.level_meter import LevelMeter

__all__ = ["SettingsDialog", "LANGUAGES"]

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
        layout.addWidget(self._audio_group(settings, devices))
        layout.addWidget(self._captions_group(settings))
        layout.addWidget(self._server_group(settings))
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
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
        form.addRow("Input device", self.device)
        self.mode = QComboBox()
        self.mode.addItem("Push-to-talk: hold Space or the Talk button", PUSH_TO_TALK)
        self.mode.addItem("Hands-free: a pause ends each turn", HANDS_FREE)
        self.mode.setCurrentIndex(self.mode.findData(settings.audio.mode))
        form.addRow("Mode", self.mode)
        self.threshold = QSlider(Qt.Orientation.Horizontal)
        self.threshold.setRange(5, 95)
        self.threshold.setValue(round(settings.vad.threshold * 100))
        self.threshold_label = QLabel()
        row = QHBoxLayout()
        row.addWidget(self.threshold, 1)
        row.addWidget(self.threshold_label)
        form.addRow("Voice threshold", row)
        self.level_meter = LevelMeter(threshold=settings.vad.threshold)
        form.addRow("Live level", self.level_meter)
        self.silence = QSpinBox()
        self.silence.setRange(100, 10_000)
        self.silence.setSingleStep(100)
        self.silence.setSuffix(" ms")
        self.silence.setValue(settings.vad.silence_duration_ms)
        form.addRow("Pause that ends a turn", self.silence)
        self.padding = QSpinBox()
        self.padding.setRange(0, 2000)
        self.padding.setSingleStep(50)
        self.padding.setSuffix(" ms")
        self.padding.setValue(settings.vad.prefix_padding_ms)
        form.addRow("Audio kept before speech", self.padding)
        self.threshold.valueChanged.connect(self._threshold_changed)
        self._threshold_changed(self.threshold.value())
        return audio

    def _captions_group(self, settings: Settings) -> QGroupBox:
        text = QGroupBox("Captions")
        form = QFormLayout(text)
        self.font_size = QSpinBox()
        self.font_size.setRange(8, 96)
        self.font_size.setValue(settings.captions.font_size)
        self.font_size.setSuffix(" pt")
        form.addRow("Text size", self.font_size)
        self.language = language_combo(settings.transcription.language)
        form.addRow("Language", self.language)
        self.overlay = QCheckBox("Show the always-on-top caption overlay")
        self.overlay.setChecked(settings.overlay.enabled)
        form.addRow(self.overlay)
        self.overlay_font = QSpinBox()
        self.overlay_font.setRange(8, 120)
        self.overlay_font.setSuffix(" pt")
        self.overlay_font.setValue(settings.overlay.font_size)
        form.addRow("Overlay text size", self.overlay_font)
        self.overlay_opacity = QDoubleSpinBox()
        self.overlay_opacity.setRange(0.1, 1.0)
        self.overlay_opacity.setSingleStep(0.05)
        self.overlay_opacity.setValue(settings.overlay.opacity)
        form.addRow("Overlay background opacity", self.overlay_opacity)
        return text

    def _server_group(self, settings: Settings) -> QGroupBox:
        server = QGroupBox("Server for other programs (OpenAI Realtime compatible)")
        form = QFormLayout(server)
        self.port = QSpinBox()
        self.port.setRange(0, 65535)
        self.port.setValue(settings.server.port)
        self.port.setToolTip("0 picks a free port")
        form.addRow("Port on 127.0.0.1", self.port)
        self.require_key = QCheckBox("Require an API key")
        self.require_key.setChecked(bool(settings.server.api_key))
        self.api_key = QLineEdit(settings.server.api_key or "")
        self.api_key.setPlaceholderText("the key clients must send")
        generate = QPushButton("Generate")
        generate.clicked.connect(lambda: self.api_key.setText(Settings.new_api_key()))
        key_row = QHBoxLayout()
        key_row.addWidget(self.api_key, 1)
        key_row.addWidget(generate)
        form.addRow(self.require_key)
        form.addRow("API key", key_row)
        self.origins = QLineEdit(", ".join(settings.server.allowed_origins))
        self.origins.setPlaceholderText(
            "e.g. http://localhost:3000 (browsers from other origins are refused)"
        )
        form.addRow("Allowed web origins", self.origins)
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
                s.audio, input_device=self.device.currentData(), mode=self.mode.currentData()
            ),
            vad=replace(
                s.vad,
                threshold=self.threshold.value() / 100,
                silence_duration_ms=self.silence.value(),
                prefix_padding_ms=self.padding.value(),
            ),
            captions=replace(s.captions, font_size=self.font_size.value()),
            overlay=replace(
                s.overlay,
                enabled=self.overlay.isChecked(),
                font_size=self.overlay_font.value(),
                opacity=round(self.overlay_opacity.value(), 2),
            ),
            transcription=replace(s.transcription, language=self.language.currentData()),
            server=replace(
                s.server, port=self.port.value(), api_key=key or None, allowed_origins=origins
            ),
        )
