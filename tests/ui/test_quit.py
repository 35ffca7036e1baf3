"""Quitting: helpers end before the objects they emit into are deleted, 50 times in a row (the
window closed or SIGTERM), and the real app quits cleanly by SIGTERM at any moment."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from desktop_rt.config import HANDS_FREE, PUSH_TO_TALK, AudioSettings, ServerSettings, Settings
from desktop_rt.engine.audio.sources import FileAudioSource
from desktop_rt.ui.app import build_app, quit_on_signals, threads_left
from tests.support.clips import DATA

pytestmark = pytest.mark.slow

# Threads the app starts for itself (the shared test backend's are not among them).
APP_THREADS = (
    "desktop-rt-start",
    "desktop-rt-stop",
    "desktop-rt-restart",
    "desktop-rt-shutdown",
    "desktop-rt-server",
    "desktop-rt-capture",
    "desktop-rt-file-source",
    "desktop-rt-store",
    "desktop-rt-history",
)


def app_threads() -> list[str]:
    return sorted(t.name for t in threading.enumerate() if t.name in APP_THREADS)


def test_starting_and_quitting_50_times_with_audio_flowing(qtbot, qapp, tmp_path, whisper_backend):
    """Issue 17: one quit in 11 crashed ("shared QObject was deleted directly"). Every third
    quit is a SIGTERM, handled as the app's entry point handles it."""
    for n in range(50):
        source = FileAudioSource(DATA / "beckett.wav", pace=1.0)
        mode = HANDS_FREE if n % 2 else PUSH_TO_TALK
        app = build_app(
            settings=Settings().with_group(
                server=ServerSettings(port=0), audio=AudioSettings(mode=mode)
            ),
            source_factory=lambda _settings, source=source: source,
            backend_factory=lambda _spec: whisper_backend,
            history_path=tmp_path / "history.sqlite3",
            persist_settings=False,
            owns_backend=False,
        )
        seen: dict[str, object] = {}

        def shut_down(seen: dict[str, object] = seen) -> None:  # runs on the emitting thread
            seen["thread"] = threading.current_thread()
            seen["alive"] = [t for t in app_threads() if t != "desktop-rt-history"]

        app.controller.shut_down.connect(shut_down, Qt.ConnectionType.DirectConnection)
        restore = quit_on_signals(qapp, app)
        try:
            app.start()
            qtbot.waitUntil(lambda app=app: app.controller.listening, timeout=60_000)
            if mode == PUSH_TO_TALK:
                app.controller.talk_down()
            flowing = 0.2 + 0.15 * (n % 6)
            qtbot.waitUntil(lambda source=source, s=flowing: source.position > s, timeout=10_000)
            with qtbot.waitSignal(app.controller.shut_down, timeout=60_000):
                if n % 3 == 2:
                    signal.raise_signal(signal.SIGTERM)  # logout, kill
                else:
                    app.window.close()  # what Quit does
        finally:
            restore()
        assert not app.window.isVisible(), n
        assert seen["thread"] is threading.main_thread(), n
        assert seen["alive"] == [], (n, seen["alive"])  # no helper can emit into the window now
        app.dispose()
        assert app_threads() == [], n


def test_threads_left_at_exit_are_joined_and_the_ones_still_running_named():
    """What ``run_app`` does last: join every thread, and name those a join could not end
    (then it exits without the interpreter's teardown)."""
    release = threading.Event()
    lingering = threading.Thread(target=release.wait, name="lingering", daemon=True)
    lingering.start()
    try:
        assert "lingering" in threads_left(0.2)
    finally:
        release.set()
    assert "lingering" not in threads_left(30.0)  # joined, not waited out


# What a crash or an unclean exit leaves in the app's log (faulthandler is on in the app).
CRASH_SIGNS = ("Fatal Python error", "Traceback", "QObject", "terminate called", "still running")
MOMENTS = {"loading": "loading the speech model", "listening": "ready to listen"}


def _quit_by_sigterm(env: dict[str, str], log: Path, moment: str, delay: float) -> str:
    """Start the app, SIGTERM it ``delay`` s after the model began to load ("loading") or after
    it is ready to listen with audio flowing ("listening"); its log, once it exited 0."""
    with log.open("wb") as out:
        app = subprocess.Popen(
            [sys.executable, "-m", "desktop_rt.cli", "gui"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 240
        while MOMENTS[moment] not in log.read_text(errors="replace"):
            assert app.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.05)  # another process's log: nothing to wait on but polling
        time.sleep(delay)  # the moment under test: SIGTERM this long into that state
        app.send_signal(signal.SIGTERM)
        code = app.wait(180)
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
    text = log.read_text(errors="replace")
    assert code == 0, (moment, delay, code, text[-4000:])
    return text


def test_the_real_app_quits_cleanly_on_sigterm_while_loading_and_listening(
    default_model_dir, tmp_path
):
    """The process exits 0 with no crash, no traceback and no thread left running, whether
    SIGTERM comes while the model loads, as it becomes ready, or while it transcribes: so the
    model is unloaded and every thread joined before the interpreter shuts down."""
    config = tmp_path / "config"
    config.mkdir()
    settings = '{"version": 3, "audio": {"mode": "hands_free"}, "server": {"port": 0}}'
    (config / "settings.json").write_text(settings)
    env = dict(
        os.environ,
        QT_QPA_PLATFORM="offscreen",
        DESKTOP_RT_CONFIG_DIR=str(config),
        DESKTOP_RT_AUDIO_FILE=str(DATA / "beckett.wav"),
        HF_HUB_OFFLINE="1",
        PYTHONFAULTHANDLER="1",
    )
    draw = random.Random(17)
    moments = [("loading", draw.uniform(0.0, 2.0)) for _ in range(3)]
    moments += [("listening", draw.uniform(0.0, 0.3)) for _ in range(2)]
    moments += [("listening", draw.uniform(1.0, 6.0)) for _ in range(5)]
    for n, (moment, delay) in enumerate(moments):
        text = _quit_by_sigterm(env, tmp_path / f"app-{n}.log", moment, delay)
        assert "SIGTERM received" in text, (moment, delay, text[-3000:])
        assert [line for line in text.splitlines() if any(s in line for s in CRASH_SIGNS)] == []
