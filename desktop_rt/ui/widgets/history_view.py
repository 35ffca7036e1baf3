"""History: browse, search, rename, delete saved sessions; copy turns; export with times.

Reads through its own :class:`TranscriptStore` connection on the UI thread (short indexed
queries on a local file); the live session keeps writing through the store writer thread.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QMessageBox,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from desktop_rt.history.export import FORMATS, ExportError, write_transcript
from desktop_rt.history.store import SessionRow, StoreError, TranscriptStore

__all__ = ["HistoryView"]

_FORMAT_NAMES = {
    "txt": "Plain text",
    "srt": "SubRip subtitles",
    "vtt": "WebVTT subtitles",
    "json": "JSON with word times",
    "md": "Markdown",
}


def _clock(seconds: float) -> str:
    seconds = int(max(0.0, seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


class HistoryView(QWidget):
    """See the module docstring. ``path`` None: the history is unavailable (shown as such)."""

    def __init__(self, path: Path | None, parent=None):
        super().__init__(parent)
        self._store: TranscriptStore | None = None
        self._path = path
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search all sessions…")
        self.search.setClearButtonEnabled(True)
        self.sessions = QListWidget()
        self.sessions.setSpacing(2)
        self.sessions.setAlternatingRowColors(True)
        self.sessions.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.sessions.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.turns = QListWidget()
        self.turns.setWordWrap(True)
        self.turns.setSpacing(3)
        self.turns.setAlternatingRowColors(True)
        self.turns.setSelectionMode(QListWidget.SelectionMode.ExtendedSelection)
        self.title = QLabel()
        self.title.setStyleSheet("font-size: 16px; font-weight: 600;")
        self.rename_button = QPushButton("Rename…")
        self.delete_button = QPushButton("Delete…")
        self.copy_turn_button = QPushButton("Copy turn")
        self.copy_all_button = QPushButton("Copy all")
        self.export_button = QPushButton("Export…")
        menu = QMenu(self.export_button)
        for fmt in FORMATS:
            menu.addAction(
                f"{_FORMAT_NAMES.get(fmt, fmt)} (.{fmt})", lambda f=fmt: self.export_dialog(f)
            )
        self.export_button.setMenu(menu)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.search)
        left_layout.addWidget(self.sessions, 1)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.title)
        right_layout.addWidget(self.turns, 1)
        buttons = QHBoxLayout()
        for button in (self.rename_button, self.delete_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        for button in (self.copy_turn_button, self.copy_all_button, self.export_button):
            buttons.addWidget(button)
        right_layout.addLayout(buttons)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(left)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setSizes([300, 600])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.addWidget(self.splitter)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(200)
        self._debounce.timeout.connect(self.refresh)
        self.search.textChanged.connect(lambda _t: self._debounce.start())
        self.sessions.currentItemChanged.connect(lambda *_: self._show_selected())
        self.rename_button.clicked.connect(self.rename_dialog)
        self.delete_button.clicked.connect(self.delete_dialog)
        self.copy_turn_button.clicked.connect(self.copy_turns)
        self.copy_all_button.clicked.connect(self.copy_all)
        self._set_enabled(False)

    # ---- data --------------------------------------------------------------------------------

    def store(self) -> TranscriptStore | None:
        if self._store is None and self._path is not None:
            try:
                self._store = TranscriptStore(self._path)
            except StoreError as exc:
                self.title.setText(str(exc))
        return self._store

    def showEvent(self, event) -> None:  # noqa: N802 - Qt naming
        super().showEvent(event)
        self.refresh()

    def refresh(self) -> None:
        store = self.store()
        if store is None:
            return
        selected = self.selected_session_id()
        try:
            rows = store.search(self.search.text())
        except StoreError as exc:
            self.title.setText(str(exc))
            return
        self.sessions.blockSignals(True)
        self.sessions.clear()
        for row in rows:
            item = QListWidgetItem(self._session_label(row))
            item.setData(Qt.ItemDataRole.UserRole, row.id)
            self.sessions.addItem(item)
            if row.id == selected:
                self.sessions.setCurrentItem(item)
        self.sessions.blockSignals(False)
        if self.sessions.currentItem() is None and self.sessions.count():
            self.sessions.setCurrentRow(0)
        self._show_selected()

    @staticmethod
    def _session_label(row: SessionRow) -> str:
        when = row.started_at[:16].replace("T", " ")
        title = row.title or when
        preview = " ".join(row.preview.split())
        preview = preview if len(preview) <= 48 else preview[:47].rstrip() + "…"
        turns = f"{row.turn_count} turn{'s' if row.turn_count != 1 else ''}"
        return (
            f"{title}\n{when} · {turns}\n{preview}"
            if row.title
            else f"{title} · {turns}\n{preview}"
        )

    def selected_session_id(self) -> int | None:
        item = self.sessions.currentItem()
        return None if item is None else int(item.data(Qt.ItemDataRole.UserRole))

    def select_session(self, session_id: int) -> None:
        for row in range(self.sessions.count()):
            if self.sessions.item(row).data(Qt.ItemDataRole.UserRole) == session_id:
                self.sessions.setCurrentRow(row)
                return

    def _set_enabled(self, on: bool) -> None:
        for button in (
            self.rename_button,
            self.delete_button,
            self.copy_turn_button,
            self.copy_all_button,
            self.export_button,
        ):
            button.setEnabled(on)

    def _show_selected(self) -> None:
        self.turns.clear()
        session_id = self.selected_session_id()
        store = self.store()
        if session_id is None or store is None:
            self.title.setText("No saved sessions yet." if store is not None else self.title.text())
            self._set_enabled(False)
            return
        row = store.session(session_id)
        if row is None:
            self.refresh()
            return
        self.title.setText(row.display_title)
        for turn in store.turns(session_id):
            if not turn.text.strip():
                continue
            item = QListWidgetItem(f"[{_clock(turn.start)}]  {turn.text.strip()}")
            item.setData(Qt.ItemDataRole.UserRole, turn.text.strip())
            self.turns.addItem(item)
        self._set_enabled(True)

    # ---- actions -----------------------------------------------------------------------------

    def rename(self, session_id: int, title: str) -> None:
        self.store().rename_session(session_id, title)
        self.refresh()

    def delete(self, session_id: int) -> None:
        self.store().delete_session(session_id)
        self.refresh()

    def export(self, session_id: int, path: str | Path, fmt: str | None = None) -> Path:
        """Write the session to ``path`` (format from ``fmt`` or the extension)."""
        return write_transcript(path, self.store().transcript(session_id), fmt)

    def copy_turns(self) -> None:
        items = self.turns.selectedItems() or (
            [self.turns.currentItem()] if self.turns.currentItem() else []
        )
        text = "\n".join(i.data(Qt.ItemDataRole.UserRole) for i in items if i is not None)
        if text:
            QGuiApplication.clipboard().setText(text)

    def copy_all(self) -> None:
        session_id = self.selected_session_id()
        if session_id is not None:
            QGuiApplication.clipboard().setText(self.store().transcript(session_id).text)

    def rename_dialog(self) -> None:
        session_id = self.selected_session_id()
        if session_id is None:
            return
        current = self.store().session(session_id)
        title, ok = QInputDialog.getText(
            self, "Rename session", "Title:", text=current.title if current else ""
        )
        if ok:
            self._guard(lambda: self.rename(session_id, title))

    def delete_dialog(self) -> None:
        session_id = self.selected_session_id()
        if session_id is None:
            return
        answer = QMessageBox.question(
            self,
            "Delete session",
            f"Delete “{self.title.text()}” and all its text? This cannot be undone.",
        )
        if answer == QMessageBox.StandardButton.Yes:
            self._guard(lambda: self.delete(session_id))

    def export_dialog(self, fmt: str) -> None:
        session_id = self.selected_session_id()
        if session_id is None:
            return
        name = (
            "".join(c if c.isalnum() or c in " -_" else "_" for c in self.title.text()).strip()
            or "transcript"
        )
        path, _ = QFileDialog.getSaveFileName(
            self, "Export transcript", f"{name}.{fmt}", f"{_FORMAT_NAMES.get(fmt, fmt)} (*.{fmt})"
        )
        if path:
            self._guard(lambda: self.export(session_id, path, fmt))

    def _guard(self, action) -> None:
        try:
            action()
        except (StoreError, ExportError) as exc:
            QMessageBox.warning(self, "desktop-rt", str(exc))

    def close_store(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
