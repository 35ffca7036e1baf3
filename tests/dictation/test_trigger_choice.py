"""Which trigger a session gets: platforms and environments passed as data, nothing started."""

from __future__ import annotations

import pytest

from desktop_rt.dictation.command_trigger import CommandTrigger
from desktop_rt.dictation.errors import DictationError
from desktop_rt.dictation.gesture import HOLD, HotkeyGesture
from desktop_rt.dictation.pynput_hotkey import PynputHotkey
from desktop_rt.dictation.pynput_listener import MACOS_PERMISSION, NO_PERMISSION
from desktop_rt.dictation.settings import DictationSettings
from desktop_rt.dictation.shortcut import parse_shortcut
from desktop_rt.dictation.trigger_choice import choose_trigger
from desktop_rt.dictation.x11_hotkey import X11Hotkey

ON = DictationSettings(enabled=True, shortcut="Ctrl+Shift+F9")


def trigger_for(env, platform, settings=ON):
    return choose_trigger(settings, env, HotkeyGesture(HOLD, 0.05), print, platform)


def test_linux_sessions_get_the_key_grab_or_the_command():
    assert isinstance(trigger_for({"DISPLAY": ":0"}, "linux"), X11Hotkey)
    wayland = {"WAYLAND_DISPLAY": "wayland-0", "XDG_RUNTIME_DIR": "/tmp"}
    assert isinstance(trigger_for(wayland, "linux"), CommandTrigger)


@pytest.mark.parametrize(
    ("platform", "permission"), [("win32", NO_PERMISSION), ("darwin", MACOS_PERMISSION)]
)
def test_windows_and_macos_get_pynputs_listener_on_the_settings_shortcut(platform, permission):
    trigger = trigger_for({}, platform)
    assert isinstance(trigger, PynputHotkey)
    assert trigger.shortcut == parse_shortcut("ctrl+shift+f9")
    assert trigger.permission is permission


@pytest.mark.parametrize("platform", ["win32", "darwin", "linux"])
def test_a_bad_shortcut_is_refused_before_anything_starts(platform):
    with pytest.raises(DictationError, match="no modifier"):
        trigger_for({"DISPLAY": ":0"}, platform, DictationSettings(enabled=True, shortcut="f9"))


def test_no_display_on_linux_is_a_clear_error():
    with pytest.raises(DictationError, match="no X or Wayland display"):
        trigger_for({}, "linux")
