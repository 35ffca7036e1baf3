"""History: browse, search, rename, delete saved sessions; copy, correct and revert turns; export.

Every query, edit and export runs on the history's own I/O thread
(:class:`~desktop_rt.ui.widgets.history_jobs.HistoryJobs`); the view renders the answers. While
jobs run it shows a busy bar and what it is doing; a failed read shows in the title, a failed
action in the status line and a warning box. Signals for callers and tests: :attr:`loaded`,
:attr:`exported`, :attr:`copied`, :attr:`failed`. The live session writes through its own writer.
A turn corrected in the list (:class:`~desktop_rt.ui.widgets.history_turns.TurnList`) is saved at
once, keeping the recognised text to revert to; search and exports then use the correction.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication, QShowEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from desktop_rt.history.export import FORMATS, write_transcript
from desktop_rt.history.store import SessionRow, TranscriptStore, TurnRow
from desktop_rt.ui.widgets.caption_formats import Shading
from desktop_rt.ui.widgets.history_jobs import HistoryJobs
from desktop_rt.ui.widgets.history_prompts import ask_export_path, ask_title, confirm_delete
from desktop_rt.ui.widgets.history_text import (
    DESCRIPTIONS,
    FORMAT_NAMES,
    error_message,
    session_label,
)
from desktop_rt.ui.widgets.history_turns import TurnList

__all__ = ["HistoryView"]

T = TypeVar("T")


class HistoryView(QWidget):
    """See the module docstring. ``path`` None: the history is unavailable (shown as such)."""

    loaded = Signal()  # the session list and the selected session's turns are on screen
    exported = Signal(object)  # the Path written
    copied = Signal(str)  # the text "Copy all" put on the clipboard
    failed = Signal(str)  # a read or an action failed; the message is shown too

    def __init__(self, path: Path | None, parent: QWidget | None = None):
        super().__init__(parent)
        self._path = path
        self.jobs = HistoryJobs(path, self) if path is not None else None
        self._rows: dict[int, SessionRow] = {}
        self._turns_request = 0
        self._wanted: int | None = None  # a session to select once the list is loaded
        self._build_widgets()
        self._build_layout()
        self._connect()
        self._set_enabled(False)
        self._set_status("")
        self._set_busy(False)

    # ---- layout ------------------------------------------------------------------------------

    def _build_widgets(self) -> None:
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search all sessions…")
        self.search.setClearButtonEnabled(True)
        self.sessions = QListWidget()
        self.sessions.setSpacing(2)
        self.sessions.setAlternatingRowColors(True)
        self.sessions.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.sessions.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.turns = TurnList()
        self.title = QLabel()
        self.title.setStyleSheet("font-size: 16px; font-weight: 600;")
        self.status = QLabel()
        self.status.setObjectName("secondaryText")
        self.status.setWordWrap(True)
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)  # no known length: a moving bar
        self.busy.setMaximumHeight(6)
        self.busy.setTextVisible(False)
        self.rename_button = QPushButton("&Rename…")
        self.delete_button = QPushButton("&Delete…")
        self.copy_turn_button = QPushButton("Copy t&urn")
        self.copy_all_button = QPushButton("Copy &all")
        self.export_button = QPushButton("E&xport…")
        self._describe()
        menu = QMenu(self.export_button)
        for fmt in FORMATS:
            label = f"{FORMAT_NAMES.get(fmt, fmt)} (.{fmt})"
            menu.addAction(label, partial(self.export_dialog, fmt))
        self.export_button.setMenu(menu)

    def _describe(self) -> None:
        for widget, key in (
            (self.search, "search"),
            (self.sessions, "sessions"),
            (self.turns, "turns"),
            (self.rename_button, "rename_button"),
            (self.delete_button, "delete_button"),
            (self.copy_turn_button, "copy_turn_button"),
            (self.copy_all_button, "copy_all_button"),
            (self.export_button, "export_button"),
        ):
            name, description = DESCRIPTIONS[key]
            widget.setAccessibleName(name)
            widget.setAccessibleDescription(description)
            widget.setToolTip(description)

    def _build_layout(self) -> None:
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
        layout.addWidget(self.splitter, 1)  # the spare height: never the status line's
        layout.addWidget(self.busy)
        layout.addWidget(self.status)

    def _connect(self) -> None:
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
        self.turns.correction_requested.connect(lambda turn, text: self.correct(turn.id, text))
        self.turns.revert_requested.connect(lambda turn: self.revert(turn.id))
        if self.jobs is not None:
            self.jobs.busy_changed.connect(self._set_busy)

    # ---- jobs --------------------------------------------------------------------------------

    def _run(
        self,
        job: Callable[[TranscriptStore], T],
        on_done: Callable[[T], None],
        on_error: Callable[[Exception], None],
        doing: str = "",
    ) -> None:
        if self.jobs is None or self.jobs.closed:
            return
        if doing:
            self._set_status(doing)
        self.jobs.run(job, on_done, on_error)

    def _set_busy(self, on: bool) -> None:
        self.busy.setVisible(on)
        if not on and self.status.property("transient"):
            self._set_status("")

    def _set_status(self, text: str, *, error: bool = False, transient: bool = True) -> None:
        if self.status.property("error") != error:  # coloured by the theme's style sheet
            self.status.setProperty("error", error)
            self.status.style().unpolish(self.status)
            self.status.style().polish(self.status)
        self.status.setText(text)
        self.status.setVisible(bool(text))
        self.status.setProperty("transient", transient and not error)

    def _read_failed(self, exc: Exception) -> None:
        message = error_message(exc)
        self.title.setText(message)
        self._set_status(message, error=True)
        self.failed.emit(message)

    def _action_failed(self, exc: Exception) -> None:
        message = error_message(exc)
        self._set_status(message, error=True)
        box = QMessageBox(
            QMessageBox.Icon.Warning, "desktop-rt", message, QMessageBox.StandardButton.Ok, self
        )
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()  # not exec(): the view keeps running
        self.failed.emit(message)

    # ---- data --------------------------------------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt naming
        super().showEvent(event)
        self.refresh()

    def refresh(self) -> None:
        """Reload the session list (filtered by the search text), then the selected session."""
        query = self.search.text()
        self._run(lambda store: store.search(query), self._show_sessions, self._read_failed)

    def show_session(self, session_id: int) -> None:
        """Reload the list and select ``session_id`` (e.g. a session just written)."""
        self._wanted = session_id
        self.refresh()

    def _show_sessions(self, rows: list[SessionRow]) -> None:
        selected = self._wanted or self.selected_session_id()
        self._wanted = None
        self._rows = {row.id: row for row in rows}
        self.sessions.blockSignals(True)
        self.sessions.clear()
        for row in rows:
            item = QListWidgetItem(session_label(row))
            item.setData(Qt.ItemDataRole.UserRole, row.id)
            self.sessions.addItem(item)
            if row.id == selected:
                self.sessions.setCurrentItem(item)
        self.sessions.blockSignals(False)
        if self.sessions.currentItem() is None and self.sessions.count():
            self.sessions.setCurrentRow(0)
        self._show_selected()

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
        self._turns_request += 1
        request = self._turns_request
        session_id = self.selected_session_id()
        if session_id is None:
            self.turns.clear()
            query = self.search.text().strip()
            self.title.setText(
                f"No session matches “{query}”." if query else "No saved sessions yet."
            )
            self._set_enabled(False)
            self.loaded.emit()
            return

        def load(store: TranscriptStore) -> tuple[SessionRow | None, list[TurnRow]]:
            return store.session(session_id), store.turns(session_id)

        def show(result: tuple[SessionRow | None, list[TurnRow]]) -> None:
            if request == self._turns_request:  # else a newer selection is on its way
                self._show_turns(*result)

        self._run(load, show, self._read_failed)

    def _show_turns(self, row: SessionRow | None, turns: list[TurnRow]) -> None:
        if row is None:  # deleted meanwhile
            self.refresh()
            return
        self.title.setText(row.display_title)
        self.turns.show_turns(turns)
        self.turns.mark_search(self.search.text())  # mark the search and go to its first turn
        self._set_enabled(True)
        self.loaded.emit()

    # ---- actions -----------------------------------------------------------------------------

    def rename(self, session_id: int, title: str) -> None:
        self._run(
            lambda store: store.rename_session(session_id, title),
            lambda _none: self.refresh(),
            self._action_failed,
            "Renaming…",
        )

    def delete(self, session_id: int) -> None:
        self._run(
            lambda store: store.delete_session(session_id),
            lambda _none: self.refresh(),
            self._action_failed,
            "Deleting…",
        )

    def set_shading(self, shading: Shading) -> None:
        """Shade the words the recognizer was unsure of (or not), as in the live captions."""
        self.turns.set_shading(shading)

    def correct(self, turn_id: int, text: str) -> None:
        """Save ``text`` as the turn's correction now (the recognised text is kept); the list
        and the session's preview are read again."""
        self._run(
            lambda store: store.correct_turn(turn_id, text),
            lambda _none: self.refresh(),
            self._action_failed,
            "Saving the correction…",
        )

    def revert(self, turn_id: int) -> None:
        """Show the turn's recognised text again."""
        self._run(
            lambda store: store.revert_turn(turn_id),
            lambda _none: self.refresh(),
            self._action_failed,
            "Reverting the correction…",
        )

    def export(self, session_id: int, path: str | Path, fmt: str | None = None) -> None:
        """Write the session to ``path`` (format from ``fmt`` or the extension); then
        :attr:`exported` (the path) or :attr:`failed` (the message) is emitted."""
        target = Path(path)
        self._run(
            lambda store: write_transcript(target, store.transcript(session_id), fmt),
            self._exported,
            self._action_failed,
            f"Exporting to {target.name}…",
        )

    def _exported(self, path: Path) -> None:
        self._set_status(f"Saved {path}", transient=False)
        self.exported.emit(path)

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
            self._run(
                lambda store: store.transcript(session_id).text, self._copied, self._action_failed
            )

    def _copied(self, text: str) -> None:
        QGuiApplication.clipboard().setText(text)
        self.copied.emit(text)

    def rename_dialog(self) -> None:
        session_id = self.selected_session_id()
        if session_id is not None:
            current = self._rows.get(session_id)
            title = ask_title(self, current.title if current else "")
            if title is not None:
                self.rename(session_id, title)

    def delete_dialog(self) -> None:
        session_id = self.selected_session_id()
        if session_id is not None and confirm_delete(self, self.title.text()):
            self.delete(session_id)

    def export_dialog(self, fmt: str) -> None:
        session_id = self.selected_session_id()
        path = ask_export_path(self, self.title.text(), fmt) if session_id is not None else None
        if session_id is not None and path:
            self.export(session_id, path, fmt)

    def close_store(self, timeout: float | None = None) -> None:
        """Let the history thread finish what it was given, then stop it (waiting ``timeout``
        seconds for that; None: not at all)."""
        if self.jobs is not None:
            self.jobs.close(timeout)
