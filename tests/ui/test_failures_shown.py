"""The window shows a model that failed to load and, once, a damaged history moved aside."""

from __future__ import annotations

import numpy as np

from desktop_rt.config import PUSH_TO_TALK, AudioSettings, ServerSettings, Settings
from desktop_rt.engine.audio.sources import FileAudioSource
from desktop_rt.ui.app import DesktopApp, build_app


def _app(tmp_path, backend_factory) -> DesktopApp:
    return build_app(
        settings=Settings().with_group(
            server=ServerSettings(port=0), audio=AudioSettings(mode=PUSH_TO_TALK)
        ),
        source_factory=lambda _settings: FileAudioSource(np.zeros(16000, dtype=np.float32)),
        backend_factory=backend_factory,
        history_path=tmp_path / "history.sqlite3",
        persist_settings=False,
    )


def _close(qtbot, app: DesktopApp) -> None:
    with qtbot.waitSignal(app.controller.shut_down, timeout=10_000):
        app.window.close()
    app.dispose()


def test_a_model_that_raises_a_bare_exception_is_shown_as_failed(qtbot, tmp_path):
    def damaged_tokenizer(_spec):  # what tokenizers raises for a garbage tokenizer.json
        raise Exception("expected value at line 1 column 1")

    app = _app(tmp_path, damaged_tokenizer)
    app.window.show()
    qtbot.waitExposed(app.window)
    app.start()
    try:
        panel = app.window.status_panel
        qtbot.waitUntil(lambda: "could not be loaded" in panel.message, timeout=10_000)
        assert "expected value at line 1 column 1" in panel.message
        assert "failed" in panel.model_label.text()
        assert app.controller.server_state.state == "failed"
        assert not app.controller.listening
    finally:
        _close(qtbot, app)


def test_a_damaged_history_is_moved_aside_and_the_user_told_once(qtbot, tmp_path):
    (tmp_path / "history.sqlite3").write_bytes(b"not a database " * 500)

    def no_model(_spec):
        raise AssertionError("this test loads no model")

    app = _app(tmp_path, no_model)
    app.window.show()
    qtbot.waitExposed(app.window)
    try:
        panel = app.window.status_panel
        qtbot.waitUntil(lambda: "moved aside" in panel.message, timeout=10_000)
        assert "python -m desktop_rt.history.recover" in panel.message
        assert app.controller.writer is not None  # new sessions are saved
        (moved,) = tmp_path.glob("history.sqlite3.damaged-*")
        assert moved.name in panel.message
    finally:
        _close(qtbot, app)
    again = _app(tmp_path, no_model)  # the next start has a good file: nothing to tell
    assert again.controller.writer is not None and again.controller.writer.damaged_copy is None
    _close(qtbot, again)
