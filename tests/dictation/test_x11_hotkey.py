"""The global shortcut on a real X server (Xvfb): pressed with xdotool while another app has
focus, held through auto-repeat, tapped to toggle, or refused when another client holds it."""

from __future__ import annotations

import threading

import pytest

from desktop_rt.dictation.errors import DictationError
from desktop_rt.dictation.gesture import HOLD, START, STOP, TOGGLE, HotkeyGesture
from desktop_rt.dictation.shortcut import parse_shortcut
from desktop_rt.dictation.x11_hotkey import X11Hotkey
from tests.support.x_desktop import xdotool

GAP = 0.2


class Actions:
    """What a hotkey reported, with a wait for the n-th action (they come from its thread)."""

    def __init__(self) -> None:
        self.seen: list = []
        self._changed = threading.Condition()

    def __call__(self, action) -> None:
        with self._changed:
            self.seen.append(action)
            self._changed.notify_all()

    def wait(self, count: int, timeout: float = 10) -> list:
        with self._changed:
            self._changed.wait_for(lambda: len(self.seen) >= count, timeout)
            return list(self.seen)


@pytest.fixture
def hotkey(x_display):
    started: list[X11Hotkey] = []

    def make(trigger=HOLD, text="ctrl+alt+space") -> tuple[X11Hotkey, Actions]:
        actions = Actions()
        key = X11Hotkey(parse_shortcut(text), HotkeyGesture(trigger, GAP), actions, x_display)
        key.start()
        started.append(key)
        return key, actions

    yield make
    for key in started:
        key.stop()


def test_a_held_shortcut_is_one_start_and_one_stop_and_never_reaches_the_app(
    hotkey, field, x_display
):
    _key, actions = hotkey()
    xdotool(x_display, "keydown", "ctrl+alt+space")
    assert actions.wait(1) == [START]
    xdotool(x_display, "sleep", "1.0")  # held: X11 auto-repeats the key meanwhile
    xdotool(x_display, "keyup", "ctrl+alt+space")
    assert actions.wait(2) == [START, STOP]
    xdotool(x_display, "type", "ok")  # the field still has focus and got no space
    field.wait_text("ok")


def test_toggle_starts_on_a_tap_and_stops_on_the_next(hotkey, x_display):
    _key, actions = hotkey(TOGGLE)
    xdotool(x_display, "key", "ctrl+alt+space")
    assert actions.wait(1) == [START]
    xdotool(x_display, "sleep", "0.5", "key", "ctrl+alt+space")
    assert actions.wait(2) == [START, STOP]


def test_caps_lock_on_does_not_hide_the_shortcut(hotkey, x_display):
    _key, actions = hotkey()
    xdotool(x_display, "key", "Caps_Lock")
    try:
        xdotool(x_display, "keydown", "ctrl+alt+space", "keyup", "ctrl+alt+space")
        assert actions.wait(2) == [START, STOP]
    finally:
        xdotool(x_display, "key", "Caps_Lock")


def test_a_shortcut_another_client_holds_is_a_clear_error(hotkey):
    hotkey()
    with pytest.raises(DictationError, match="Another application already uses Ctrl\\+Alt"):
        hotkey()


@pytest.mark.parametrize("text", ["super+F9", "ctrl+shift+page_up", "alt+shift+Return"])
def test_key_names_are_found_in_any_case(hotkey, text):
    key, _actions = hotkey(text=text)
    assert key.shortcut == parse_shortcut(text)


def test_a_key_the_keyboard_lacks_is_a_clear_error(hotkey):
    with pytest.raises(DictationError, match="names a key this keyboard does not have"):
        hotkey(text="ctrl+alt+nosuchkey")


def test_stopping_while_held_stops_dictation(hotkey, x_display):
    key, actions = hotkey()
    xdotool(x_display, "keydown", "ctrl+alt+space")
    try:
        assert actions.wait(1) == [START]
        key.stop()
        assert actions.seen == [START, STOP]
    finally:
        xdotool(x_display, "keyup", "ctrl+alt+space")
