"""The shortcut table on a real window: the Share captions dialog has its own key."""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtGui import QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget

from desktop_rt.ui.shortcuts import SHORTCUTS, help_text

SHARE_KEYS = SHORTCUTS["share"].keys


def close_the_modal_dialog(titles: list[str], tries: int = 200) -> None:
    """Note the title of the modal dialog once it is open, and close it (bounded poll)."""
    dialog = QApplication.activeModalWidget()
    if dialog is None:
        if tries > 0:
            QTimer.singleShot(50, lambda: close_the_modal_dialog(titles, tries - 1))
        return
    titles.append(dialog.windowTitle())
    assert isinstance(dialog, QWidget)
    dialog.close()


def test_share_captions_has_a_shortcut_shown_in_the_menu_and_the_help(idle_app):
    action = idle_app.window.share_action
    assert action.shortcut() == QKeySequence(SHARE_KEYS)
    menus = [a.menu() for a in idle_app.window.menuBar().actions() if a.menu() is not None]
    (tools_menu,) = [m for m in menus if m.title() == "&Tools"]
    assert action in tools_menu.actions() and action.text() == "Share captions…"
    assert SHARE_KEYS in action.toolTip()
    assert any(
        line.startswith(SHARE_KEYS) and "Share captions" in line
        for line in help_text().splitlines()
    )


def test_the_shortcut_opens_the_share_captions_dialog(idle_app, qtbot):
    window = idle_app.window
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=10_000)
    titles: list[str] = []
    QTimer.singleShot(0, lambda: close_the_modal_dialog(titles))
    sequence = QKeySequence(SHARE_KEYS)[0]
    QTest.keyClick(window, sequence.key(), sequence.keyboardModifiers())
    qtbot.waitUntil(lambda: titles == ["Share captions"], timeout=10_000)
    assert QApplication.activeModalWidget() is None
