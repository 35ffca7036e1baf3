"""End to end on an X11 desktop: another window takes the keyboard while Space is held.

The real app (``desktop-rt gui``) runs under Xvfb with openbox on a virtual microphone
(:mod:`tests.e2e.desktop_session`). Space goes down with xdotool, a LibriVox sentence plays
into the microphone, and 1.5 s in another application's window (a Tk text field) opens and
takes the keyboard; Space goes up while that window has it, once the clip has played. The
hold must last until the release (the title still says "Recording" just before it), and give
exactly one turn, whose word error rate may exceed offline's on the same audio by at most 2
points (issue 17; docs/design/app.md, "Push-to-talk that holds").
"""

from __future__ import annotations

import sqlite3
import subprocess
import time
from functools import partial

import numpy as np
import pytest
import soundfile

from tests.e2e.desktop_session import (
    load,
    output,
    quit_app,
    running_app,
    started,
    wait_while_progressing,
    wait_while_running,
)
from tests.support.clips import read_clip, reference_text, wer
from tests.support.x_desktop import target_field

pytestmark = pytest.mark.slow

CLIP = "ss-0870"  # 7.1 s of speech
FOCUS_AFTER = 1.5  # seconds into the clip the other window opens
TAIL_SECONDS = 0.4  # Space stays down this long after the clip has played
ISSUE_BOUND = 0.02


def _turns(db) -> list[tuple[str, int]]:
    if not db.exists():
        return []
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
        return conn.execute("SELECT text, completed FROM turns ORDER BY seq").fetchall()


def _offline(model_dir, audio: np.ndarray) -> str:
    from faster_whisper import WhisperModel

    model = WhisperModel(str(model_dir), device="cpu", compute_type="int8")
    segments, _info = model.transcribe(audio, language="en")
    return " ".join(segment.text.strip() for segment in segments)


@pytest.mark.timeout(1200)  # the wait for the turn lasts as long as the engine makes progress
def test_a_window_taking_the_keyboard_mid_hold_neither_ends_nor_splits_the_turn(
    tmp_path, default_model_dir
):
    audio = np.concatenate(
        [np.zeros(3200, np.float32), read_clip(CLIP), np.zeros(4800, np.float32)]
    )
    wav = tmp_path / "speech.wav"
    soundfile.write(wav, audio, 16000)
    with running_app(tmp_path, "push_to_talk") as app:
        env = app.env

        def title() -> str:
            return output(["xdotool", "getwindowname", app.window], env)

        activate = ["xdotool", "windowactivate", "--sync", app.window]
        subprocess.run(activate, env=env, check=True, timeout=10)
        subprocess.run(["xdotool", "keydown", "space"], env=env, check=True, timeout=10)
        wait_while_running(app, "the title to show recording", lambda: "Recording" in title(), 5)
        with started(["paplay", "--device=e2e_mic", str(wav)], env, tmp_path / "play.log") as play:
            time.sleep(FOCUS_AFTER)  # speech into the microphone while the window has focus
            with target_field(env["DISPLAY"], tmp_path / "field.txt"):
                focused = output(["xdotool", "getactivewindow"], env)
                wait_while_running(
                    app, "the clip to play", lambda: play.poll() is not None, len(audio) / 16000
                )
                time.sleep(TAIL_SECONDS)  # the hold itself: the clip's last blocks reach the app
                held_on = "Recording" in title()
                subprocess.run(["xdotool", "keyup", "space"], env=env, check=True, timeout=10)
                wait_while_running(
                    app,
                    "the title to stop showing recording",
                    lambda: "Recording" not in title(),
                    5,
                )
        saved = wait_while_progressing(
            app,
            lambda: any(c for _t, c in _turns(app.history)),
            partial(_turns, app.history),
            stall=120,
        )
        quit_app(app)
    assert focused and focused != app.window, "the other window never took the keyboard"
    assert held_on, "the hold ended when the other window took the keyboard"
    turns = _turns(app.history)
    assert saved, ("no turn completed for 120 s", turns, load())
    assert len(turns) == 1, turns
    reference, text = reference_text(CLIP), turns[0][0]
    offline = _offline(default_model_dir, audio)
    print(f"app {wer(reference, text):.3f} {text!r}\noffline {wer(reference, offline):.3f}")
    assert wer(reference, text) <= wer(reference, offline) + ISSUE_BOUND, (text, offline, load())
