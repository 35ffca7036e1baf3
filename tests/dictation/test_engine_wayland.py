"""The dictation engine in a real Wayland session (headless Sway with a focused foot terminal):
the key the user binds in the compositor runs ``desktop-rt dictate``, and the dictated turns end
up typed into the terminal through wtype; a second app in the same session is refused."""

from __future__ import annotations

import pytest

from desktop_rt.dictation.engine import DictationEngine
from desktop_rt.dictation.errors import DictationError
from desktop_rt.dictation.gesture import START, STOP
from desktop_rt.dictation.settings import DictationSettings
from desktop_rt.live.transcript_recorder import CaptionTurn
from tests.dictation.test_command_trigger import dictate
from tests.dictation.test_x11_hotkey import Actions
from tests.support.wayland_desktop import sway_field

ON = DictationSettings(enabled=True)


@pytest.fixture(scope="module")
def wayland():
    with sway_field() as field:
        yield field


def test_bound_commands_dictate_into_the_focused_wayland_window(wayland):
    actions, errors = Actions(), []
    engine = DictationEngine(ON, on_action=actions, on_error=errors.append, env=wayland.env)
    engine.start()
    try:
        engine.caption(CaptionTurn("before", 0, "not dictated"))
        assert dictate(wayland.env, "press").returncode == 0
        assert actions.wait(1) == [START]
        engine.began()
        engine.caption(CaptionTurn("t1", 1, "Dictated", " words"))
        assert engine.preview == "words"
        assert dictate(wayland.env, "release").returncode == 0
        assert actions.wait(2) == [START, STOP]
        engine.ended()
        engine.caption(CaptionTurn("t1", 1, "Dictated words.", final=True))
        engine.caption(CaptionTurn("after", 2, "hands-free, after the release"))
        assert dictate(wayland.env, "toggle").returncode == 0
        assert actions.wait(3) == [START, STOP, START]
        engine.began()
        engine.caption(CaptionTurn("t2", 3, "Café again", final=True))
        assert dictate(wayland.env, "toggle").returncode == 0
        assert actions.wait(4) == [START, STOP, START, STOP]
        engine.ended()
        assert engine.wait_typed(60)
        wayland.wait_text("Dictated words. Café again")
        assert engine.typed_text == "Dictated words. Café again" and not errors
    finally:
        engine.stop()
    done = dictate(wayland.env, "press")
    assert done.returncode == 1 and "not running with dictation on" in done.stderr


def test_a_second_app_in_the_session_is_refused_and_types_nothing(wayland):
    first = DictationEngine(ON, on_action=Actions(), on_error=print, env=wayland.env)
    first.start()
    try:
        second = DictationEngine(ON, on_action=Actions(), on_error=print, env=wayland.env)
        with pytest.raises(DictationError, match="Another desktop-rt already listens"):
            second.start()
    finally:
        first.stop()
