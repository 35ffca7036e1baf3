"""The history view labels a meeting's turns with their speakers (real SQLite, real widgets)."""

from __future__ import annotations

from desktop_rt.history.store import TranscriptStore
from desktop_rt.ui.widgets.history_view import HistoryView


def test_a_meetings_turns_show_who_said_them(tmp_path, qtbot):
    path = tmp_path / "history.sqlite3"
    with TranscriptStore(path) as store:
        store.begin_session("m", started_at="2026-03-01T09:00:00+01:00")
        store.save_turn("m", "a", text="Welcome.", start=0.5, end=1.0, speaker="Others")
        store.save_turn("m", "b", text="Thanks.", start=2.0, end=2.5, speaker="You")
    view = HistoryView(path)
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.loaded):
        view.show()
    qtbot.waitUntil(lambda: view.turns.count() == 2)  # the newest session's turns, loaded
    shown = [view.turns.item(i).text() for i in range(view.turns.count())]
    view.close_store()
    assert shown == ["[00:00]  Others: Welcome.", "[00:02]  You: Thanks."]
