"""The status area: model, microphone, server address and key (with copy buttons), clients, errors,
and "captions N s behind" while the recognizer is more than ``LAG_SHOWN_SECONDS`` behind.

A microphone that is lost or silent shows its message with a Retry button (:attr:`retry`
signal); a repair of the built-in model shows while it runs (:meth:`StatusPanel.show_repair`). Colours come from the application style sheet (ui/theme.py): labels carry object names
and an ``error`` property instead of colours of their own, so every theme keeps them readable.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget

from desktop_rt.engine.audio.sources import (
    CLOSED,
    ENDED,
    LOST,
    OPEN,
    OPENING,
    SILENT,
    SourceStatus,
)
from desktop_rt.engine.models.repair_notice import RepairNotice
from desktop_rt.ui.bridge import ServerState

__all__ = ["StatusPanel", "LAG_SHOWN_SECONDS"]

LAG_SHOWN_SECONDS = 2.0  # less lag than this is normal streaming and not shown

_DOT = {"ok": "#3f9c5a", "busy": "#d9a62b", "bad": "#c8463d", "off": "#8a94a6"}


def _dot(kind: str) -> str:
    return f'<span style="color:{_DOT[kind]}">●</span>'


def _set_error(label: QLabel, error: bool) -> None:
    if label.property("error") != error:
        label.setProperty("error", error)
        label.style().unpolish(label)
        label.style().polish(label)


class StatusPanel(QWidget):
    """Renders status values; the copy buttons put the URL or key on the clipboard."""

    retry = Signal()  # the user asked to reopen the microphone

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)
        self._url = ""
        self._key = ""
        self._build_widgets()
        self._build_layout()
        self.set_server(ServerState("stopped", ""))
        self.set_mic(None)
        self.set_clients(0)
        self.set_lag(0.0)
        self.clear_message()

    def _build_widgets(self) -> None:
        self.model_label = QLabel()
        self.mic_label = QLabel()
        self.server_label = QLabel()
        self.server_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.key_label = QLabel()
        self.clients_label = QLabel()
        self.lag_label = QLabel()
        self.lag_label.setAccessibleName("Caption delay")
        self.copy_url = QPushButton("Copy URL")
        self.copy_key = QPushButton("Copy key")
        self.copy_url.clicked.connect(lambda: self._copy(self._url))
        self.copy_key.clicked.connect(lambda: self._copy(self._key))
        self.message_label = QLabel()
        self.message_label.setWordWrap(True)
        self.message_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.retry_button = QPushButton("&Retry")
        self.retry_button.clicked.connect(self.retry.emit)
        self.dismiss = QToolButton()
        self.dismiss.setText("✕")
        self.dismiss.setAutoRaise(True)
        self.dismiss.clicked.connect(self.clear_message)
        for button, name, description in (
            (self.copy_url, "Copy server URL", "Copies the server's address for other programs."),
            (self.copy_key, "Copy API key", "Copies the key other programs must send."),
            (self.retry_button, "Retry microphone", "Closes the microphone and opens it again."),
            (self.dismiss, "Dismiss message", "Hides this message."),
        ):
            button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
            button.setAccessibleName(name)
            button.setAccessibleDescription(description)
            button.setToolTip(description)
        self.message_label.setAccessibleName("Status message")

    def _build_layout(self) -> None:
        grid = QGridLayout(self)
        grid.setContentsMargins(10, 6, 10, 6)
        grid.setHorizontalSpacing(10)
        grid.setVerticalSpacing(3)

        def title(text: str) -> QLabel:
            label = QLabel(text)
            label.setObjectName("secondaryText")
            return label

        grid.addWidget(title("Model"), 0, 0)
        grid.addWidget(self.model_label, 0, 1)
        grid.addWidget(title("Microphone"), 1, 0)
        grid.addWidget(self.mic_label, 1, 1)
        grid.addWidget(title("Server"), 0, 2)
        server_row = QHBoxLayout()
        server_row.addWidget(self.server_label, 1)
        server_row.addWidget(self.copy_url)
        grid.addLayout(server_row, 0, 3)
        grid.addWidget(title("API key"), 1, 2)
        key_row = QHBoxLayout()
        key_row.addWidget(self.key_label, 1)
        key_row.addWidget(self.copy_key)
        grid.addLayout(key_row, 1, 3)
        grid.addWidget(title("Clients"), 2, 2)
        grid.addWidget(self.clients_label, 2, 3)
        grid.addWidget(self.lag_label, 2, 0, 1, 2)
        message_row = QHBoxLayout()
        message_row.addWidget(self.message_label, 1)
        message_row.addWidget(self.retry_button, 0, Qt.AlignmentFlag.AlignTop)
        message_row.addWidget(self.dismiss, 0, Qt.AlignmentFlag.AlignTop)
        grid.addLayout(message_row, 3, 0, 1, 4)
        grid.setColumnStretch(1, 1)
        grid.setColumnStretch(3, 1)

    # ---- values ----------------------------------------------------------------------------------

    def set_server(self, state: ServerState) -> None:
        kind = {"ready": "ok", "starting": "busy", "failed": "bad"}.get(state.state, "off")
        words = {
            "ready": "ready",
            "starting": "loading…",
            "failed": "failed",
            "stopped": "stopped",
        }[state.state]
        self.model_label.setText(f"{_dot(kind)} {state.model or '—'} <i>({words})</i>")
        self._url = state.url
        self.server_label.setText(
            state.url if state.url else ("starting…" if state.state == "starting" else "—")
        )
        self.copy_url.setEnabled(bool(state.url))
        self._key = state.api_key or ""
        if state.api_key:
            self.key_label.setText("required (clients send it as a Bearer token)")
        else:
            self.key_label.setText("not required (local connections only)")
        self.copy_key.setVisible(bool(state.api_key))
        if state.state == "failed":
            self.show_message(state.message)
        elif state.state == "ready" and state.message:
            self.show_message(state.message, error=False)

    def set_mic(self, status: SourceStatus | None) -> None:
        if status is None:
            self.mic_label.setText(f"{_dot('off')} not listening")
            return
        kind = {
            OPEN: "ok",
            ENDED: "ok",
            OPENING: "busy",
            SILENT: "bad",
            LOST: "bad",
            CLOSED: "off",
        }.get(status.state, "off")
        words = {
            OPEN: "listening",
            ENDED: "listening",
            OPENING: "opening…",
            SILENT: "silent",
            LOST: "unavailable",
            CLOSED: "stopped",
        }.get(status.state, status.state)
        self.mic_label.setText(f"{_dot(kind)} {status.device} <i>({words})</i>")
        problem = status.state in (LOST, SILENT)
        if problem:
            self.show_message(status.message)
            self.retry_button.setVisible(True)
        elif status.state == OPEN and self.message_label.property("mic"):
            self.clear_message()
        self.message_label.setProperty("mic", problem)

    def set_clients(self, count: int) -> None:
        self.clients_label.setText(
            "no other programs"
            if count == 0
            else f"{count} other program{'s' if count != 1 else ''} connected"
        )

    def set_lag(self, seconds: float) -> None:
        """Show how far captions are behind, only past ``LAG_SHOWN_SECONDS``."""
        behind = seconds > LAG_SHOWN_SECONDS
        self.lag_label.setText(f"{_dot('busy')} captions {seconds:.0f} s behind" if behind else "")
        self.lag_label.setVisible(behind)

    def show_repair(self, notice: RepairNotice) -> None:
        """A rebuild of the built-in model: shown while under way, then what was rebuilt."""
        self.show_message(notice.message, error=False)

    def show_message(self, text: str, error: bool = True, *, mic: bool = False) -> None:
        """Show ``text`` (red when ``error``); ``mic``: it goes once the microphone is open."""
        if not text:
            return
        _set_error(self.message_label, error)
        self.message_label.setText(text)
        self.message_label.setVisible(True)
        self.dismiss.setVisible(True)
        self.retry_button.setVisible(False)
        self.message_label.setProperty("mic", mic)

    def clear_message(self) -> None:
        self.message_label.clear()
        self.message_label.setVisible(False)
        self.dismiss.setVisible(False)
        self.retry_button.setVisible(False)

    @property
    def message(self) -> str:
        return self.message_label.text()

    def _copy(self, text: str) -> None:
        if text:
            QGuiApplication.clipboard().setText(text)
