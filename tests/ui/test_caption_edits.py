"""Caption edits (ui/caption_edits) in the real window, on the real model where words are needed.

The words' probabilities travel from the model to the captions and the history; a final line
corrected in the window (F2, type, Enter) is saved to the history at once, with the recognised
text kept, and exports carry the correction; it also reaches the overlay and the caption page,
and teaches the session its words (on a backend that spells a word as its prompt does).
"""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from PySide6.QtCore import Qt

from desktop_rt.config import PUSH_TO_TALK, AudioSettings, ServerSettings, Settings
from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.audio.sources import FileAudioSource
from desktop_rt.history.export import export
from desktop_rt.history.store import TranscriptStore
from desktop_rt.ui.app import DesktopApp, build_app
from desktop_rt.ui.widgets.caption_formats import Shading
from tests.support.clips import DATA, read_clip, reference_text, wer
from tests.support.learning_backend import LearningBackend

WER_BOUND = 0.35  # a clean 7 s clip, push-to-talk, the tiny model


def test_the_shading_setting_reaches_the_captions_and_the_history(idle_app):
    window, controller = idle_app.window, idle_app.controller
    assert window.captions.shading == Shading(True, 0.5)  # on by default
    settings = controller.settings
    off = replace(settings.captions, shade_uncertain=False, uncertain_below=0.3)
    controller.apply_settings(settings.with_group(captions=off))
    assert window.captions.shading == Shading(False, 0.3)
    assert window.history.turns.shading == Shading(False, 0.3)


@pytest.mark.slow
def test_probabilities_reach_captions_and_history_and_a_correction_is_saved(make_app, qtbot):
    source = FileAudioSource(DATA / "ss-0870.wav", pace=2.0, autoplay=False)
    app = make_app(source)
    window, controller = app.window, app.controller
    qtbot.waitUntil(lambda: "listening" in window.status_panel.mic_label.text(), timeout=10_000)
    window.activateWindow()
    qtbot.keyPress(window, Qt.Key.Key_Space)
    source.play()
    qtbot.waitUntil(source.finished.is_set, timeout=30_000)
    qtbot.keyRelease(window, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: any(t.final for t in window.captions.turns()), timeout=90_000)
    [turn] = [t for t in window.captions.turns() if t.final]
    assert wer(reference_text("ss-0870"), turn.committed) <= WER_BOUND, turn.committed
    words = turn.committed.split()
    assert len(turn.probabilities) == len(words)
    known = [p for p in turn.probabilities if p is not None]
    assert known and all(0.0 < p <= 1.0 for p in known)

    correction = "Corrected by hand: " + turn.committed.strip()
    window.captions.setFocus()
    qtbot.keyClick(window.captions, Qt.Key.Key_F2)
    editor = window.captions.corrector.editor
    assert editor is not None and editor.text() == turn.committed.strip()
    editor.setText(correction)
    with qtbot.waitSignal(window.captions.corrected):
        qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert window.captions.shown_committed(turn.item_id) == correction
    assert controller.writer is not None and controller.writer.flush()
    with TranscriptStore(controller.history_path) as store:
        [session] = store.sessions()
        [saved] = store.turns(session.id)
        transcript = store.transcript(session.id)
    assert saved.text == correction and saved.original_text == turn.committed
    assert saved.probabilities == tuple(
        None if p is None else round(p, 3) for p in turn.probabilities
    )
    assert correction in export(transcript, "txt").replace("\n", " ")
    doc = json.loads(export(transcript, "json"))
    assert doc["text"] == correction


@pytest.fixture
def learning_app(qtbot, tmp_path):
    """``learning_app(source, backend)``: the real window, server and history on a backend
    that spells a word as its prompt does (tests/support/learning_backend.py)."""
    apps: list[DesktopApp] = []

    def make(source: FileAudioSource, backend: LearningBackend) -> DesktopApp:
        settings = Settings().with_group(
            server=ServerSettings(port=0), audio=AudioSettings(mode=PUSH_TO_TALK)
        )
        app = build_app(
            settings=settings,
            source_factory=lambda _settings: source,
            backend_factory=lambda _spec: backend,
            history_path=tmp_path / "history.sqlite3",
            persist_settings=False,
            owns_backend=False,
        )
        apps.append(app)
        app.start()
        qtbot.waitExposed(app.window)
        qtbot.waitUntil(lambda: app.controller.listening, timeout=60_000)
        return app

    yield make
    for app in apps:
        app.window.close()
        qtbot.waitUntil(app.controller.stopped.is_set, timeout=60_000)
        app.dispose()


def test_a_correction_reaches_the_overlay_the_caption_page_and_the_models_prompt(
    learning_app, qtbot
):
    """F2 on a line written "Dashwud", typed "Dashwood", Enter: the overlay and the caption
    page's board show the corrected line, the session is taught the word, and the next turn,
    prompted with it, is written that way."""
    backend = LearningBackend("and mister John Dashwood had", {"Dashwood": "Dashwud"})
    speech = read_clip("ss-0870")[: int(3.5 * SAMPLE_RATE)]
    pause = np.zeros(5 * SAMPLE_RATE, np.float32)  # the clip is paused in it, below
    source = FileAudioSource(np.concatenate([speech, pause, speech]), autoplay=False)
    app = learning_app(source, backend)
    window, controller = app.window, app.controller
    window.overlay_button.setChecked(True)
    controller.talk_down()
    source.play()
    qtbot.waitUntil(lambda: source.position > 3.7, timeout=30_000)
    controller.talk_up()
    source.simulate_loss()  # the clip waits in the pause while the user corrects the line
    assert source.position < 3.5 + 5, "the pause was missed"
    qtbot.waitUntil(lambda: any(t.final for t in window.captions.turns()), timeout=30_000)
    [turn] = window.captions.turns()
    assert "Dashwud" in turn.committed and "Dashwud" in window.overlay.text

    corrected = turn.committed.strip().replace("Dashwud", "Dashwood")
    window.captions.setFocus()
    qtbot.keyClick(window.captions, Qt.Key.Key_F2)
    editor = window.captions.corrector.editor
    assert editor is not None
    editor.setText(corrected)
    with qtbot.waitSignal(window.captions.corrected):
        qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert window.overlay.text == corrected
    server = controller.server
    assert server is not None
    [line] = [x for x in server.captions.snapshot()["lines"] if x["id"] == turn.item_id]
    assert line["committed"] == corrected
    live = controller.live
    assert live is not None and live.taught.words == ("Dashwood",)

    source.simulate_return()
    controller.talk_down()
    qtbot.waitUntil(source.finished.is_set, timeout=30_000)
    controller.talk_up()
    qtbot.waitUntil(
        lambda: len([t for t in window.captions.turns() if t.final]) == 2, timeout=30_000
    )
    second = window.captions.turns()[-1]
    assert "Dashwood" in second.committed and "Dashwud" not in second.committed, second
    assert "Dashwood" in window.overlay.text
