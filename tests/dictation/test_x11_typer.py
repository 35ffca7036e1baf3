"""XTest typing into another application's text field on a real X server (Xvfb)."""

from __future__ import annotations

import pytest

from desktop_rt.dictation.errors import DictationError
from desktop_rt.dictation.x11_typer import X11Typer
from tests.support.x_desktop import xdotool


@pytest.fixture
def typer(x_display):
    errors: list[str] = []
    typer = X11Typer(x_display, errors.append)
    typer.start()
    typer.errors = errors
    yield typer
    typer.stop()
    assert not errors


def test_text_lands_in_the_focused_field_of_another_app(typer, field):
    text = "Hello, World! 42 (yes) ~ a_b"
    typer.type_text(text)
    assert typer.wait_idle(20)
    field.wait_text(text)


def test_characters_the_layout_lacks_are_typed_through_spare_keys(typer, field):
    text = "Café déjà vu: привет, 東京 €5\nnext line"
    for piece in text.split(" "):
        typer.type_text(piece + " ")
    assert typer.wait_idle(20)
    field.wait_text(text + " ")


def test_typing_waits_until_no_key_is_held(typer, field, x_display):
    xdotool(x_display, "keydown", "ctrl")
    try:
        typer.type_text("abc")  # typed with Ctrl held, Tk would move, go back and copy instead
        assert not typer.wait_idle(0.5)  # still waiting for Ctrl to go up
    finally:
        xdotool(x_display, "keyup", "ctrl")
    assert typer.wait_idle(20)
    field.wait_text("abc")


def test_a_display_that_is_not_there_is_a_clear_error():
    with pytest.raises(DictationError, match="could not reach the X display"):
        X11Typer(":999").start()
