"""The history view keeps its room for sessions and turns when it shows a message.

Found by using the app: after "Export…", the "Saved <path>" line took the lower half of the
page and pushed the list, the turns and the buttons up (the label shared the page's spare
height with the splitter). Real SQLite, real widgets, a real export.
"""

from __future__ import annotations

from desktop_rt.history.store import TranscriptStore
from desktop_rt.ui.widgets.history_view import HistoryView


def test_a_saved_message_takes_a_line_not_half_the_page(tmp_path, qtbot):
    path = tmp_path / "history.sqlite3"
    with TranscriptStore(path) as store:
        store.begin_session("s", started_at="2026-03-01T09:00:00+01:00")
        store.save_turn("s", "a", text="Hello there.", start=0.5, end=1.5)
    view = HistoryView(path)
    qtbot.addWidget(view)
    view.resize(900, 600)
    with qtbot.waitSignal(view.loaded):
        view.show()
    qtbot.waitUntil(lambda: view.turns.count() == 1)
    before = view.splitter.height()
    with qtbot.waitSignal(view.exported):
        view.export(view.selected_session_id(), tmp_path / "out.srt")
    qtbot.waitUntil(view.status.isVisible)
    view.layout().activate()
    line = view.status.fontMetrics().lineSpacing()
    view.close_store()
    assert view.status.text() == f"Saved {tmp_path / 'out.srt'}"
    assert view.status.height() <= 3 * line, (view.status.height(), line)
    assert view.splitter.height() >= before - 3 * line, (view.splitter.height(), before)
