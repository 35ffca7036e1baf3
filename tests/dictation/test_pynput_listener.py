"""pynput loaded and its listener started, for real: on Linux pynput's X11 backend (Xvfb).

What Windows and macOS do differently is data here: the key objects their backends make are
built with pynput's own classes, and macOS's permission answer is a Permission whose check says
no (there is no Mac here to refuse one).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_rt.dictation.errors import DictationError
from desktop_rt.dictation.pynput_listener import (
    MACOS_PERMISSION,
    NO_PERMISSION,
    Permission,
    key_name,
    load_keyboard,
    start_listener,
)
from tests.support.x_desktop import x_server, xdotool

ROOT = Path(__file__).resolve().parents[2]


def test_keys_are_named_as_the_shortcut_names_them(pynput_display):
    keyboard = load_keyboard()
    Key, KeyCode = keyboard.Key, keyboard.KeyCode
    for key, name in [
        (Key.ctrl, "ctrl"),
        (Key.ctrl_r, "ctrl"),
        (Key.alt_l, "alt"),
        (Key.shift_r, "shift"),
        (Key.cmd, "super"),
        (Key.space, "space"),
        (Key.f9, "f9"),
        (Key.page_up, "page_up"),
        (KeyCode.from_char("D"), "d"),
        (KeyCode.from_char("é"), "é"),
        # Windows with Ctrl held: a control code as the character, the letter's virtual key
        (KeyCode(vk=0x44, char="\x04"), "d"),
        (KeyCode(vk=0x35), "5"),
        (KeyCode(vk=0xFE03), None),  # a code with no character (ISO_Level3_Shift)
        (None, None),  # pynput passes None for a key it cannot read
    ]:
        assert key_name(key, keyboard) == name, key


def test_a_listener_starts_and_stops(pynput_display):
    keyboard = load_keyboard()
    listener = keyboard.Listener()
    start_listener(listener, NO_PERMISSION)
    assert listener.is_alive()
    listener.stop()
    # On X11 pynput sends its stop on the connection that waits for keys, so its thread ends
    # at the next key event (Windows and macOS stop at once); nothing is reported after stop.
    xdotool(pynput_display, "key", "shift")
    listener.join(10)
    assert not listener.is_alive()


def test_a_permission_not_granted_says_which_settings_to_open(pynput_display):
    keyboard = load_keyboard()
    listener = keyboard.Listener()
    refused = Permission(lambda: False, MACOS_PERMISSION.message)
    with pytest.raises(DictationError) as caught:
        start_listener(listener, refused)
    message = str(caught.value)
    assert "System Settings > Privacy & Security > Accessibility" in message
    assert "Input Monitoring" in message
    assert not listener.is_alive()  # nothing was started


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # its death
def test_a_listener_that_cannot_listen_is_a_clear_error(tmp_path, monkeypatch):
    """An X server without the RECORD extension: pynput's listener thread dies at once, as a
    macOS event tap refused by the system does."""
    with x_server(tmp_path, "-extension", "RECORD") as name:
        monkeypatch.setenv("DISPLAY", name)
        keyboard = load_keyboard()
        listener = keyboard.Listener()
        with pytest.raises(DictationError, match="could not listen to the keyboard"):
            start_listener(listener, NO_PERMISSION)
        assert not listener.is_alive()


def test_pynput_without_a_backend_is_a_clear_error():
    """In a fresh process with no display, pynput has no backend to load."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    code = (
        "from desktop_rt.dictation.errors import DictationError\n"
        "from desktop_rt.dictation.pynput_listener import load_keyboard\n"
        "try:\n    load_keyboard()\nexcept DictationError as exc:\n    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "Dictation could not load pynput" in done.stdout
    assert "Reinstall desktop-rt" in done.stdout
