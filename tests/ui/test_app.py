"""The app as a whole: responsiveness, closing mid-turn, mode switching, tray, port fallback, first launch."""

from __future__ import annotations

import socket

import pytest
from PySide6.QtCore import QElapsedTimer, Qt, QTimer

from desktop_rt.config import HANDS_FREE, PUSH_TO_TALK, ServerSettings, Settings
from desktop_rt.engine.audio.sources import FileAudioSource
from desktop_rt.history.store import TranscriptStore
from desktop_rt.ui.app import build_app
from tests.support.clips import DATA, read_clip, reference_text
from tests.support.ui_support import word_recall

pytestmark = pytest.mark.slow


def _run_queue_delay_ms() -> float:
    """Time this thread spent runnable but waiting for a CPU (Linux schedstat), in ms."""
    try:
        with open("/proc/thread-self/schedstat") as stat:
            return int(stat.read().split()[1]) / 1e6
    except OSError:
        return 0.0


def test_ui_thread_is_never_blocked_during_transcription(make_app, qtbot):
    """A 20 ms timer on the UI thread keeps ticking while the model transcribes.

    A gap counts what held the UI thread up (its own work, waiting for the GIL): the time the
    OS left it runnable but without a CPU (other programs on a loaded machine) is taken off, as
    Linux's per-thread schedstat reports it.
    """
    source = FileAudioSource(DATA / "beckett.wav", pace=1.0, autoplay=False)
    app = make_app(source)
    window, controller = app.window, app.controller
    qtbot.waitUntil(lambda: "listening" in window.status_panel.mic_label.text(), timeout=10_000)
    clock = QElapsedTimer()
    ticks: list[tuple[float, float]] = []
    probe = QTimer()
    probe.setInterval(20)
    probe.timeout.connect(lambda: ticks.append((clock.nsecsElapsed() / 1e6, _run_queue_delay_ms())))
    clock.start()
    probe.start()
    controller.talk_down()
    source.play()
    qtbot.waitUntil(source.finished.is_set, timeout=30_000)
    controller.talk_up()
    qtbot.waitUntil(lambda: any(t.final for t in window.captions.turns()), timeout=60_000)
    probe.stop()
    gaps = [
        (b[0] - a[0], (b[0] - a[0]) - (b[1] - a[1])) for a, b in zip(ticks, ticks[1:], strict=False)
    ]
    assert len(ticks) > 300  # about 10 s of audio plus the final pass, ticking every 20 ms
    worst_wall = max(g[0] for g in gaps)
    worst_blocked = max(g[1] for g in gaps)
    print(
        f"UI probe: worst gap {worst_wall:.0f} ms, of which held up by the process {worst_blocked:.0f} ms"
    )
    # Work done on the UI thread (a model load, a disk write, a long Python loop) shows as gaps
    # of hundreds of ms, again and again. One gap just over 100 ms is not that: a thread holding
    # the GIL that the OS preempted for another process, which schedstat cannot take off (it
    # happened once in a CI run beside other jobs: 109 ms). So: no gap of 250 ms, and at most
    # one in a hundred over 100 ms. The 50 ms target is measured by bench/bench_app.py.
    held = [g[1] for g in gaps if g[1] >= 100]
    assert worst_blocked < 250, f"the UI thread was held up for {worst_blocked:.0f} ms"
    assert len(held) <= len(gaps) // 100, f"held up over 100 ms {len(held)} times: {held}"
    assert worst_wall < 1000, f"the UI thread did not run for {worst_wall:.0f} ms"


def test_closing_the_window_mid_turn_saves_the_turn(make_app, qtbot):
    source = FileAudioSource(DATA / "beckett.wav", pace=2.0, autoplay=False)
    app = make_app(source)
    controller = app.controller
    qtbot.waitUntil(lambda: "listening" in app.window.status_panel.mic_label.text(), timeout=10_000)
    controller.talk_down()
    source.play()
    qtbot.waitUntil(lambda: source.position > 4.0, timeout=20_000)
    with qtbot.waitSignal(controller.shut_down, timeout=60_000):
        app.window.close()  # still holding the talk key
    with TranscriptStore(controller.history_path) as store:
        [session] = store.sessions()
        [turn] = store.turns(session.id)
    assert turn.completed and session.ended_at
    assert word_recall("Ever tried. Ever failed.", turn.text) >= 0.75, turn.text


def test_mode_switch_from_the_window_and_the_shortcut(make_app, qtbot):
    import numpy as np

    clip = np.concatenate([read_clip("ss-0880"), np.zeros(16000 * 2, dtype=np.float32)])
    source = FileAudioSource(clip, pace=2.0, autoplay=False)
    app = make_app(source)
    window, controller = app.window, app.controller
    assert window.ptt_button.isChecked() and window.talk_button.isEnabled()
    window.hf_button.click()
    assert controller.mode == HANDS_FREE and not window.talk_button.isEnabled()
    qtbot.keyPress(window, Qt.Key.Key_Space)  # no push-to-talk in hands-free
    assert not controller.talking
    qtbot.keyRelease(window, Qt.Key.Key_Space)
    window.activateWindow()
    qtbot.keyClick(window, Qt.Key.Key_M, Qt.KeyboardModifier.ControlModifier)
    assert controller.mode == PUSH_TO_TALK and window.ptt_button.isChecked()
    # Hands-free again: the session's own turn detection makes the turn, no key involved.
    window.hf_button.click()
    source.play()
    qtbot.waitUntil(lambda: any(t.final for t in window.captions.turns()), timeout=60_000)
    text = window.captions.committed_text()
    assert word_recall(reference_text("ss-0880"), text) >= 0.7, text


