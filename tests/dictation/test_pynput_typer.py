"""The Windows/macOS typer (pynput's Controller), run for real on pynput's X11 backend under
Xvfb into another process's focused Tk field; and the whole engine chosen for "win32" and
"darwin" (platforms passed as data) dictating through the shortcut held with xdotool."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from desktop_rt.dictation import pynput_listener
from desktop_rt.dictation.engine import DictationEngine
from desktop_rt.dictation.errors import DictationError
from desktop_rt.dictation.gesture import START, STOP
from desktop_rt.dictation.pynput_typer import HeldKeys, PynputTyper
from desktop_rt.dictation.settings import DictationSettings
from desktop_rt.live.transcript_recorder import CaptionTurn
from tests.dictation.test_x11_hotkey import Actions
from tests.support.x_desktop import xdotool


def wait_until(condition, timeout: float = 10) -> None:
    """Poll ``condition`` (another thread's view of another process's keys) until it holds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


@pytest.fixture
def typer(pynput_display):
    errors: list[str] = []
    typer = PynputTyper(errors.append)
    typer.start()
    typer.errors = errors
    yield typer
    typer.stop()
    assert not errors


def test_text_lands_in_the_focused_field_of_another_app(typer, field):
    text = "Hello, World! 42 (yes) ~ a_b\nnext line"
    typer.type_text(text)
    assert typer.wait_idle(20)
    field.wait_text(text)


def test_pieces_are_typed_in_order(typer, field):
    pieces = ["One", " two,", " three.", " Four"]
    for piece in pieces:
        typer.type_text(piece)
    assert typer.wait_idle(20)
    field.wait_text("".join(pieces))


def test_typing_waits_until_no_key_is_held(typer, field, pynput_display):
    xdotool(pynput_display, "keydown", "ctrl")
    try:
        wait_until(lambda: typer.held.holding)  # the typer's listener saw Ctrl go down
        typer.type_text("abc")  # typed with Ctrl held, letters would be commands on Windows
        assert not typer.wait_idle(0.5)  # still waiting for Ctrl to go up
    finally:
        xdotool(pynput_display, "keyup", "ctrl")
    assert typer.wait_idle(20)
    field.wait_text("abc")


def test_held_keys_are_counted_until_released_and_stop_wakes_a_waiter():
    held = HeldKeys()
    assert not held.holding
    held.press("ctrl")
    held.press("space")
    held.release("space")
    held.release("nothing held")
    held.wake()
    assert held.wait_none() is False  # woken with Ctrl still down: the typer types nothing
    assert held.holding
    held.release("ctrl")
    assert held.wait_none() is True and not held.holding


# ---- the engine as Windows and macOS build it, on pynput's X11 backend ----------------------

ON = DictationSettings(enabled=True)


def macos_trust(monkeypatch, trusted: bool) -> list[bool]:
    """macOS's answer to AXIsProcessTrusted (there is no Mac here): the asks are recorded."""
    asked: list[bool] = []

    def answer() -> bool:
        asked.append(trusted)
        return trusted

    framework = SimpleNamespace(AXIsProcessTrusted=answer)
    monkeypatch.setattr(pynput_listener, "_application_services", lambda: framework)
    return asked


def dictation_engine(env, platform) -> tuple[DictationEngine, Actions, list[str]]:
    actions, errors = Actions(), []
    engine = DictationEngine(
        ON, on_action=actions, on_error=errors.append, env=env, platform=platform
    )
    return engine, actions, errors


@pytest.mark.parametrize("platform", ["win32", "darwin"])
def test_the_engine_dictates_through_pynput_on_windows_and_macos(
    pynput_display, field, monkeypatch, platform
):
    asked = macos_trust(monkeypatch, True)
    engine, actions, errors = dictation_engine({"DISPLAY": pynput_display}, platform)
    engine.start()
    try:
        assert asked == ([True, True] if platform == "darwin" else [])  # the typer, the hotkey
        xdotool(pynput_display, "keydown", "ctrl+alt+space")
        assert actions.wait(1) == [START]
        engine.began()
        engine.caption(CaptionTurn("t1", 1, "Dictated", " words"))
        xdotool(pynput_display, "sleep", "0.5", "keyup", "space", "keyup", "ctrl+alt")
        assert actions.wait(2) == [START, STOP]
        engine.ended()
        engine.caption(CaptionTurn("t1", 1, "Dictated words, typed once.", final=True))
        engine.caption(CaptionTurn("after", 2, "not dictated"))
        assert engine.wait_typed(20)
        field.wait_text("Dictated words, typed once.")
        assert engine.typed_text == "Dictated words, typed once." and not errors
    finally:
        engine.stop()


def test_on_macos_without_the_permission_nothing_starts_and_the_user_is_told_where(
    pynput_display, monkeypatch
):
    asked = macos_trust(monkeypatch, False)
    engine, _actions, _errors = dictation_engine({}, "darwin")
    with pytest.raises(DictationError) as caught:
        engine.start()
    assert asked == [False]  # the typer asked first, and nothing went further
    message = str(caught.value)
    assert "System Settings > Privacy & Security > Accessibility" in message
    assert "Input Monitoring" in message and "turn dictation off and on again" in message
    engine.stop()
