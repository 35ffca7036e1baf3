"""Keyboard shortcuts of the main actions, in one table (menus and the help text read it)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence

__all__ = ["Shortcut", "SHORTCUTS", "TALK_KEY", "make_action", "help_text"]


@dataclass(frozen=True)
class Shortcut:
    keys: str
    text: str


TALK_KEY = Qt.Key.Key_Space
"""Hold to talk (push-to-talk) while the Live view's captions, talk button or tab has focus
(ui/talk_key.py); anywhere else Space types a space or presses the focused button."""

SHORTCUTS: dict[str, Shortcut] = {
    "import": Shortcut(
        "Ctrl+O", "Import an audio file into the history (or drop it on the window)"
    ),
    "listen": Shortcut("Ctrl+L", "Start or stop listening"),
    "mode": Shortcut("Ctrl+M", "Switch between push-to-talk and hands-free"),
    "bigger": Shortcut("Ctrl+=", "Larger captions"),
    "smaller": Shortcut("Ctrl+-", "Smaller captions"),
    "overlay": Shortcut("Ctrl+Shift+O", "Show or hide the caption overlay"),
    "live": Shortcut("Ctrl+1", "Show live captions"),
    "history": Shortcut("Ctrl+2", "Show history"),
    "copy_all": Shortcut("Ctrl+Shift+C", "Copy all captions of this session"),
    "models": Shortcut("Ctrl+Shift+M", "Models"),
    "settings": Shortcut("Ctrl+,", "Settings"),
    "share": Shortcut("Ctrl+Shift+S", "Share captions with other screens (link and QR code)"),
    "quit": Shortcut("Ctrl+Q", "Quit (everything said is saved)"),
}


def make_action(
    parent: QObject, name: str, label: str, slot: Callable[[], object], checkable: bool = False
) -> QAction:
    """A :class:`QAction` with the table's shortcut for ``name``, connected to ``slot``."""
    shortcut = SHORTCUTS[name]
    action = QAction(label, parent)
    action.setShortcut(QKeySequence(shortcut.keys))
    action.setToolTip(f"{shortcut.text} ({shortcut.keys})")
    action.setCheckable(checkable)
    action.triggered.connect(slot)
    return action


def help_text() -> str:
    rows = [("Space (hold)", "Talk, in push-to-talk mode")]
    rows += [("F2", "Correct the caption line or history turn in focus (or double-click it)")]
    rows += [(s.keys, s.text) for s in SHORTCUTS.values()]
    return "\n".join(f"{keys:<16} {text}" for keys, text in rows)
