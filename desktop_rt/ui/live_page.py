"""The Live tab: listen button, mode switch, text size, overlay toggle, captions, talk button, meter.

:class:`LivePage` lays the controls out in Tab order (top row left to right, captions, talk
button), names and describes each for screen readers, and renders state it is given
(``set_listening``, ``set_talking``, ``set_mode``, ``set_server``, ``set_speech``). The main
window connects the controls to the controller. :meth:`LivePage.is_talk_target` says where Space
means "talk": the captions, the talk button, the page itself.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop_rt.config import HANDS_FREE, Settings
from desktop_rt.live.embedded_server import ServerState
from desktop_rt.ui.widgets.caption_view import CaptionView
from desktop_rt.ui.widgets.level_meter import LevelMeter
from desktop_rt.ui.widgets.wrapped_placeholder import WrappedPlaceholder

__all__ = ["LivePage", "describe"]

_TALK = "Hold to talk  (Space)"


def describe(widget: QWidget, name: str, description: str) -> None:
    """Give ``widget`` an accessible name and description (the tooltip says the same)."""
    widget.setAccessibleName(name)
    widget.setAccessibleDescription(description)
    if not widget.toolTip():
        widget.setToolTip(description)


class LivePage(QWidget):
    """See the module docstring."""

    def __init__(self, settings: Settings, parent: QWidget | None = None):
        super().__init__(parent)
        self.captions = CaptionView(font_size=settings.captions.font_size)
        WrappedPlaceholder(self.captions)  # Qt would cut a long placeholder after one line
        self.level_meter = LevelMeter(threshold=settings.vad.threshold)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 6)
        layout.addLayout(self._build_top(settings))
        layout.addWidget(self.captions, 1)
        layout.addLayout(self._build_bottom())
        self._describe()
        chain = [
            self.listen_button,
            self.ptt_button,
            self.hf_button,
            self.font_spin,
            self.overlay_button,
            self.captions,
            self.talk_button,
        ]
        for first, second in zip(chain, chain[1:], strict=False):
            QWidget.setTabOrder(first, second)
        self._server = ServerState("stopped", "")
        self._listening = False
        self._mode: str = settings.audio.mode

    def _build_top(self, settings: Settings) -> QHBoxLayout:
        top = QHBoxLayout()
        self.listen_button = QPushButton("● Start listening")
        self.listen_button.setObjectName("listenButton")
        self.listen_button.setCheckable(True)
        self.ptt_button = QPushButton("Push-to-talk")
        self.ptt_button.setObjectName("modeLeft")
        self.hf_button = QPushButton("Hands-free")
        self.hf_button.setObjectName("modeRight")
        # Not an exclusive QButtonGroup: Tab would skip the unchecked one. set_mode() keeps
        # exactly one checked, whatever a click did.
        for button in (self.ptt_button, self.hf_button):
            button.setCheckable(True)
        self.font_spin = QSpinBox()
        self.font_spin.setRange(10, 72)
        self.font_spin.setValue(settings.captions.font_size)
        self.font_spin.setSuffix(" pt")
        self.overlay_button = QPushButton("Overlay")
        self.overlay_button.setCheckable(True)
        self.overlay_button.setChecked(settings.overlay.enabled)
        for button in (self.listen_button, self.ptt_button, self.hf_button, self.overlay_button):
            button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        top.addWidget(self.listen_button)
        top.addSpacing(12)
        mode_row = QHBoxLayout()
        mode_row.setSpacing(0)
        mode_row.addWidget(self.ptt_button)
        mode_row.addWidget(self.hf_button)
        top.addLayout(mode_row)
        top.addStretch(1)
        size_label = QLabel("Text &size")
        size_label.setBuddy(self.font_spin)
        top.addWidget(size_label)
        top.addWidget(self.font_spin)
        top.addWidget(self.overlay_button)
        return top

    def _build_bottom(self) -> QHBoxLayout:
        bottom = QHBoxLayout()
        self.talk_button = QPushButton(_TALK)
        self.talk_button.setObjectName("talkButton")
        self.talk_button.setMinimumHeight(46)
        self.talk_button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        meter_box = QVBoxLayout()
        meter_box.setSpacing(2)
        meter_title = QLabel("Microphone level, and voice (the line is the hands-free threshold)")
        meter_title.setObjectName("secondaryText")
        self.speech_label = QLabel("")
        self.speech_label.setObjectName("speechLabel")
        meter_box.addWidget(meter_title)
        meter_box.addWidget(self.level_meter)
        meter_box.addWidget(self.speech_label)
        bottom.addWidget(self.talk_button, 2)
        bottom.addSpacing(12)
        bottom.addLayout(meter_box, 3)
        return bottom

    def _describe(self) -> None:
        describe(self.listen_button, "Start listening", "Starts or stops the microphone (Ctrl+L).")
        describe(
            self.ptt_button,
            "Push-to-talk mode",
            "Records only while you hold Space or the Talk button (Ctrl+M switches mode).",
        )
        describe(
            self.hf_button,
            "Hands-free mode",
            "Records all the time; a pause ends each turn (Ctrl+M switches mode).",
        )
        describe(self.font_spin, "Caption text size", "Caption size in points (Ctrl+= / Ctrl+-).")
        describe(
            self.overlay_button,
            "Caption overlay",
            "Shows the captions in an always-on-top strip (Ctrl+Shift+O).",
        )
        describe(
            self.captions,
            "Live captions",
            "The words heard in this session, newest last; tentative words are in italics. "
            "Hold Space here to talk.",
        )
        describe(self.talk_button, "Talk", "Hold to record a turn; release to finish it.")
        describe(self.level_meter, "Microphone level", self.level_meter.toolTip())
        describe(self.speech_label, "Voice activity", "Says when the voice detector hears speech.")

    # ---- rendering ---------------------------------------------------------------------------

    def is_talk_target(self, widget: QWidget | None) -> bool:
        """Space means "talk" here: the page, the captions or the talk button."""
        if widget is None or widget is self:
            return True
        return (
            widget is self.talk_button
            or widget is self.captions
            or (self.captions.isAncestorOf(widget))
        )

    def set_server(self, state: ServerState) -> None:
        self._server = state
        self.listen_button.setEnabled(state.state == "ready")
        self._placeholder()

    def set_listening(self, on: bool) -> None:
        self._listening = on
        self.listen_button.setChecked(on)
        label = "Stop listening" if on else "Start listening"
        self.listen_button.setText(("■ " if on else "● ") + label)
        self.listen_button.setAccessibleName(label)
        self.talk_button.setEnabled(on and self._mode != HANDS_FREE)
        if not on:
            self.level_meter.reset()
            self.set_speech(False)
        self._placeholder()

    def set_talking(self, on: bool) -> None:
        self.talk_button.setProperty("talking", on)
        self.talk_button.setText("Talking… release to finish" if on else _TALK)
        self.talk_button.style().unpolish(self.talk_button)
        self.talk_button.style().polish(self.talk_button)

    def set_mode(self, mode: str) -> None:
        self._mode = mode
        hands_free = mode == HANDS_FREE
        self.ptt_button.setChecked(not hands_free)
        self.hf_button.setChecked(hands_free)
        self.talk_button.setEnabled(not hands_free and self._listening)
        self.talk_button.setText("Hands-free: just speak" if hands_free else _TALK)
        self.set_speech(False)
        self._placeholder()

    def set_speech(self, on: bool) -> None:
        self.speech_label.setText("hearing speech…" if on and self._listening else "")

    def _placeholder(self) -> None:
        state = self._server.state
        if state == "failed":
            text = "The speech model is not available; the message below says why."
        elif state != "ready":
            text = "Loading the speech model… Captions appear here once it is ready."
        elif not self._listening:
            text = "Not listening. Press Start listening (Ctrl+L) to begin."
        elif self._mode == HANDS_FREE:
            text = "Just speak: a pause ends each turn."
        else:
            text = "Hold Space or the Talk button, and speak."
        self.captions.setPlaceholderText(text)
