"""UI fixtures: a real app on the real model with a file-backed microphone and a temp history."""

from __future__ import annotations

import numpy as np
import pytest

from desktop_rt.config import PUSH_TO_TALK, AudioSettings, ServerSettings, Settings
from desktop_rt.engine.audio.sources import FileAudioSource
from desktop_rt.ui.app import DesktopApp, build_app


@pytest.fixture
def make_app(qtbot, tmp_path, whisper_backend):
    """``make_app(source, mode=...)`` -> a started :class:`DesktopApp`, shut down after the test."""
    apps: list[DesktopApp] = []

    def make(
        source: FileAudioSource, *, mode: str = PUSH_TO_TALK, settings: Settings | None = None
    ) -> DesktopApp:
        settings = settings or Settings().with_group(
            server=ServerSettings(port=0), audio=AudioSettings(mode=mode)
        )
        app = build_app(
            settings=settings,
            source_factory=lambda _settings: source,
            backend_factory=lambda _spec: whisper_backend,
            history_path=tmp_path / "history.sqlite3",
            persist_settings=False,
            owns_backend=False,
        )
        apps.append(app)  # closed below, not by qtbot: closing waits for the last words to be saved
        app.start()
        qtbot.waitExposed(app.window)
        qtbot.waitUntil(lambda: app.controller.listening, timeout=60_000)
        return app

    yield make
    for app in apps:
        app.window.close()
        qtbot.waitUntil(app.controller.stopped.is_set, timeout=60_000)
        app.dispose()


@pytest.fixture
def idle_app(qtbot, tmp_path):
    """A window, controller and tray whose server is never started (no model is loaded)."""

    def no_model(_spec):
        raise AssertionError("this test loads no model")

    app = build_app(
        settings=Settings().with_group(
            server=ServerSettings(port=0), audio=AudioSettings(mode=PUSH_TO_TALK)
        ),
        source_factory=lambda _settings: FileAudioSource(np.zeros(16000, dtype=np.float32)),
        backend_factory=no_model,
        history_path=tmp_path / "history.sqlite3",
        persist_settings=False,
    )
    app.window.show()
    qtbot.waitExposed(app.window)
    yield app
    with qtbot.waitSignal(app.controller.shut_down, timeout=10_000):
        app.window.close()
    app.dispose()
