"""The Windows/macOS shortcut (pynput's listener), run for real on pynput's X11 backend under
Xvfb: pressed, held through auto-repeat and tapped with xdotool while another app has focus.
:class:`ShortcutFilter`, which decides which key events are the shortcut's, is tested alone."""

from __future__ import annotations

import pytest

from desktop_rt.dictation.errors import DictationError
from desktop_rt.dictation.gesture import HOLD, START, STOP, TOGGLE, HotkeyGesture
from desktop_rt.dictation.pynput_hotkey import PynputHotkey, ShortcutFilter
from desktop_rt.dictation.pynput_listener import MACOS_PERMISSION, Permission
from desktop_rt.dictation.shortcut import parse_shortcut
from tests.dictation.test_x11_hotkey import GAP, Actions
from tests.support.x_desktop import x_server, xdotool

# ---- ShortcutFilter: key names in, the shortcut's presses and releases out -----------------


def shortcut_filter(text: str = "ctrl+alt+space") -> ShortcutFilter:
    return ShortcutFilter(parse_shortcut(text))


def test_the_key_counts_only_with_exactly_its_modifiers():
    keys = shortcut_filter()
    assert not keys.press("space")  # alone: the user typing a space
    keys.press("ctrl")
    assert not keys.press("space")  # Ctrl+Space
    keys.press("shift")
    keys.press("alt")
    assert not keys.press("space")  # Ctrl+Alt+Shift+Space is another shortcut
    keys.release("shift")
    assert keys.press("space")
    assert keys.release("space")


def test_once_engaged_the_keys_repeat_goes_on_without_the_modifiers():
    keys = shortcut_filter()
    for name in ("ctrl", "alt", "space"):
        keys.press(name)
    keys.release("ctrl")
    keys.release("alt")
    assert keys.press("space")  # auto-repeat after the modifiers were let go
    assert keys.release("space")
    keys.disengage()  # the gesture's hold ended
    assert not keys.press("space")
    assert not keys.release("space")


def test_modifiers_and_key_names_follow_the_shortcut():
    keys = shortcut_filter("super+Return")
    keys.press("super")  # Cmd on macOS, the Windows key on Windows
    assert keys.key == "enter" and keys.press("enter")
    letter = shortcut_filter("ctrl+shift+d")
    letter.press("ctrl")
    letter.press("shift")
    assert not letter.press("e") and letter.press("d")


def test_other_keys_and_unknown_keys_change_nothing():
    keys = shortcut_filter()
    for name in ("ctrl", "alt"):
        keys.press(name)
    assert not keys.press(None) and not keys.release(None)
    assert not keys.press("x") and not keys.release("x")
    assert keys.press("space")


# ---- PynputHotkey on a real X server --------------------------------------------------------


@pytest.fixture
def hotkey(pynput_display):
    started: list[PynputHotkey] = []

    def make(trigger=HOLD, text="ctrl+alt+space") -> tuple[PynputHotkey, Actions]:
        actions = Actions()
        key = PynputHotkey(parse_shortcut(text), HotkeyGesture(trigger, GAP), actions)
        key.start()
        started.append(key)
        return key, actions

    yield make
    for key in started:
        key.stop()


def test_a_held_shortcut_is_one_start_and_one_stop(hotkey, field, pynput_display):
    _key, actions = hotkey()
    xdotool(pynput_display, "keydown", "ctrl+alt+space")
    assert actions.wait(1) == [START]
    xdotool(pynput_display, "sleep", "1.0")  # held: X11 auto-repeats the key meanwhile
    # Space first: the keys also reach the focused app, and Alt+Space alone opens a window menu
    xdotool(pynput_display, "keyup", "space", "keyup", "ctrl+alt")
    assert actions.wait(2) == [START, STOP]
    xdotool(pynput_display, "type", "a b, c")  # typing, spaces among it, is not the shortcut
    xdotool(pynput_display, "key", "ctrl+alt+space")
    assert actions.wait(4) == [START, STOP, START, STOP]
    field.wait_text("a b, c")  # the field kept focus: pynput watched the keys, took none


def test_toggle_starts_on_a_tap_and_stops_on_the_next(hotkey, pynput_display):
    _key, actions = hotkey(TOGGLE)
    xdotool(pynput_display, "key", "ctrl+alt+space")
    assert actions.wait(1) == [START]
    xdotool(pynput_display, "sleep", "0.5", "key", "ctrl+alt+space")
    assert actions.wait(2) == [START, STOP]


def test_a_letter_shortcut_works_and_other_keys_are_ignored(hotkey, pynput_display):
    _key, actions = hotkey(text="ctrl+shift+d")
    xdotool(pynput_display, "key", "ctrl+shift+e", "key", "ctrl+d", "key", "shift+d")
    xdotool(pynput_display, "keydown", "ctrl+shift+d", "keyup", "ctrl+shift+d")
    assert actions.wait(2) == [START, STOP]


def test_stopping_while_held_stops_dictation(hotkey, pynput_display):
    key, actions = hotkey()
    xdotool(pynput_display, "keydown", "ctrl+alt+space")
    try:
        assert actions.wait(1) == [START]
        key.stop()
        assert actions.seen == [START, STOP]
    finally:
        xdotool(pynput_display, "keyup", "ctrl+alt+space")


def test_a_key_pynput_does_not_know_is_a_clear_error(hotkey):
    with pytest.raises(DictationError, match="names a key this keyboard does not have"):
        hotkey(text="ctrl+alt+nosuchkey")


def test_a_refused_start_reports_nothing_and_leaves_nothing_to_stop(pynput_display):
    refused = Permission(lambda: False, MACOS_PERMISSION.message)
    actions = Actions()
    key = PynputHotkey(parse_shortcut("ctrl+alt+space"), HotkeyGesture(HOLD, GAP), actions, refused)
    with pytest.raises(DictationError, match="Privacy & Security"):
        key.start()
    key.stop()
    assert actions.seen == []


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # its death
def test_a_listener_that_dies_is_an_error_and_stop_does_not_hang(tmp_path, monkeypatch):
    with x_server(tmp_path, "-extension", "RECORD") as name:  # pynput's X11 listener needs it
        monkeypatch.setenv("DISPLAY", name)
        key = PynputHotkey(parse_shortcut("ctrl+alt+space"), HotkeyGesture(HOLD, GAP), print)
        with pytest.raises(DictationError, match="could not listen to the keyboard"):
            key.start()
        key.stop()
