"""The talk-key filter on its own: holds across false releases, respects focus and modifiers."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication, QLineEdit, QPushButton, QVBoxLayout, QWidget

from desktop_rt.ui.talk_key import TalkKeyFilter, system_repeat_gap


def space(widget, kind, modifiers=Qt.KeyboardModifier.NoModifier):
    event = QKeyEvent(kind, Qt.Key.Key_Space, modifiers, " ", False, 1)
    QApplication.sendEvent(widget, event)


@pytest.fixture
def rig(qtbot):
    window = QWidget()
    layout = QVBoxLayout(window)
    talk, edit = QPushButton("Talk"), QLineEdit()
    layout.addWidget(talk)
    layout.addWidget(edit)
    calls: list[str] = []
    key = TalkKeyFilter(
        window, lambda w: w is talk, lambda: calls.append("down"), lambda: calls.append("up"), 0.1
    )
    QApplication.instance().installEventFilter(key)
    qtbot.addWidget(window)
    window.show()
    window.activateWindow()
    qtbot.waitActive(window)
    yield window, talk, edit, key, calls
    QApplication.instance().removeEventFilter(key)


def test_false_releases_within_the_gap_keep_one_hold(rig, qtbot):
    _window, talk, _edit, key, calls = rig
    talk.setFocus()
    qtbot.waitUntil(talk.hasFocus)
    space(talk, QEvent.Type.KeyPress)
    for _ in range(20):
        space(talk, QEvent.Type.KeyRelease)
        space(talk, QEvent.Type.KeyPress)
    assert calls == ["down"]
    space(talk, QEvent.Type.KeyRelease)
    assert calls == ["down"]  # not yet: a repeat press may still come
    qtbot.waitUntil(lambda: calls == ["down", "up"], timeout=1_000)
    assert not talk.isDown()  # the button's own Space handling never ran


def test_space_elsewhere_types_and_a_hold_ends_with_any_release(rig, qtbot):
    window, talk, edit, key, calls = rig
    edit.setFocus()
    qtbot.waitUntil(edit.hasFocus)
    qtbot.keyClick(edit, Qt.Key.Key_Space)
    assert edit.text() == " " and calls == []
    talk.setFocus()
    qtbot.waitUntil(talk.hasFocus)
    space(talk, QEvent.Type.KeyPress, Qt.KeyboardModifier.ShiftModifier)
    assert calls == []  # Shift+Space is not the talk key
    space(talk, QEvent.Type.KeyPress)
    edit.setFocus()  # focus moves while the key is held
    space(edit, QEvent.Type.KeyRelease, Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: calls == ["down", "up"], timeout=1_000)
    assert edit.text() == " "
    talk.setFocus()
    space(talk, QEvent.Type.KeyPress)
    QApplication.sendEvent(window, QEvent(QEvent.Type.WindowDeactivate))
    assert calls == ["down", "up", "down", "up"] and not key.hold.held


def test_the_grace_period_comes_from_the_desktop_repeat_rate():
    assert 0.1 <= system_repeat_gap() <= 0.4


class _Counted(TalkKeyFilter):
    """The real filter, counting the events it is asked about."""

    def __init__(self, *args):
        super().__init__(*args)
        self.seen: list[tuple[object, QEvent.Type]] = []

    def eventFilter(self, watched, event):  # noqa: N802 - Qt naming
        self.seen.append((watched, event.type()))
        return super().eventFilter(watched, event)


@pytest.fixture
def installed(qtbot):
    """The window's way: :meth:`TalkKeyFilter.install`, not a filter on the whole app."""
    window = QWidget()
    layout = QVBoxLayout(window)
    talk, edit, other = QPushButton("Talk"), QLineEdit(), QPushButton("Other")
    for widget in (talk, edit, other):
        layout.addWidget(widget)
    calls: list[str] = []
    key = _Counted(
        window, lambda w: w is talk, lambda: calls.append("down"), lambda: calls.append("up"), 0.1
    )
    qtbot.addWidget(window)
    window.show()
    window.activateWindow()
    qtbot.waitActive(window)
    key.install()
    yield window, talk, edit, other, key, calls
    key.uninstall()


def test_installed_on_the_focus_widget_it_holds_and_follows_the_focus(installed, qtbot):
    _window, talk, edit, _other, key, calls = installed
    talk.setFocus()
    qtbot.waitUntil(talk.hasFocus)
    space(talk, QEvent.Type.KeyPress)
    for _ in range(10):
        space(talk, QEvent.Type.KeyRelease)
        space(talk, QEvent.Type.KeyPress)
    edit.setFocus()  # focus moves while the key is held: the release reaches the new focus
    qtbot.waitUntil(edit.hasFocus)
    space(edit, QEvent.Type.KeyRelease)
    qtbot.waitUntil(lambda: calls == ["down", "up"], timeout=1_000)
    assert not talk.isDown() and edit.text() == ""
    qtbot.keyClick(edit, Qt.Key.Key_Space)
    assert edit.text() == " " and calls == ["down", "up"]  # not the talk target: it types


def test_events_of_widgets_without_focus_never_reach_the_filter(installed, qtbot):
    _window, talk, _edit, other, key, calls = installed
    talk.setFocus()
    qtbot.waitUntil(talk.hasFocus)
    key.seen.clear()
    for kind in (QEvent.Type.User, QEvent.Type.MaxUser):  # as a queued signal or timer would
        QApplication.sendEvent(other, QEvent(kind))
    space(other, QEvent.Type.KeyPress)
    assert not [watched for watched, _ in key.seen if watched is other] and calls == []
    key.seen.clear()
    QApplication.sendEvent(talk, QEvent(QEvent.Type.User))  # the focus widget's: asked, ignored
    assert key.seen == [(talk, QEvent.Type.User)] and calls == [] and not key.hold.held


def test_uninstalled_it_sees_nothing_and_space_presses_the_button(installed, qtbot):
    _window, talk, _edit, _other, key, calls = installed
    talk.setFocus()
    qtbot.waitUntil(talk.hasFocus)
    key.uninstall()
    key.seen.clear()
    clicked: list[bool] = []
    talk.clicked.connect(lambda: clicked.append(True))
    qtbot.keyClick(talk, Qt.Key.Key_Space)
    assert key.seen == [] and calls == [] and clicked == [True]
    key.install()  # the fixture uninstalls it again
