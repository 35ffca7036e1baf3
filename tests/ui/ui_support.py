"""A real app for UI tests: the real server and model, a file-backed microphone, a temp history."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from desktop_rt.config import PUSH_TO_TALK, AudioSettings, ServerSettings, Settings
from desktop_rt.engine.mic import FileAudioSource
from desktop_rt.ui.app import DesktopApp, build_app

DATA = Path(__file__).parent.parent / "data"


def words(text: str) -> list[str]:
    return re.findall(r"[a-z']+", text.lower())


def word_recall(reference: str, hypothesis: str) -> float:
    """Share of reference words found, in order, in the hypothesis (a lenient WER stand-in)."""
    ref, hyp = words(reference), words(hypothesis)
    i = found = 0
    for w in ref:
        j = i
        while j < len(hyp) and hyp[j] != w:
            j += 1
        if j < len(hyp):
            found += 1
            i = j + 1
    return found / max(1, len(ref))


@pytest.fixture
def make_app(qtbot, tmp_path, whisper_backend):
    """``make_app(source, mode=...)`` -> a started :class:`DesktopApp`, shut down after the test."""
    apps: list[DesktopApp] = []

    def make(source: FileAudioSource, *, mode: str = PUSH_TO_TALK, settings: Settings | None = None) -> DesktopApp:
        settings = settings or Settings().with_group(
            server=ServerSettings(port=0), audio=AudioSettings(mode=mode))
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
        app.window.deleteLater()
