"""The caption page's board: server events of the window's session in, viewer frames out."""

from __future__ import annotations

from desktop_rt.engine.protocol.events import (
    InputAudioBufferCleared,
    InputAudioBufferCommitted,
    SessionCreated,
    TranscriptionCompleted,
    TranscriptionDelta,
    TranscriptionFailed,
    TranscriptionTentative,
)
from desktop_rt.engine.protocol.session_config import SessionConfig
from desktop_rt.engine.protocol.translation import (
    TranslationCompleted,
    TranslationDelta,
    TranslationTentative,
)
from desktop_rt.engine.server.captions_board import CaptionBoard, shown
from desktop_rt.history.speech_text import clean_speech_text


def line(frame):
    assert frame["type"] == "line"
    return frame["line"]


def test_deltas_grow_committed_text_and_drop_the_stale_tentative_tail():
    board = CaptionBoard()
    assert line(board.apply(TranscriptionTentative(item_id="a", text=" hello wor"))) == {
        "id": "a",
        "committed": "",
        "tentative": " hello wor",
        "translation": "",
        "translation_tentative": "",
        "final": False,
    }
    state = line(board.apply(TranscriptionDelta(item_id="a", delta=" hello")))
    assert (state["committed"], state["tentative"]) == (" hello", "")
    state = line(board.apply(TranscriptionTentative(item_id="a", text=" world")))
    assert (state["committed"], state["tentative"]) == (" hello", " world")
    state = line(
        board.apply(
            TranscriptionCompleted(item_id="a", transcript=" hello world", audio_seconds=1.0)
        )
    )
    assert (state["committed"], state["tentative"], state["final"]) == (" hello world", "", True)


def test_a_failed_item_ends_its_line_like_a_completed_one():
    board = CaptionBoard()
    board.apply(TranscriptionDelta(item_id="a", delta=" partly"))
    failed = TranscriptionFailed(item_id="a", transcript=" partly", audio_seconds=1.0, message="x")
    assert line(board.apply(failed))["final"] is True


def test_events_viewers_do_not_see_give_no_frame():
    board = CaptionBoard()
    assert board.apply(SessionCreated(session=SessionConfig(id="sess_1", model="m"))) is None
    assert board.apply(InputAudioBufferCommitted(item_id="a", previous_item_id=None)) is None
    assert board.snapshot()["lines"][0]["committed"] == ""


def test_a_clear_removes_open_lines_without_words_and_keeps_committed_ones():
    board = CaptionBoard()
    board.apply(TranscriptionTentative(item_id="empty", text=" um"))
    assert board.apply(InputAudioBufferCleared()) == {"type": "remove", "id": "empty"}
    board.apply(TranscriptionDelta(item_id="kept", delta=" yes"))
    board.apply(TranscriptionTentative(item_id="kept", text=" and"))
    assert line(board.apply(InputAudioBufferCleared())) == {
        "id": "kept",
        "committed": " yes",
        "tentative": "",
        "translation": "",
        "translation_tentative": "",
        "final": False,
    }
    assert board.apply(InputAudioBufferCleared()) is None


def test_a_clear_leaves_lines_whose_audio_was_committed():
    board = CaptionBoard()
    board.apply(InputAudioBufferCommitted(item_id="sent", previous_item_id=None))
    board.apply(TranscriptionTentative(item_id="sent", text=" coming"))
    assert board.apply(InputAudioBufferCleared()) is None
    assert [entry["id"] for entry in board.snapshot()["lines"]] == ["sent"]


def test_several_lines_changed_by_one_clear_resync_with_a_snapshot():
    board = CaptionBoard()
    board.apply(TranscriptionTentative(item_id="a", text=" x"))
    board.apply(TranscriptionTentative(item_id="b", text=" y"))
    frame = board.apply(InputAudioBufferCleared())
    assert frame == {"type": "snapshot", "lines": []}


