"""The "Share captions" dialog: on/off, the page's link as text and as a QR code, Copy, New link.

It renders :class:`~desktop_rt.live.caption_share.ShareState` values and forwards the user's
choices to :class:`~desktop_rt.ui.caption_share.CaptionShareControl`; starting or stopping the
listener happens on the control's helper thread, never here.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import segno
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QPixmap
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop_rt.live.caption_share import ShareState
from desktop_rt.ui.live_page import describe

if TYPE_CHECKING:
    from desktop_rt.ui.caption_share import CaptionShareControl

__all__ = ["ShareCaptionsDialog", "qr_pixmap"]


def qr_pixmap(text: str, scale: int = 6) -> QPixmap:
    """``text`` as a QR code (segno, pure Python), black on white with a quiet zone."""
    buffer = io.BytesIO()
    segno.make(text, error="m").save(buffer, kind="png", scale=scale, border=4)
    pixmap = QPixmap()
    pixmap.loadFromData(buffer.getvalue(), "PNG")
    return pixmap


class ShareCaptionsDialog(QDialog):
    """See the module docstring."""

    def __init__(self, control: CaptionShareControl, parent: QWidget | None = None):
        super().__init__(parent)
        self.control = control
        self.setWindowTitle("Share captions")
        self.enabled = QCheckBox("&Share live captions with screens on this network")
        self.enabled.setChecked(control.settings.enabled)
        describe(
            self.enabled,
            "Share captions",
            "Phones, a projector or another computer on this network can open a read-only "
            "caption page.",
        )
        self.url = QLineEdit()
        self.url.setReadOnly(True)
        describe(self.url, "Caption page link", "Open this link in a browser on another screen.")
        self.qr = QLabel()
        self.qr.setAlignment(Qt.AlignmentFlag.AlignCenter)
        describe(self.qr, "QR code", "Scan it with a phone to open the caption page.")
        self.copy_button = QPushButton("&Copy link")
        describe(self.copy_button, "Copy link", "Copy the caption page's link to the clipboard.")
        self.new_button = QPushButton("&New link")
        describe(self.new_button, "New link", "Make a new link; the old one stops working.")
        self.status = QLabel()
        self.status.setWordWrap(True)
        describe(self.status, "Sharing status", "Whether captions are shared, or why not.")
        self._layout()
        self.enabled.toggled.connect(control.set_shared)
        self.copy_button.clicked.connect(self.copy_link)
        self.new_button.clicked.connect(control.new_link)
        control.state_changed.connect(self.show_state)
        self.show_state(control.state)

    def _layout(self) -> None:
        row = QHBoxLayout()
        row.addWidget(self.url, 1)
        row.addWidget(self.copy_button)
        row.addWidget(self.new_button)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.enabled)
        layout.addLayout(row)
        layout.addWidget(self.qr)
        layout.addWidget(self.status)
        layout.addWidget(buttons)

    def show_state(self, state: ShareState) -> None:
        self.url.setText(state.url)
        self.status.setText(state.message)
        for widget in (self.url, self.copy_button, self.new_button):
            widget.setEnabled(state.shared)
        if state.shared:
            self.qr.setPixmap(qr_pixmap(state.url))
        else:
            self.qr.clear()
            self.qr.setText("Not shared")

    def copy_link(self) -> None:
        clipboard = QGuiApplication.clipboard()
        if clipboard is not None and self.url.text():
            clipboard.setText(self.url.text())
