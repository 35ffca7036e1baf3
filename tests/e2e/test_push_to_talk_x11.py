"""End to end on an X11 desktop: Space held over 10 s of speech with xdotool gives one turn.

The real app (``desktop-rt gui``) runs under Xvfb with openbox; its microphone is its real
capture path (PortAudio, ALSA ``pulse`` plugin) reading a PulseAudio null sink's monitor, into
which two LibriVox sentences (10.1 s of speech, parted by a pause long enough to end a
hands-free turn) are played at real-time pace while Space is held (from before the clip starts
until it has played). The turn saved in the history must be the only one; the capture path must
lose nothing (the app logs no dropped block and no input overflow); the turn must begin and end
with the words faster-whisper's offline transcript (same model) of the same audio begins and
ends with, so no word is clipped at either end; and its word error rate may exceed offline's by
at most ``ISSUE_BOUND``, 2 points (docs/design/app.md, "End to end").
"""

from __future__ import annotations

import sqlite3
import subprocess
import time
from functools import partial
from pathlib import Path

import numpy as np
import pytest
import soundfile

from tests.e2e.desktop_session import (
    RunningApp,
    load,
    output,
    quit_app,
    running_app,
    started,
    wait_while_progressing,
    wait_while_running,
)
from tests.support.clips import read_clip, reference_text, wer, words_of

pytestmark = pytest.mark.slow

SPEECH_SECONDS = 10.0  # the issue's hold: at least this much speech while Space is down
TAIL_SECONDS = 0.4  # Space stays down this long after the clip has played
ISSUE_BOUND = 0.02  # WER points over offline on the same audio; see the last assertion
CLIPS = ["ss-0880", "ss-0870"]  # 3.0 s, a pause, 7.1 s: 10.1 s of speech, 30 words


def _audio() -> tuple[np.ndarray, str]:
    # A pause longer than hands-free's 500 ms: only the held key keeps this one turn.
    lead, gap = np.zeros(3200, dtype=np.float32), np.zeros(12800, dtype=np.float32)
    speech = [read_clip(name) for name in CLIPS]
    assert sum(len(clip) for clip in speech) >= SPEECH_SECONDS * 16000
    audio = np.concatenate([lead, speech[0], gap, speech[1], np.zeros(4800, dtype=np.float32)])
    return audio, " ".join(reference_text(name) for name in CLIPS)


def _offline(model_dir, audio: np.ndarray) -> str:
    from faster_whisper import WhisperModel

    model = WhisperModel(str(model_dir), device="cpu", compute_type="int8")
    segments, _info = model.transcribe(audio, language="en")
    return " ".join(segment.text.strip() for segment in segments)


def _turns(db) -> list[tuple[str, int]]:
    if not db.exists():
        return []
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
        return conn.execute("SELECT text, completed FROM turns ORDER BY seq").fetchall()


def _hold_space(app: RunningApp, wav: Path, seconds: float) -> float:
    """Space down, the clip (``seconds`` long) into the virtual microphone, Space up once it
    has played; how long Space was held."""
    env, window = app.env, app.window
    subprocess.run(["xdotool", "keydown", "space"], env=env, check=True, timeout=10)
    down = time.monotonic()
    with started(["paplay", "--device=e2e_mic", str(wav)], env, wav.with_suffix(".log")) as play:
        wait_while_running(
            app, "the title to show recording", lambda: "Recording" in _title(env, window), 5
        )
        wait_while_running(app, "the clip to play", lambda: play.poll() is not None, seconds + 10)
        assert play.returncode == 0, wav.with_suffix(".log").read_text()
        time.sleep(TAIL_SECONDS)  # the hold itself: the clip's last blocks reach the app
        subprocess.run(["xdotool", "keyup", "space"], env=env, check=True, timeout=10)
        held = time.monotonic() - down
    wait_while_running(
        app,
        "the title to stop showing recording",
        lambda: "Recording" not in _title(env, window),
        5,
    )
    return held


def _title(env: dict[str, str], window: str) -> str:
    return output(["xdotool", "getwindowname", window], env)


def _capture_losses(log: str) -> tuple[list[str], list[str]]:
    """The app's own account of its capture (CaptureFeed and SoundDeviceSource log it at stop)."""
    dropped = [line for line in log.splitlines() if "blocks dropped" in line]
    overflows = [line for line in log.splitlines() if "input overflows" in line]
    return dropped, overflows


@pytest.mark.timeout(1200)  # the wait for the turn lasts as long as the engine makes progress
def test_space_held_over_ten_seconds_of_speech_gives_one_turn_and_loses_nothing(
    tmp_path, default_model_dir
):
    audio, reference = _audio()
    wav = tmp_path / "speech.wav"
    soundfile.write(wav, audio, 16000)
    with running_app(tmp_path, "push_to_talk") as app:
        activate = ["xdotool", "windowactivate", "--sync", app.window]
        subprocess.run(activate, env=app.env, check=True, timeout=10)
        held = _hold_space(app, wav, len(audio) / 16000)
        # A loaded machine leaves the engine behind the audio: wait while it makes progress.
        saved = wait_while_progressing(
            app,
            lambda: any(c for _t, c in _turns(app.history)),
            partial(_turns, app.history),
            stall=120,
        )
        quit_app(app)
        db, app_log = app.history, app.log
    turns = _turns(db)
    assert saved, ("no turn completed for 120 s", turns, load())
    assert len(turns) == 1, turns
    dropped, overflows = _capture_losses(app_log.read_text())
    assert dropped and all(", 0 blocks dropped" in line for line in dropped), (dropped, load())
    assert overflows and all(": 0 input overflows" in line for line in overflows), (
        overflows,
        load(),
    )
    offline, text = _offline(default_model_dir, audio), turns[0][0]
    app_wer, offline_wer = wer(reference, text), wer(reference, offline)
    print(f"held {held:.1f} s ({load()})")
    print(f"app {app_wer:.3f} {text!r}\noffline {offline_wer:.3f} {offline!r}")
    # Nothing clipped: the turn starts and ends as the whole clip heard offline does.
    assert words_of(text)[:3] == words_of(offline)[:3], (text, offline)
    assert words_of(text)[-3:] == words_of(offline)[-3:], (text, offline)
    # The issue's bound: 2 points over offline, less than one word of 30. The saved turn is its
    # completed transcript, the turn decoded whole once Space went up (docs/design/streaming.md,
    # "Whole-turn decode"), so it reads as offline does; a lost or doubled phrase, or a word
    # the streamed passes spelled differently ("ill-sposed"), breaks it.
    assert app_wer <= offline_wer + ISSUE_BOUND, (text, offline)
