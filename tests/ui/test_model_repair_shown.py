"""The window shows a repair of the built-in model while it runs, then what was rebuilt (issue 19).

The embedded model's real files, damaged on disk; the real repair (at the start, or by the
background check after it) and the real window. The model itself is the shared one, so no test
transcribes with a damaged file.
"""

from __future__ import annotations

import numpy as np

from desktop_rt.config import PUSH_TO_TALK, AudioSettings, ServerSettings, Settings
from desktop_rt.engine.audio.sources import FileAudioSource
from desktop_rt.engine.models.embedded import EMBEDDED_WHISPER_BASE, ensure_default_model
from desktop_rt.ui.app import DesktopApp, build_app
from tests.support.model_damage import (
    sha256,
    truncate_to_half,
    zero_a_megabyte_keeping_size_and_mtime,
)


def _app(tmp_path, backend_factory) -> DesktopApp:
    return build_app(
        settings=Settings().with_group(
            server=ServerSettings(port=0), audio=AudioSettings(mode=PUSH_TO_TALK)
        ),
        source_factory=lambda _settings: FileAudioSource(np.zeros(16000, dtype=np.float32)),
        backend_factory=backend_factory,
        history_path=tmp_path / "history.sqlite3",
        persist_settings=False,
        owns_backend=False,
    )


def _shown(app: DesktopApp) -> list[tuple[bool, str, str]]:
    """(done, the panel's message, the server state) at each repair notice the window got."""
    seen: list[tuple[bool, str, str]] = []
    panel = app.window.status_panel  # connected before this: it has shown the notice already
    app.controller.bridge.model_repair.connect(
        lambda n: seen.append((n.done, panel.message, app.controller.server_state.state))
    )
    return seen


def _run(qtbot, app: DesktopApp, seen: list) -> None:
    app.window.show()
    qtbot.waitExposed(app.window)
    app.start()
    try:
        qtbot.waitUntil(lambda: any(done for done, _m, _s in seen), timeout=180_000)
        qtbot.waitUntil(lambda: app.controller.listening, timeout=60_000)
    finally:
        with qtbot.waitSignal(app.controller.shut_down, timeout=60_000):
            app.window.close()
        app.dispose()


def test_a_model_bin_rebuilt_at_the_start_shows_on_the_loading_screen(
    qtbot, tmp_path, whisper_backend
):
    models = tmp_path / "models"
    binary = ensure_default_model(models) / "model.bin"
    truncate_to_half(binary)  # the start sees it (size) and rebuilds it before loading

    def load(_spec):
        ensure_default_model(models)
        return whisper_backend

    app = _app(tmp_path, load)
    seen = _shown(app)
    _run(qtbot, app, seen)
    (started, first, state), (done, last, _state) = seen
    assert (started, done) == (False, True)
    assert "Repairing the built-in model" in first and state == "starting"
    assert "has been rebuilt" in last
    assert sha256(binary) == EMBEDDED_WHISPER_BASE.sha256


def test_a_model_bin_rebuilt_in_the_background_is_shown(qtbot, tmp_path, whisper_backend):
    models = tmp_path / "models"
    binary = ensure_default_model(models) / "model.bin"
    zero_a_megabyte_keeping_size_and_mtime(binary)  # only the full hash finds it

    def load(_spec):
        ensure_default_model(models, check_later=True)  # as the app's model kind does
        return whisper_backend

    app = _app(tmp_path, load)
    seen = _shown(app)
    _run(qtbot, app, seen)
    (started, first, _state), (done, last, _state2) = seen
    assert (started, done) == (False, True)
    assert "Repairing the built-in model" in first
    assert "model.bin was damaged and has been rebuilt" in last
    assert sha256(binary) == EMBEDDED_WHISPER_BASE.sha256


def test_a_garbage_tokenizer_restored_at_the_start_is_shown(qtbot, tmp_path, whisper_backend):
    """Issue 19: a garbage tokenizer.json gave a window that never became ready and said nothing."""
    models = tmp_path / "models"
    tokenizer = ensure_default_model(models) / "tokenizer.json"
    good = tokenizer.read_bytes()
    tokenizer.write_text("garbage")

    def load(_spec):
        ensure_default_model(models)
        return whisper_backend

    app = _app(tmp_path, load)
    seen = _shown(app)
    _run(qtbot, app, seen)
    ((done, message, state),) = seen  # restored at once: no "under way" notice
    assert done and state == "starting"
    assert "tokenizer.json was damaged and has been restored" in message
    assert tokenizer.read_bytes() == good
