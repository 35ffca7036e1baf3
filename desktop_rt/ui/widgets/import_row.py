"""The progress row of a file import: "Importing name.mp3: 42%" on a bar, and Cancel.

Hidden while nothing is imported. :meth:`ImportRow.begin` shows it for a file, :meth:`update`
moves the bar (a busy bar when the file does not declare its length), :meth:`end` hides it.
:attr:`ImportRow.cancel` is emitted when the user presses Cancel.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QProgressBar, QPushButton, QWidget

from desktop_rt.live.file_import import ImportProgress

__all__ = ["ImportRow"]


class ImportRow(QWidget):
    """See the module docstring."""

    cancel = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.bar = QProgressBar()
        self.bar.setRange(0, 100)
        self.bar.setTextVisible(True)
        self.bar.setAccessibleName("File import progress")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setAccessibleName("Cancel the file import")
        self.cancel_button.setToolTip("Stop importing this file; nothing of it is saved")
        self.cancel_button.clicked.connect(self._cancel)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        layout.addWidget(self.bar, 1)
        layout.addWidget(self.cancel_button)
        self._name = ""
        self.setVisible(False)

    @property
    def text(self) -> str:
        return self.bar.format()

    def begin(self, name: str) -> None:
        self._name = name
        self.bar.setRange(0, 100)
        self.bar.setValue(0)
        self.bar.setFormat(f"Importing {name}: 0%")
        self.bar.setToolTip("Live captions go on meanwhile; they may lag a little")
        self.cancel_button.setEnabled(True)
        self.setVisible(True)

    def update_progress(self, progress: ImportProgress) -> None:
        if not self.cancel_button.isEnabled():  # cancelling: the bar says so until it ends
            return
        if progress.fraction is None:  # no declared length: a busy bar and the time done
            self.bar.setRange(0, 0)
            minutes, seconds = divmod(int(progress.done_seconds), 60)
            self.bar.setFormat(f"Importing {self._name}: {minutes}:{seconds:02d}")
            return
        percent = int(100 * progress.fraction)
        self.bar.setRange(0, 100)
        self.bar.setValue(percent)
        self.bar.setFormat(f"Importing {self._name}: {percent}%")

    def end(self) -> None:
        self.setVisible(False)

    def _cancel(self) -> None:
        self.cancel_button.setEnabled(False)
        self.bar.setFormat(f"Cancelling the import of {self._name}…")
        self.cancel.emit()
