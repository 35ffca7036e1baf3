"""Typing through wtype into a real Wayland client: headless Sway with a foot terminal.

Also the errors people meet: the tool not installed (PATH without it), and the tool failing
(no compositor at WAYLAND_DISPLAY), reported with the tool's own message and what to do.
ydotool is not run here: it needs /dev/uinput, which this machine does not have.
"""

from __future__ import annotations

import pytest

from desktop_rt.dictation.errors import DictationError
from desktop_rt.dictation.wayland_typer import WtypeTyper, YdotoolTyper
from tests.support.wayland_desktop import sway_field


@pytest.fixture(scope="module")
def wayland():
    with sway_field() as field:
        yield field


def started(typer):
    typer.start()
    return typer


def test_wtype_types_any_text_into_the_focused_wayland_window(wayland):
    errors: list[str] = []
    typer = started(WtypeTyper(wayland.env, errors.append))
    try:
        pieces = [
            "Hello, Wayland!",
            " Café déjà vu:",
            " привет 東京 €5",
            " -dash (yes) ~ a_b",
            "\nnext line",
        ]
        for piece in pieces:
            typer.type_text(piece)
        assert typer.wait_idle(60)
        wayland.wait_text("".join(pieces))
    finally:
        typer.stop()
    assert not errors


def test_a_tool_that_is_not_installed_is_named_with_what_to_install(tmp_path):
    for kind, words in ((WtypeTyper, "apt install wtype"), (YdotoolTyper, "/dev/uinput")):
        with pytest.raises(DictationError, match=f"needs the {kind.program} program") as caught:
            kind({"PATH": str(tmp_path), "WAYLAND_DISPLAY": "wayland-1"}).start()
        assert words in str(caught.value)


def test_a_failed_run_reports_the_tools_message_and_what_to_do(tmp_path):
    errors: list[str] = []
    env = {
        "PATH": "/usr/bin:/bin",
        "WAYLAND_DISPLAY": "no-such-display",
        "XDG_RUNTIME_DIR": str(tmp_path),
    }
    typer = started(WtypeTyper(env, errors.append))
    try:
        typer.type_text("lost")
        assert typer.wait_idle(30)
    finally:
        typer.stop()
    (message,) = errors
    assert message.startswith("Dictation could not type with wtype (")
    assert "Wayland connection failed" in message and "wlroots" in message