def test_tray_starts_stops_and_hides(make_app, qtbot):
    source = FileAudioSource(DATA / "beckett.wav", pace=2.0, autoplay=False)
    app = make_app(source)
    tray, controller = app.tray, app.controller
    assert tray.listen_action.text() == "Stop listening"
    tray.listen_action.trigger()
    assert not controller.listening and tray.listen_action.text() == "Start listening"
    assert not app.window.talk_button.isEnabled()
    tray.listen_action.trigger()
    qtbot.waitUntil(lambda: controller.listening, timeout=10_000)  # once the mic has closed
    assert tray.listen_action.text() == "Stop listening"
    tray.toggle_window()
    assert not app.window.isVisible()
    tray.toggle_window()
    assert app.window.isVisible()
    tray.overlay_action.trigger()
    assert app.window.overlay.isVisible() and controller.settings.overlay.enabled


def test_a_busy_port_falls_back_to_a_free_one_and_says_so(make_app, qtbot):
    blocker = socket.socket()
    blocker.bind(("127.0.0.1", 0))
    blocker.listen()
    busy = blocker.getsockname()[1]
    try:
        source = FileAudioSource(DATA / "beckett.wav", autoplay=False)
        app = make_app(source, settings=Settings().with_group(server=ServerSettings(port=busy)))
        state = app.controller.server_state
        assert state.state == "ready" and state.port != busy
        assert f"Port {busy} is busy" in app.window.status_panel.message
    finally:
        blocker.close()


def test_first_launch_with_a_damaged_settings_file_opens_with_defaults(qtbot, isolated_dirs):
    config = isolated_dirs / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.json").write_text("{not json")
    app = build_app(persist_settings=False)
    qtbot.addWidget(app.window)
    assert app.controller.settings == Settings()
    assert "damaged" in app.window.status_panel.message
    assert app.window.ptt_button.isChecked() and not app.controller.listening
    (config / "settings.json.corrupt").unlink()
    with qtbot.waitSignal(app.controller.shut_down, timeout=10_000):
        app.controller.shutdown()
    assert app.controller.stopped.is_set()


def test_changing_the_server_settings_restarts_it_and_listening_resumes(make_app, qtbot):
    import urllib.error
    import urllib.request

    source = FileAudioSource(DATA / "beckett.wav", autoplay=False)
    app = make_app(source)
    controller = app.controller
    settings = controller.settings
    key = Settings.new_api_key()
    controller.apply_settings(settings.with_group(server=ServerSettings(port=0, api_key=key)))
    qtbot.waitUntil(
        lambda: (
            controller.server_state.state == "ready"
            and controller.server_state.api_key == key
            and controller.listening
        ),
        timeout=60_000,
    )
    assert (
        "required" in app.window.status_panel.key_label.text()
        and not app.window.status_panel.copy_key.isHidden()
    )
    models = controller.server.http_url + "/v1/models"
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(models, timeout=10)
    assert refused.value.code == 401
    request = urllib.request.Request(models, headers={"Authorization": f"Bearer {key}"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.status == 200


def test_about_box_reports_the_packaged_version(make_app):
    from pathlib import Path

    import tomllib

    source = FileAudioSource(DATA / "beckett.wav", pace=2.0, autoplay=False)
    app = make_app(source)
    version = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"][
        "version"
    ]
    help_menu = next(a.menu() for a in app.window.menuBar().actions() if a.text() == "&Help")
    assert "About desktop-rt" in [a.text() for a in help_menu.actions()]
    assert f"desktop-rt {version}" in app.window.about_text()


def test_an_audio_source_that_cannot_open_is_shown_not_raised(qtbot, tmp_path, whisper_backend):
    from desktop_rt.config import AudioSettings
    from desktop_rt.engine.audio.sources import FileAudioSource

    missing = tmp_path / "no-such-recording.wav"
    app = build_app(
        settings=Settings().with_group(
            server=ServerSettings(port=0), audio=AudioSettings(mode=PUSH_TO_TALK)
        ),
        source_factory=lambda _settings: FileAudioSource(missing),
        backend_factory=lambda _spec: whisper_backend,
        history_path=tmp_path / "history.sqlite3",
        persist_settings=False,
        owns_backend=False,
    )
    app.start()  # the server comes up, then the app tries to listen
    try:
        qtbot.waitUntil(
            lambda: "no-such-recording.wav" in app.window.status_panel.message, timeout=60_000
        )
        assert "unavailable" in app.window.status_panel.mic_label.text()
        assert not app.controller.listening
        assert app.controller.server is not None  # the server stays up for other programs
    finally:
        app.window.close()
        qtbot.waitUntil(app.controller.stopped.is_set, timeout=60_000)
        app.window.deleteLater()
