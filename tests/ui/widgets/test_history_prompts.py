"""Export suggests a file in the user's Documents (or home) folder, not where the app started.

Found by using the app: started from its checkout as the README says, History → Export… offered
to save "Session ….srt" among the source folders. The real Qt file dialog is opened and read.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QFileDialog, QWidget

from desktop_rt.ui.widgets.history_prompts import ask_export_path


def _suggested(qtbot, title: str, fmt: str) -> list[str]:
    """Open the export dialog, read the file it suggests, and cancel it."""
    parent = QWidget()
    qtbot.addWidget(parent)
    seen: list[str] = []

    def answer() -> None:  # runs inside the dialog's own event loop
        dialog = QApplication.activeModalWidget()
        if isinstance(dialog, QFileDialog):
            seen.extend(dialog.selectedFiles())
            dialog.reject()
        else:
            QTimer.singleShot(20, answer)

    QTimer.singleShot(0, answer)
    assert ask_export_path(parent, title, fmt) is None  # cancelled
    return seen


def _home(tmp_path: Path, monkeypatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    monkeypatch.chdir(checkout)  # where a newcomer starts the app
    return home


def test_export_suggests_the_documents_folder(tmp_path, qtbot, monkeypatch):
    home = _home(tmp_path, monkeypatch)
    (home / "Documents").mkdir()
    suggested = _suggested(qtbot, "Session 2026-12-01 18:40", "srt")
    assert suggested == [str(home / "Documents" / "Session 2026-12-01 18_40.srt")]


def test_without_documents_export_suggests_home(tmp_path, qtbot, monkeypatch):
    home = _home(tmp_path, monkeypatch)
    assert _suggested(qtbot, "Meeting", "txt") == [str(home / "Meeting.txt")]
