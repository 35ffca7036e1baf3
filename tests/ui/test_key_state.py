"""Space's state read from a real X server (Xvfb, keys pressed by xdotool through XTest)."""

from __future__ import annotations

import pytest

from desktop_rt.ui.key_state import KeyStateError, X11KeyState, open_key_state
from tests.support.x_desktop import x_server, xdotool


@pytest.fixture
def display(tmp_path):
    with x_server(tmp_path, "-noreset") as name:  # keys stay down between xdotool runs
        yield name


def test_the_state_follows_the_key_and_a_held_key_never_reads_up(display):
    reader = X11KeyState(display)
    try:
        assert not reader.is_down()
        xdotool(display, "keydown", "space")
        # Auto-repeat runs on the server while the key is held; the state stays down throughout.
        assert all(reader.is_down() for _ in range(2_000))
        xdotool(display, "keyup", "space")
        assert not reader.is_down()
        xdotool(display, "keydown", "a")
        assert not reader.is_down()  # another key is not Space
        xdotool(display, "keyup", "a")
    finally:
        reader.close()
    with pytest.raises(KeyStateError, match="closed"):
        reader.is_down()
    reader.close()  # closing twice is harmless


def test_an_unreachable_display_is_a_clear_error():
    with pytest.raises(KeyStateError, match="cannot open the X display :7999"):
        X11KeyState(":7999")


def test_off_x11_there_is_no_reader(qapp):
    assert open_key_state() is None  # the tests run Qt offscreen
