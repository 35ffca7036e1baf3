"""Caption edits (ui/caption_edits) in the real window, on the real model where words are needed.

The words' probabilities travel from the model to the captions and the history; a final line
corrected in the window (F2, type, Enter) is saved to the history at once, with the recognised
text kept, and exports carry the correction.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from PySide6.QtCore import Qt

from desktop_rt.engine.audio.sources import FileAudioSource
from desktop_rt.history.export import export
from desktop_rt.history.store import TranscriptStore
from desktop_rt.ui.widgets.caption_formats import Shading
from tests.support.clips import DATA, reference_text, wer

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
