"""A saved hands-free session exported as SRT/WebVTT: cues within the subtitle limits."""

from __future__ import annotations

import pytest

from desktop_rt.history.cues import LINE_CHARS, MAX_CUE_SECONDS, MIN_CUE_SECONDS
from desktop_rt.history.export import to_srt, to_vtt
from desktop_rt.history.store import TranscriptStore
from tests.support.subtitles import parse_srt, parse_vtt

# Turns as a hands-free session saved them (text and turn times); the first one once gave
# "And Mr." and "than he was." as cues of their own and a cue of three lines.
TURNS = [
    (
        "It is a truth universally acknowledged that he had both the means and the power to do "
        "for them. And Mr. Darcy, who had always seemed so proud, was kinder and far more "
        "respectable than he was.",
        0.0,
        11.5,
    ),
    ("Dr. Jones said that St. Mary's, i.e. the old church, was closed, etc.", 13.0, 17.0),
    ("Yes.", 18.0, 18.4),
]


@pytest.fixture
def session(tmp_path):
    with TranscriptStore(tmp_path / "history.sqlite3") as store:
        sid = store.begin_session("s", language="en")
        for n, (text, start, end) in enumerate(TURNS):
            store.save_turn("s", f"i{n}", text=text, start=start, end=end, completed=True)
        yield store.transcript(sid)


def test_hands_free_turns_export_cues_within_the_subtitle_limits(session):
    cues = parse_srt(to_srt(session))
    texts = [text.replace("\n", " ") for _, _, text in cues]
    assert " ".join(texts) == " ".join(text for text, _, _ in TURNS)
    for start, end, text in cues:
        lines = text.split("\n")
        assert len(lines) <= 2 and all(len(line) <= LINE_CHARS for line in lines), text
        assert (end - start) / 1000 <= MAX_CUE_SECONDS
        if text != "Yes.":  # the only turn shorter than the minimum
            assert (end - start) / 1000 >= MIN_CUE_SECONDS, text
    assert not any(t.endswith(("Mr.", "Dr.", "St.", "i.e.")) for t in texts), texts
    assert "than he was." not in texts and "power to do for them." not in texts
    assert [c[:2] for c in parse_vtt(to_vtt(session))] == [c[:2] for c in cues]


def test_a_cue_never_spans_two_turns(session):
    ends = {round(end * 1000) for _, _, end in TURNS}
    cue_ends = [end for _, end, _ in parse_srt(to_srt(session))]
    assert ends <= set(cue_ends)


def test_speaker_labels_still_fit_on_the_first_line(tmp_path):
    with TranscriptStore(tmp_path / "history.sqlite3") as store:
        sid = store.begin_session("m")
        text, start, end = TURNS[0]
        store.save_turn("m", "o1", text=text, start=start, end=end, speaker="Others")
        srt = to_srt(store.transcript(sid))
    for _, _, body in parse_srt(srt):
        lines = body.split("\n")
        assert lines[0].startswith("Others: ")
        assert len(lines) <= 2 and all(len(line) <= LINE_CHARS for line in lines), body
