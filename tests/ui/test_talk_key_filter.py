"""The talk-key filter on its own: holds across false releases, respects focus and modifiers."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication, QLineEdit, QPushButton, QVBoxLayout, QWidget

from desktop_rt.ui.key_state import X11KeyState
from desktop_rt.ui.talk_key import LOST_MESSAGE, TalkKeyFilter, system_repeat_gap
from tests.support.x_desktop import x_server, xdotool


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


def _focused_filter(qtbot, window, talk, calls: list[str], key_state) -> TalkKeyFilter:
    """A filter on ``window`` whose talk target is ``talk`` (focused, the window shown and
    active), noting holds and lost-hold messages in ``calls``."""
    key = TalkKeyFilter(
        window,
        lambda w: w is talk,
        lambda: calls.append("down"),
        lambda: calls.append("up"),
        0.1,
        key_state=key_state,
        on_lost=lambda text: calls.append(text),
    )
    qtbot.addWidget(window)
    window.show()
    window.activateWindow()
    qtbot.waitActive(window)
    key.install()
    talk.setFocus()
    qtbot.waitUntil(talk.hasFocus)
    return key


@pytest.fixture
def no_key_state(qtbot):
    """The window's way, where Space's state cannot be read (not X11): messages are kept."""
    window = QWidget()
    layout = QVBoxLayout(window)
    talk = QPushButton("Talk")
    layout.addWidget(talk)
    calls: list[str] = []
    key = _focused_filter(qtbot, window, talk, calls, lambda: None)
    yield window, talk, key, calls
    key.uninstall()


def test_a_dialog_of_the_app_taking_focus_mid_hold_keeps_the_hold(no_key_state, qtbot):
    window, talk, key, calls = no_key_state
    space(talk, QEvent.Type.KeyPress)
    dialog = QWidget()  # a window of the app pops up and takes the keyboard
    ok = QPushButton("OK", dialog)
    clicked: list[bool] = []
    ok.clicked.connect(lambda: clicked.append(True))
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.activateWindow()
    qtbot.waitActive(dialog)
    ok.setFocus()
    qtbot.waitUntil(ok.hasFocus)
    assert not window.isActiveWindow() and calls == ["down"] and key.hold.held
    for _ in range(5):  # the held key's repeats reach the dialog: they neither end nor press
        space(ok, QEvent.Type.KeyRelease)
        space(ok, QEvent.Type.KeyPress)
    assert calls == ["down"] and not ok.isDown()
    space(ok, QEvent.Type.KeyRelease)  # the release, in the dialog, ends the one hold
    qtbot.waitUntil(lambda: calls == ["down", "up"], timeout=1_000)
    assert clicked == [] and not ok.isDown()


def test_a_lost_release_ends_the_hold_with_a_message(no_key_state, qtbot):
    window, talk, key, calls = no_key_state
    space(talk, QEvent.Type.KeyPress)
    QApplication.sendEvent(window, QEvent(QEvent.Type.WindowDeactivate))  # no window of ours
    [down, up, message] = calls  # the hold ends at once, with a reason, and nothing more waits
    assert (down, up) == ("down", "up") and message == LOST_MESSAGE and not key.hold.held
    assert "lost the keyboard" in message and "hold Space again" in message
    QApplication.sendEvent(window, QEvent(QEvent.Type.WindowDeactivate))
    assert len(calls) == 3  # no hold, nothing to end or report


class _CountedReads(X11KeyState):
    """The real reader of Space on an Xvfb, counting its reads and whether it was closed."""

    def __init__(self, display: str):
        super().__init__(display)
        self.reads = 0
        self.closed = False

    def is_down(self) -> bool:
        self.reads += 1
        return super().is_down()

    def close(self) -> None:
        self.closed = True
        super().close()


@pytest.fixture
def x_keys(qtbot, tmp_path):
    """The window's way, with Space's state read from a real X server (Xvfb, xdotool)."""
    with x_server(tmp_path, "-noreset") as display:  # keys stay down between xdotool runs
        window = QWidget()
        talk = QPushButton("Talk", window)
        calls: list[str] = []
        readers: list[_CountedReads] = []

        def open_reader() -> _CountedReads:
            readers.append(_CountedReads(display))
            return readers[-1]

        key = _focused_filter(qtbot, window, talk, calls, open_reader)
        yield display, window, talk, key, calls, readers
        key.uninstall()
        key.cancel()


def test_with_the_keyboard_elsewhere_the_hold_lasts_until_space_is_released(x_keys, qtbot):
    display, window, talk, key, calls, readers = x_keys
    xdotool(display, "keydown", "space")
    space(talk, QEvent.Type.KeyPress)
    QApplication.sendEvent(window, QEvent(QEvent.Type.WindowDeactivate))  # its release goes away
    [reader] = readers
    qtbot.waitUntil(lambda: reader.reads >= 10, timeout=5_000)
    assert calls == ["down"] and key.hold.held  # Space is still down: the hold goes on
    xdotool(display, "keyup", "space")  # released in the other window: no event comes here
    qtbot.waitUntil(lambda: calls == ["down", "up"], timeout=5_000)
    assert reader.closed and not key.hold.held
    space(talk, QEvent.Type.KeyPress)  # a new hold, with the keyboard here: no reader
    space(talk, QEvent.Type.KeyRelease)
    qtbot.waitUntil(lambda: calls == ["down", "up", "down", "up"], timeout=1_000)
    assert len(readers) == 1


def test_a_release_back_in_the_window_ends_the_hold_and_the_reader(x_keys, qtbot):
    display, window, talk, key, calls, readers = x_keys
    xdotool(display, "keydown", "space")
    space(talk, QEvent.Type.KeyPress)
    QApplication.sendEvent(window, QEvent(QEvent.Type.WindowDeactivate))
    [reader] = readers
    qtbot.waitUntil(lambda: reader.reads >= 3, timeout=5_000)
    QApplication.sendEvent(window, QEvent(QEvent.Type.WindowActivate))  # the keyboard came back
    space(talk, QEvent.Type.KeyRelease)  # a repeat pair, the key still down: one hold
    space(talk, QEvent.Type.KeyPress)
    xdotool(display, "keyup", "space")
    space(talk, QEvent.Type.KeyRelease)
    qtbot.waitUntil(lambda: calls == ["down", "up"], timeout=5_000)
    assert reader.closed


def test_a_key_state_that_goes_unreadable_ends_the_hold_with_a_message(x_keys, qtbot):
    display, window, talk, key, calls, readers = x_keys
    xdotool(display, "keydown", "space")
    space(talk, QEvent.Type.KeyPress)
    QApplication.sendEvent(window, QEvent(QEvent.Type.WindowDeactivate))
    [reader] = readers
    qtbot.waitUntil(lambda: reader.reads >= 2, timeout=5_000)
    X11KeyState.close(reader)  # the connection is gone; the next read fails
    qtbot.waitUntil(lambda: len(calls) == 3, timeout=5_000)
    assert calls == ["down", "up", LOST_MESSAGE] and not key.hold.held
    xdotool(display, "keyup", "space")
