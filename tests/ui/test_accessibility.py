"""Keyboard and screen readers: names, descriptions, Tab order, focus rings, mnemonics, announcements."""

from __future__ import annotations

import re

from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSlider,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QLineEdit,
    QMenuBar,
    QScrollBar,
    QTabBar,
    QTextEdit,
    QWidget,
)

from desktop_rt.config import Settings
from desktop_rt.engine.audio.microphone import InputDevice
from desktop_rt.live.transcript_recorder import CaptionTurn
from desktop_rt.ui.dialogs.models_dialog import ModelsDialog
from desktop_rt.ui.dialogs.settings_dialog import SettingsDialog
from desktop_rt.ui.widgets.caption_view import CaptionView

INTERACTIVE = (
    QAbstractButton,
    QAbstractSpinBox,
    QComboBox,
    QLineEdit,
    QAbstractSlider,
    QAbstractItemView,
    QTextEdit,
    QTabBar,
)


OWNERS = (*INTERACTIVE, QMenuBar)  # widgets inside these are parts of them (Qt's own)


def interactive_widgets(root: QWidget) -> list[QWidget]:
    """Controls a user operates (not the parts inside another control, not scroll bars)."""
    found = []
    for widget in root.findChildren(QWidget):
        if not isinstance(widget, INTERACTIVE) or isinstance(widget, QScrollBar):
            continue
        parent = widget.parentWidget()
        while parent is not None and parent is not root and not isinstance(parent, OWNERS):
            parent = parent.parentWidget()
        if parent is None or parent is root:
            found.append(widget)
    return found


def accessible_name(widget: QWidget) -> str:
    return QAccessible.queryAccessibleInterface(widget).text(QAccessible.Text.Name)


def accessible_description(widget: QWidget) -> str:
    # A tab bar's interface speaks for its tabs; its own description is the widget's.
    text = QAccessible.queryAccessibleInterface(widget).text(QAccessible.Text.Description)
    return text or widget.accessibleDescription()


def test_every_interactive_widget_has_a_name_and_a_description(idle_app):
    """Issue 17: no widget set an accessible name; the caption area and text-size box had none."""
    window = idle_app.window
    widgets = interactive_widgets(window)
    unnamed = [type(w).__name__ + ":" + w.objectName() for w in widgets if not accessible_name(w)]
    assert unnamed == []
    undescribed = [accessible_name(w) for w in widgets if not accessible_description(w)]
    assert undescribed == []
    assert window.captions in widgets and window.font_spin in widgets
    assert window.history.search in widgets and window.status_panel.retry_button in widgets
    assert accessible_name(window.captions) == "Live captions"
    assert accessible_name(window.font_spin) == "Caption text size"


def test_tab_reaches_every_control_of_the_live_view_in_order(idle_app, qtbot):
    """Issue 17: Tab visited only the Live tab and the text-size box."""
    window = idle_app.window
    window.listen_button.setEnabled(True)  # enabled once the model is ready
    window.talk_button.setEnabled(True)  # and while listening in push-to-talk
    window.activateWindow()
    qtbot.waitActive(window)
    window.listen_button.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.listen_button)
    visited: list[QWidget] = []
    for _ in range(30):
        focus = QApplication.focusWidget()
        if focus in visited:
            break
        visited.append(focus)
        qtbot.keyClick(focus, Qt.Key.Key_Tab)
    live = [
        window.listen_button,
        window.ptt_button,
        window.hf_button,
        window.font_spin,
        window.overlay_button,
        window.captions,
        window.talk_button,
    ]
    assert [w for w in visited if w in live] == live  # left to right, then down
    shown = [
        w
        for w in interactive_widgets(window)
        if w.isVisible() and w.isEnabled() and not window.history.isAncestorOf(w)
    ]
    missing = [accessible_name(w) for w in shown if w not in visited]
    assert missing == []


def test_focused_controls_show_a_focus_ring(idle_app, qtbot):
    window = idle_app.window
    window.talk_button.setEnabled(True)
    window.listen_button.setEnabled(True)
    window.activateWindow()
    qtbot.waitActive(window)
    for button in (window.talk_button, window.listen_button, window.ptt_button):
        window.captions.setFocus()
        qtbot.waitUntil(lambda: window.captions.hasFocus())
        plain = button.grab().toImage()
        button.setFocus()
        qtbot.waitUntil(button.hasFocus)
        assert button.grab().toImage() != plain, accessible_name(button)


