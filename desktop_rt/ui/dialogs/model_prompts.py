"""Small prompts of the Models dialog: which local model to add, which repository to fetch.

Each is a blocking Qt standard dialog and returns what the user chose, or None when cancelled.
"""

from __future__ import annotations

from PySide6.QtWidgets import QFileDialog, QInputDialog, QMessageBox, QWidget

__all__ = ["ask_local_model", "ask_repository"]


def ask_local_model(parent: QWidget) -> tuple[str, str | None] | None:
    """A Whisper folder ``(folder, None)`` or a GGUF file with its mmproj ``(model, mmproj)``."""
    choice = QMessageBox.question(
        parent,
        "Add a local model",
        "Add a Whisper model folder (Yes) or a GGUF file with its mmproj (No)?",
        QMessageBox.StandardButton.Yes
        | QMessageBox.StandardButton.No
        | QMessageBox.StandardButton.Cancel,
    )
    if choice == QMessageBox.StandardButton.Yes:
        folder = QFileDialog.getExistingDirectory(
            parent, "Choose a CTranslate2 Whisper model folder"
        )
        return (folder, None) if folder else None
    if choice != QMessageBox.StandardButton.No:
        return None
    model, _ = QFileDialog.getOpenFileName(parent, "Choose the GGUF model", "", "GGUF (*.gguf)")
    if not model:
        return None
    mmproj, _ = QFileDialog.getOpenFileName(
        parent, "Choose its mmproj (audio projector)", "", "GGUF (*.gguf)"
    )
    return (model, mmproj) if mmproj else None


def ask_repository(parent: QWidget) -> str | None:
    repo, ok = QInputDialog.getText(
        parent,
        "Download a model",
        "Hugging Face repository (a CTranslate2 Whisper model), e.g. Systran/faster-whisper-small:",
    )
    return repo.strip() if ok and repo.strip() else None
