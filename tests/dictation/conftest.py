"""An X11 desktop (Xvfb + openbox) per module, and a focused text field in another process."""

from __future__ import annotations

import pytest

from tests.support.x_desktop import target_field, x_desktop, xdotool


@pytest.fixture(scope="module")
def x_display(tmp_path_factory):
    with x_desktop(tmp_path_factory.mktemp("x")) as name:
        yield name


@pytest.fixture
def field(x_display, tmp_path):
    with target_field(x_display, tmp_path / "field.txt") as target:
        yield target


@pytest.fixture
def pynput_display(x_display, monkeypatch):
    """The X desktop as pynput's: its X11 backend reads ``DISPLAY`` from the environment.

    pynput's X11 listener thread ends at the first key event after its ``stop()``: one is
    pressed afterwards, so the listeners a test stopped end while the display is still there."""
    monkeypatch.setenv("DISPLAY", x_display)
    yield x_display
    xdotool(x_display, "key", "shift")
