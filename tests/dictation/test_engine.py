"""The dictation engine on a real X server: shortcut, claims and typing wired together."""

from __future__ import annotations

import pytest

from desktop_rt.dictation.engine import DictationEngine
from desktop_rt.dictation.errors import DictationError
from desktop_rt.dictation.gesture import START, STOP
from desktop_rt.dictation.settings import DictationSettings
from desktop_rt.live.transcript_recorder import CaptionTurn
from tests.dictation.test_x11_hotkey import Actions
from tests.support.x_clipboard import clipboard_now, user_clipboard
from tests.support.x_desktop import xdotool

ON = DictationSettings(enabled=True)


def engine_for(env, settings=ON) -> tuple[DictationEngine, Actions, list[str]]:
    actions, errors = Actions(), []
    engine = DictationEngine(settings, on_action=actions, on_error=errors.append, env=env)
    return engine, actions, errors


def test_dictated_turns_are_typed_and_others_are_not(x_display, field):
    engine, actions, errors = engine_for({"DISPLAY": x_display})
    engine.start()
    try:
        engine.caption(CaptionTurn("before", 0, "not dictated"))
        xdotool(x_display, "keydown", "ctrl+alt+space")
        assert actions.wait(1) == [START]
        engine.began()
        engine.caption(CaptionTurn("t1", 1, "Dictated", " words"))
        assert engine.preview == "words"
        xdotool(x_display, "keyup", "ctrl+alt+space")
        assert actions.wait(2) == [START, STOP]
        engine.ended()
        engine.caption(CaptionTurn("t1", 1, "Dictated words.", final=True))
        engine.caption(CaptionTurn("after", 2, "hands-free, after the release"))
        engine.began()
        engine.ended()
        engine.caption(CaptionTurn("t2", 3, "Ж again", final=True))
        assert engine.wait_typed(20)
        field.wait_text("Dictated words. Ж again")
        assert engine.typed_text == "Dictated words. Ж again" and not errors
    finally:
        engine.stop()


def test_a_wayland_session_without_a_typing_tool_gets_a_message_and_nothing_starts(tmp_path):
    env = {"WAYLAND_DISPLAY": "wayland-0", "PATH": str(tmp_path), "XDG_RUNTIME_DIR": str(tmp_path)}
    engine, _actions, _errors = engine_for(env)
    with pytest.raises(DictationError, match="not available on this Wayland session"):
        engine.start()
    engine.stop()  # nothing to stop: no error
    assert not (tmp_path / "desktop-rt").exists()  # no socket was made


def test_a_bad_shortcut_is_reported_before_anything_is_grabbed(x_display):
    bad = DictationSettings(enabled=True, shortcut="space")
    engine, _actions, _errors = engine_for({"DISPLAY": x_display}, bad)
    with pytest.raises(DictationError, match="no modifier"):
        engine.start()


def test_a_taken_shortcut_releases_the_typer_too(x_display):
    first, _a, _e = engine_for({"DISPLAY": x_display})
    first.start()
    try:
        second, _a2, _e2 = engine_for({"DISPLAY": x_display})
        with pytest.raises(DictationError, match="Another application"):
            second.start()
    finally:
        first.stop()
    again, _a3, _e3 = engine_for({"DISPLAY": x_display})
    again.start()  # the first released its grab
    again.stop()


def test_nothing_is_reported_once_stopping_began(x_display):
    engine, actions, _errors = engine_for({"DISPLAY": x_display})
    engine.start()
    xdotool(x_display, "keydown", "ctrl+alt+space")
    try:
        assert actions.wait(1) == [START]
        engine.stop()  # the hotkey ends its hold, but the caller is told nothing more
        assert actions.seen == [START]
    finally:
        xdotool(x_display, "keyup", "ctrl+alt+space")


def test_in_paste_mode_dictated_words_are_pasted_and_the_clipboard_comes_back(x_display, field):
    paste = DictationSettings(enabled=True, typing="paste")
    engine, actions, errors = engine_for({"DISPLAY": x_display}, paste)
    engine.start()
    try:
        with user_clipboard(x_display, "text", "copied before dictating"):
            xdotool(x_display, "keydown", "ctrl+alt+space")
            assert actions.wait(1) == [START]
            engine.began()
            engine.caption(CaptionTurn("p1", 1, "Pasted", " in"))
            xdotool(x_display, "keyup", "ctrl+alt+space")
            assert actions.wait(2) == [START, STOP]
            engine.ended()
            engine.caption(CaptionTurn("p1", 1, "Pasted in, déjà vu.", final=True))
            assert engine.wait_typed(30)
            field.wait_text("Pasted in, déjà vu.")
            assert clipboard_now(x_display).text == "copied before dictating"
        assert not errors
    finally:
        engine.stop()
