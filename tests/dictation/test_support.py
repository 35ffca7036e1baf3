"""Where dictation works, and the message where it does not.

The Wayland cases use PATH folders holding links to the installed wtype and ydotool (or
nothing): support is decided on what is installed, as on a user's machine.
"""

from __future__ import annotations

import sys

import pytest

from desktop_rt.dictation.support import unavailable_reason
from tests.dictation.test_typer_choice import tools_folder


def test_an_x11_session_can_dictate():
    assert unavailable_reason({"DISPLAY": ":0", "XDG_SESSION_TYPE": "x11"}, "linux") is None


@pytest.mark.parametrize("tool", ["wtype", "ydotool"])
def test_a_wayland_session_with_a_typing_tool_can_dictate(tmp_path, tool):
    path = tools_folder(tmp_path / "bin", tool)
    env = {"WAYLAND_DISPLAY": "wayland-0", "XDG_SESSION_TYPE": "wayland", "PATH": path}
    assert unavailable_reason(env, "linux") is None


@pytest.mark.parametrize("desktop", ["sway", "GNOME"])
def test_a_wayland_session_without_one_is_told_what_to_install(tmp_path, desktop):
    path = tools_folder(tmp_path / "bin")
    env = {"WAYLAND_DISPLAY": "wayland-0", "XDG_CURRENT_DESKTOP": desktop, "PATH": path}
    reason = unavailable_reason(env, "linux")
    assert reason is not None and "Wayland" in reason
    first = "ydotool" if desktop == "GNOME" else "wtype"
    assert f"Install {first}:" in reason and "apt install wtype" in reason


@pytest.mark.parametrize(
    ("env", "platform", "says"),
    [
        ({}, "linux", "no X display"),
        ({"DISPLAY": ":0"}, "freebsd14", "not available on this system"),
        ({"DISPLAY": ":0"}, "cygwin", "it works on Windows, macOS and in Linux"),
    ],
)
def test_elsewhere_it_says_why_not(env, platform, says):
    reason = unavailable_reason(env, platform)
    assert reason is not None and says in reason


@pytest.mark.parametrize("platform", ["win32", "darwin"])
def test_windows_and_macos_can_dictate_with_pynput_installed(platform):
    assert unavailable_reason({}, platform) is None


@pytest.mark.parametrize("platform", ["win32", "darwin"])
def test_windows_and_macos_without_pynput_are_told_to_reinstall(platform, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynput", None)  # an install without it
    reason = unavailable_reason({}, platform)
    assert reason is not None and "needs the pynput package" in reason
