"""Dictation into another application, end to end: the real app and model, a real X server.

The app runs offscreen; its dictation grabs Ctrl+Alt+Space on an Xvfb desktop where another
process's text field has focus. xdotool holds the shortcut while a clip plays through the
file-backed microphone; the field must end up holding the transcript, typed once, turns spaced.
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest

from desktop_rt.config import PUSH_TO_TALK, AudioSettings, ServerSettings, Settings
from desktop_rt.dictation.errors import DictationError
from desktop_rt.dictation.gesture import HotkeyGesture
from desktop_rt.dictation.settings import DEFAULT_SHORTCUT, HOLD, DictationSettings
from desktop_rt.dictation.shortcut import parse_shortcut
from desktop_rt.dictation.x11_hotkey import X11Hotkey
from desktop_rt.engine.asr.file_transcriber import FileTranscriber
from desktop_rt.engine.audio.sources import FileAudioSource
from tests.dictation.test_command_trigger import dictate
from tests.support.clips import read_clip, reference_text, wer
from tests.support.x_desktop import target_field, x_desktop, xdotool

pytestmark = pytest.mark.slow

TURNS = (("beckett", "ss-0920", "ss-0930"), ("ss-0870",))
"""Two holds, 61 reference words: one word more or less than offline is 1.6 points."""
PAUSE_SECONDS = 0.4  # between the clips of a turn, as tests/support/clips.py joins them
GAP_SECONDS = 1.0  # between the turns: the shortcut goes up 0.3 s into it and down again
SETTINGS = Settings().with_group(
    server=ServerSettings(port=0),
    audio=AudioSettings(mode=PUSH_TO_TALK),
    dictation=DictationSettings(enabled=True),
)


@pytest.fixture(scope="module")
def x_display(tmp_path_factory):
    with x_desktop(tmp_path_factory.mktemp("x")) as name:
        yield name


@pytest.fixture
def x_session(x_display, monkeypatch):
    monkeypatch.setenv("DISPLAY", x_display)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("XDG_SESSION_TYPE", "x11")
    return x_display


def turn_audio(names: tuple[str, ...]) -> np.ndarray:
    pause = np.zeros(int(16000 * PAUSE_SECONDS), dtype=np.float32)
    parts = [part for name in names for part in (read_clip(name), pause)]
    return np.concatenate(parts[:-1])


@pytest.mark.parametrize("at_turn_end", [False, True], ids=["as-committed", "at-turn-end"])
def test_held_shortcut_types_the_transcript_into_another_app(
    make_app, qtbot, x_session, tmp_path, whisper_backend, at_turn_end
):
    turns = [turn_audio(names) for names in TURNS]
    gap = np.zeros(int(16000 * GAP_SECONDS), dtype=np.float32)
    source = FileAudioSource(np.concatenate([turns[0], gap, turns[1]]), autoplay=False)
    dictation = DictationSettings(enabled=True, at_turn_end=at_turn_end)
    app = make_app(source, settings=SETTINGS.with_group(dictation=dictation))
    adapter, controller = app.window.dictation, app.controller
    qtbot.waitUntil(lambda: adapter.engine is not None, timeout=20_000)
    engine = adapter.engine
    previews: list[str] = []
    controller.bridge.caption.connect(lambda _t: previews.append(engine.preview))

    with target_field(x_session, tmp_path / "field.txt") as field:
        first_end = len(turns[0]) / 16000 + 0.3
        for index, until in enumerate(
            (lambda: source.position >= first_end, source.finished.is_set)
        ):
            xdotool(x_session, "keydown", "ctrl+alt+space")
            qtbot.waitUntil(lambda: controller.talking, timeout=10_000)
            if index == 0:
                source.play()
            qtbot.waitUntil(until, timeout=90_000)
            xdotool(x_session, "keyup", "ctrl+alt+space")
            qtbot.waitUntil(lambda: not controller.talking, timeout=10_000)
        qtbot.waitUntil(lambda: not engine.queue.claiming, timeout=60_000)
        qtbot.waitUntil(lambda: engine.wait_typed(0.01), timeout=30_000)
        typed = field.wait_text(engine.typed_text)

    offline = " ".join(FileTranscriber(whisper_backend).transcribe([t]).text for t in turns)
    reference = " ".join(reference_text(name) for names in TURNS for name in names)
    # The bound is offline + 2 points: one word of these 61. Typed at each turn's end,
    # the field holds the turns decoded whole, as offline hears them: that bound. Typed as the
    # words are committed, the field holds the streamed words, which can keep Whisper's guess
    # at a sentence's first second: "How do you marry the" for "Had he married a" (5 words,
    # 8.2 points) in one CI run on an AVX2 machine, and in 2 of 20 uneven replays of this turn
    # under CT2_FORCE_CPU_ISA=AVX2 (docs/design/streaming.md, *Evidence*). So that variant is
    # held to offline + 6 words: the guess once, and a word more; a clause lost or typed
    # twice is more than that.
    bound = 0.02 if at_turn_end else 0.10
    assert wer(reference, typed) <= wer(reference, offline) + bound, (typed, offline)
    # Typed once each, nothing retracted: the field holds what the window's captions show.
    # The captions show each turn as decoded whole at its end; typed as committed, the field
    # keeps the streamed words, so Whisper's first-second guess above (5 words) may stand in
    # the field and not in the captions. A clause typed twice or lost is more than that.
    shown = app.window.captions.committed_text()
    assert wer(shown, typed) <= (0.05 if at_turn_end else 0.10), (typed, shown)
    assert "  " not in typed and typed == typed.strip()
    assert re.search(r"[.?!,][^\s.]", typed) is None, typed  # the turns are spaced
    assert any(previews), "the preview should show tentative words while dictating"
    assert adapter.preview is not None and not adapter.preview.isVisible()


def test_dictation_on_a_wayland_session_without_wtype_or_ydotool_says_what_to_install(
    idle_app, qtbot, monkeypatch, tmp_path
):
    monkeypatch.setenv("XDG_SESSION_TYPE", "wayland")
    monkeypatch.setenv("PATH", str(tmp_path))  # neither typing tool installed
    controller = idle_app.controller
    with qtbot.waitSignal(controller.bridge.error, timeout=10_000) as error:
        controller.apply_settings(SETTINGS.with_group(server=controller.settings.server))
    assert "not available on this Wayland session" in error.args[0]
    assert "Install wtype" in error.args[0]
    assert idle_app.window.dictation.engine is None
    assert "not available" in idle_app.window.status_panel.message_label.text()


def test_the_shortcut_drives_talk_and_the_preview_from_another_app(
    idle_app, qtbot, x_session, tmp_path
):
    controller, adapter = idle_app.controller, idle_app.window.dictation
    with qtbot.waitSignal(adapter.active_changed, timeout=10_000) as active:
        controller.apply_settings(SETTINGS.with_group(server=controller.settings.server))
    assert active.args == [True] and adapter.engine is not None
    with target_field(x_session, tmp_path / "field.txt") as field:
        with qtbot.waitSignal(adapter.dictating_changed, timeout=10_000) as on:
            xdotool(x_session, "keydown", "ctrl+alt+space")
        assert on.args == [True] and adapter.preview is not None
        assert adapter.preview.isVisible() and adapter.preview.label.text() == "Listening…"
        with qtbot.waitSignal(adapter.dictating_changed, timeout=10_000) as off:
            xdotool(x_session, "keyup", "ctrl+alt+space")
        assert off.args == [False] and not adapter.preview.isVisible()
        assert field.text() == ""  # the shortcut itself never reaches the app
    off_settings = replace(controller.settings, dictation=DictationSettings(enabled=False))
    with qtbot.waitSignal(adapter.active_changed, timeout=10_000) as inactive:
        controller.apply_settings(off_settings)
    assert inactive.args == [False] and adapter.engine is None


def test_on_wayland_the_bound_command_drives_talk(idle_app, qtbot, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_SESSION_TYPE", "wayland")
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-test")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    controller, adapter = idle_app.controller, idle_app.window.dictation
    with qtbot.waitSignal(adapter.active_changed, timeout=10_000) as active:
        controller.apply_settings(SETTINGS.with_group(server=controller.settings.server))
    assert active.args == [True] and adapter.engine is not None
    with qtbot.waitSignal(adapter.dictating_changed, timeout=10_000) as on:
        assert dictate({}, "toggle").returncode == 0
    assert on.args == [True]
    with qtbot.waitSignal(adapter.dictating_changed, timeout=10_000) as off:
        assert dictate({}, "toggle").returncode == 0
    assert off.args == [False]
    off_settings = replace(controller.settings, dictation=DictationSettings(enabled=False))
    with qtbot.waitSignal(adapter.active_changed, timeout=10_000) as inactive:
        controller.apply_settings(off_settings)
    assert inactive.args == [False]
    qtbot.waitUntil(lambda: dictate({}, "toggle").returncode == 1, timeout=10_000)


def test_closing_while_the_shortcut_is_being_grabbed_releases_it(idle_app, qtbot, x_session):
    controller, adapter = idle_app.controller, idle_app.window.dictation
    controller.apply_settings(SETTINGS.with_group(server=controller.settings.server))
    done = adapter.shutdown()  # most likely before the helper thread grabbed the shortcut
    assert adapter.shutdown() is done
    qtbot.waitUntil(done.done, timeout=10_000)

    def can_grab() -> bool:
        probe = X11Hotkey(parse_shortcut(DEFAULT_SHORTCUT), HotkeyGesture(HOLD, 0.05), print)
        try:
            probe.start()
        except DictationError:
            return False
        probe.stop()
        return True

    qtbot.waitUntil(can_grab, timeout=10_000)  # another process's grab: polled, bounded
    assert adapter.engine is None
