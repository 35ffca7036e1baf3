"""Where dictation works, and the message where it does not."""

from __future__ import annotations

import pytest

from desktop_rt.dictation.support import unavailable_reason


def test_an_x11_session_can_dictate():
    assert unavailable_reason({"DISPLAY": ":0", "XDG_SESSION_TYPE": "x11"}, "linux") is None


@pytest.mark.parametrize(
    ("env", "platform", "says"),
    [
        ({"DISPLAY": ":0", "XDG_SESSION_TYPE": "wayland"}, "linux", "Wayland"),
        ({"WAYLAND_DISPLAY": "wayland-0"}, "linux", "Wayland"),
        ({}, "linux", "no X display"),
        ({"DISPLAY": ":0"}, "win32", "not available on this system"),
        ({"DISPLAY": ":0"}, "darwin", "not available on this system"),
    ],
)
def test_elsewhere_it_says_why_not(env, platform, says):
    reason = unavailable_reason(env, platform)
    assert reason is not None and says in reason
