"""Quitting: helpers end before the objects they emit into are deleted, 50 times in a row."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import Qt

from desktop_rt.config import HANDS_FREE, PUSH_TO_TALK, AudioSettings, ServerSettings, Settings
from desktop_rt.engine.audio.sources import FileAudioSource
from desktop_rt.ui.app import build_app
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


def test_starting_and_quitting_50_times_with_audio_flowing(qtbot, tmp_path, whisper_backend):
    """Issue 17: one quit in 11 crashed ("shared QObject was deleted directly")."""
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
        app.start()
        qtbot.waitUntil(lambda app=app: app.controller.listening, timeout=60_000)
        if mode == PUSH_TO_TALK:
            app.controller.talk_down()
        flowing = 0.2 + 0.15 * (n % 6)
        qtbot.waitUntil(lambda source=source, s=flowing: source.position > s, timeout=10_000)
        with qtbot.waitSignal(app.controller.shut_down, timeout=60_000):
            app.window.close()  # what Quit and SIGTERM do
        assert seen["thread"] is threading.main_thread(), n
        assert seen["alive"] == [], (n, seen["alive"])  # no helper can emit into the window now
        app.dispose()
        assert app_threads() == [], n