DEVICES = [InputDevice(3, "USB Mic", "ALSA", 1, 48000.0, False)]


def test_settings_dialog_fields_are_named_for_themselves_and_buttons_have_mnemonics(qtbot):
    """Issue 17: the threshold slider was named after its group box; buttons had no mnemonics."""
    dialog = SettingsDialog(Settings(), devices=DEVICES)
    qtbot.addWidget(dialog)
    assert accessible_name(dialog.threshold) == "Voice threshold"
    assert all(accessible_name(w) for w in interactive_widgets(dialog))
    buttons = [b for b in dialog.findChildren(QAbstractButton) if b.text()]
    assert buttons and all("&" in b.text() for b in buttons), [b.text() for b in buttons]
    keys = [m.lower() for w in dialog.findChildren(QWidget) for m in _mnemonics(w)]
    assert len(keys) == len(set(keys)), sorted(keys)


def _mnemonics(widget: QWidget) -> list[str]:
    text = getattr(widget, "text", None)
    if not callable(text) or not widget.isVisibleTo(widget.window()):
        return []
    value = text()
    return re.findall(r"&([^&\s])", value) if isinstance(value, str) else []


def test_captions_announce_committed_words_only_and_not_too_often(qtbot):
    view = CaptionView(announce_interval=0.3)
    qtbot.addWidget(view)
    said: list[str] = []
    view.announced.connect(said.append)
    view.show_turn(CaptionTurn("a", 0, "", " Ever tried"))
    assert said == []  # tentative words are never announced
    view.show_turn(CaptionTurn("a", 0, " Ever", " tried."))
    assert said == ["Ever"]
    view.show_turn(CaptionTurn("a", 0, " Ever tried.", ""))
    view.show_turn(CaptionTurn("a", 0, " Ever tried. Ever failed.", " No"))
    assert said == ["Ever"]  # within the interval: held back
    with qtbot.waitSignal(view.announced, timeout=2_000) as blocker:
        pass
    assert blocker.args == ["tried. Ever failed."]
    view.show_turn(CaptionTurn("a", 0, " Ever tried. Ever failed.", "", final=True))
    assert said == ["Ever", "tried. Ever failed."]  # the final text repeats nothing


def test_models_dialog_is_named_described_mnemonic_and_in_the_tab_chain(qtbot, tmp_path):
    """Issue 17: the Models dialog had no keyboard shortcuts."""
    dialog = ModelsDialog(Settings(), models_path=tmp_path / "models.toml")
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.downloads.cancel_button.show()  # shown while a download runs
    for button in (dialog.use_button, dialog.remove_button):
        button.setEnabled(True)  # enabled for a selected model that is not the current one
    widgets = interactive_widgets(dialog)
    assert {dialog.table, dialog.language, dialog.ok_button, dialog.use_button} <= set(widgets)
    assert [type(w).__name__ for w in widgets if not accessible_name(w)] == []
    assert [accessible_name(w) for w in widgets if not accessible_description(w)] == []
    buttons = [b for b in dialog.findChildren(QAbstractButton) if b.text()]
    assert len(buttons) == 7 and all("&" in b.text() for b in buttons), [b.text() for b in buttons]
    keys = [m.lower() for w in dialog.findChildren(QWidget) for m in _mnemonics(w)]
    assert len(keys) == len(set(keys)) == 9, sorted(keys)  # seven buttons, table, language
    dialog.activateWindow()
    qtbot.waitActive(dialog)
    dialog.table.setFocus()
    qtbot.waitUntil(dialog.table.hasFocus)
    visited = _tab_chain(qtbot, dialog.table)
    order = [dialog.table, dialog.use_button, dialog.add_button, dialog.download_button]
    order += [dialog.remove_button, dialog.downloads.cancel_button, dialog.language]
    assert [w for w in visited if w in order] == order
    assert [accessible_name(w) for w in widgets if w not in visited] == []


def _tab_chain(qtbot, start: QWidget) -> list[QWidget]:
    visited: list[QWidget] = []
    focus = start
    for _ in range(30):
        if focus in visited:
            break
        visited.append(focus)
        qtbot.keyClick(focus, Qt.Key.Key_Tab)
        focus = QApplication.focusWidget()
    return visited
