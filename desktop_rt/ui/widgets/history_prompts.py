"""The history view's questions to the user: a session's new title, deleting it, where to export.

Each function opens a standard dialog over ``parent`` and returns the answer (None or False
when the user cancelled); nothing here touches the history.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QStandardPaths
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMessageBox, QWidget

from desktop_rt.ui.widgets.history_text import FORMAT_NAMES

__all__ = ["ask_title", "confirm_delete", "ask_export_path"]


def ask_title(parent: QWidget, current: str) -> str | None:
    title, ok = QInputDialog.getText(parent, "Rename session", "Title:", text=current)
    return title if ok else None


def confirm_delete(parent: QWidget, title: str) -> bool:
    answer = QMessageBox.question(
        parent, "Delete session", f"Delete “{title}” and all its text? This cannot be undone."
    )
    return answer == QMessageBox.StandardButton.Yes


def ask_export_path(parent: QWidget, title: str, fmt: str) -> str | None:
    name = "".join(c if c.isalnum() or c in " -_" else "_" for c in title).strip() or "transcript"
    suggested = str(export_folder() / f"{name}.{fmt}")  # not the folder the app was started in
    path, _ = QFileDialog.getSaveFileName(
        parent, "Export transcript", suggested, f"{FORMAT_NAMES.get(fmt, fmt)} (*.{fmt})"
    )
    return path or None


def export_folder() -> Path:
    """The user's Documents folder if there is one, else the home folder."""
    documents = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    return Path(documents) if documents and Path(documents).is_dir() else Path.home()