def test_the_translation_hook_sets_a_second_line():
    board = CaptionBoard()
    board.apply(TranscriptionDelta(item_id="a", delta=" hola"))
    state = line(board.apply_translation("a", "hello"))
    assert (state["committed"], state["translation"]) == (" hola", "hello")
    assert (
        line(board.apply(TranscriptionDelta(item_id="a", delta=" amigo")))["translation"] == "hello"
    )


def test_only_the_most_recent_lines_are_kept():
    board = CaptionBoard(max_lines=3)
    for n in range(5):
        board.apply(TranscriptionDelta(item_id=f"i{n}", delta=f" w{n}"))
    assert [entry["id"] for entry in board.snapshot()["lines"]] == ["i2", "i3", "i4"]


def test_translation_events_fill_the_english_line_as_the_window_does():
    board = CaptionBoard()
    board.apply(TranscriptionDelta(item_id="a", delta=" bonjour"))
    state = line(board.apply(TranslationTentative(item_id="a", text=" good mor")))
    assert (state["translation"], state["translation_tentative"]) == ("", " good mor")
    state = line(board.apply(TranslationDelta(item_id="a", delta=" good")))
    assert (state["translation"], state["translation_tentative"]) == (" good", "")
    board.apply(TranslationTentative(item_id="a", text=" morning"))
    state = line(board.apply(TranslationCompleted(item_id="a", transcript=" good morning")))
    assert (state["committed"], state["translation"], state["translation_tentative"]) == (
        " bonjour",
        " good morning",
        "",
    )


def test_shown_cleans_every_text_of_a_line_and_of_a_snapshot_on_its_own():
    board = CaptionBoard()
    board.apply(TranscriptionDelta(item_id="a", delta=" [MUSIC] hello ____"))
    frame = board.apply(TranscriptionTentative(item_id="a", text=" (laughs) world !!!!"))
    board.apply(TranslationTentative(item_id="a", text=" *sigh* hi"))
    cleaned = line(shown(frame, clean_speech_text))
    assert (cleaned["committed"], cleaned["tentative"]) == (" hello", " world")
    assert line(frame)["committed"] == " [MUSIC] hello ____"  # the frame itself is untouched
    (kept,) = shown(board.snapshot(), clean_speech_text)["lines"]
    assert (kept["translation_tentative"], kept["id"]) == (" hi", "a")
    assert shown({"type": "remove", "id": "a"}, clean_speech_text) == {"type": "remove", "id": "a"}


def test_a_corrected_final_line_replaces_the_recognised_one_and_keeps_its_place():
    board = CaptionBoard()
    board.apply(TranscriptionCompleted(item_id="a", transcript=" john dashwud", audio_seconds=1.0))
    board.apply(TranslationCompleted(item_id="a", transcript=" John Dashwud"))
    board.apply(TranscriptionDelta(item_id="b", delta=" had then"))
    state = line(board.apply_correction("a", "John Dashwood"))
    assert state == {
        "id": "a",
        "committed": "John Dashwood",
        "tentative": "",
        "translation": " John Dashwud",
        "translation_tentative": "",
        "final": True,
    }
    assert [x.id for x in board.lines] == ["a", "b"]  # not moved to the end
    assert board.snapshot()["lines"][0]["committed"] == "John Dashwood"
    reverted = line(board.apply_correction("a", "john dashwud"))  # "Revert" in the window
    assert reverted["committed"] == "john dashwud"


def test_a_correction_of_a_line_not_final_gone_or_unchanged_changes_nothing():
    board = CaptionBoard(max_lines=1)
    board.apply(TranscriptionDelta(item_id="a", delta=" hello"))
    assert board.apply_correction("a", "Hello") is None  # still being spoken
    assert board.apply_correction("gone", "text") is None
    board.apply(TranscriptionCompleted(item_id="a", transcript=" hello", audio_seconds=1.0))
    assert board.apply_correction("a", "hello") is None  # the same words
    assert [x.committed for x in board.lines] == [" hello"]
    board.apply(TranscriptionDelta(item_id="b", delta=" next"))  # "a" scrolls off the board
    assert board.apply_correction("a", "Hello") is None
    assert [x.id for x in board.lines] == ["b"]
