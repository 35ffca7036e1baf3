"""Export formats, segmentation and atomic writes of desktop_rt.history.export."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_rt.core_types import Word
from desktop_rt.errors import DesktopRtError
from desktop_rt.history.export import (
    FORMATS,
    ExportDiskFullError,
    ExportFolderMissingError,
    Segment,
    Transcript,
    UnknownFormatError,
    export,
    from_json,
    segments_from_words,
    to_json,
    to_markdown,
    to_srt,
    to_txt,
    to_vtt,
    write_transcript,
)
from tests.support.subtitles import parse_srt, parse_vtt, vtt_unescape


def words_of(text: str, start: float = 0.0, step: float = 0.3) -> list[Word]:
    """Evenly timed words for ``text``, each with the leading space the tokenizer keeps."""
    return [
        Word(f" {token}", start + i * step, start + i * step + step * 0.8, 0.9)
        for i, token in enumerate(text.split())
    ]


def transcript(*cues: tuple[float, float, str], title: str = "") -> Transcript:
    return Transcript(tuple(Segment(s, e, text) for s, e, text in cues), title=title)


# --- model ------------------------------------------------------------------------------------


def test_transcript_text_joins_segments_with_single_spaces():
    t = transcript((0, 1, " Hello there. "), (1, 2, ""), (2, 3, "General Kenobi!"))
    assert t.text == "Hello there. General Kenobi!"
    assert Transcript(()).text == ""


def test_lists_are_stored_as_tuples_so_models_stay_hashable():
    seg = Segment(0, 1, "a", [Word(" a", 0, 1)])
    t = Transcript([seg])
    assert isinstance(seg.words, tuple) and isinstance(t.segments, tuple)
    hash(t)


# --- segmentation -----------------------------------------------------------------------------


def test_segments_break_after_sentence_end():
    segs = segments_from_words(words_of("Hello world. How are you? Fine! ok"))
    assert [s.text for s in segs] == ["Hello world.", "How are you?", "Fine!", "ok"]
    assert segs[0].words[0].text == " Hello"
    assert segs[0].start == 0.0 and segs[0].end == pytest.approx(0.3 + 0.24)


def test_sentence_end_inside_closing_quote_breaks():
    segs = segments_from_words(words_of('He said "stop." then left'))
    assert [s.text for s in segs] == ['He said "stop."', "then left"]


def test_segments_break_at_long_gaps_only():
    words = [Word(" one", 0.0, 0.4), Word(" two", 1.2, 1.5), Word(" three", 2.31, 2.6)]
    assert [s.text for s in segments_from_words(words)] == ["one two", "three"]
    assert len(segments_from_words(words, max_gap=5)) == 1


def test_segments_respect_max_chars():
    words = words_of(" ".join(["word"] * 40), step=0.1)
    segs = segments_from_words(words, max_chars=20, max_duration=100)
    assert all(len(s.text) <= 20 for s in segs)
    assert " ".join(s.text for s in segs) == " ".join(["word"] * 40)
    assert [len(s.text) for s in segs[:-1]] == [19] * (len(segs) - 1)  # 4 words fit, 5 do not


def test_a_single_overlong_word_is_its_own_cue():
    long = "x" * 100
    segs = segments_from_words(
        [Word(" a", 0, 0.1), Word(f" {long}", 0.1, 0.2), Word(" b", 0.2, 0.3)]
    )
    assert [s.text for s in segs] == ["a", long, "b"]


def test_segments_respect_max_duration():
    words = words_of(" ".join(["w"] * 30), step=1.0)
    segs = segments_from_words(words, max_duration=3.0)
    assert all(s.end - s.start <= 3.0 for s in segs)
    assert sum(len(s.words) for s in segs) == 30


def test_words_without_leading_space_join_directly_and_blank_words_drop():
    words = [
        Word(" Hi", 0, 0.2),
        Word(",", 0.2, 0.25),
        Word(" \n", 0.25, 0.3),
        Word(" 你好", 0.3, 0.5),
    ]
    (seg,) = segments_from_words(words)
    assert seg.text == "Hi, 你好"
    assert len(seg.words) == 3


def test_segments_from_no_words():
    assert segments_from_words([]) == ()


# --- SRT --------------------------------------------------------------------------------------


def test_srt_numbering_comma_millis_and_blank_lines():
    t = transcript((0, 1.5, "First."), (1.5, 62.25, "Second."), (3725.007, 3726, "Third."))
    srt = to_srt(t)
    assert srt == (
        "1\n00:00:00,000 --> 00:00:01,500\nFirst.\n\n"
        "2\n00:00:01,500 --> 00:01:02,250\nSecond.\n\n"
        "3\n01:02:05,007 --> 01:02:06,000\nThird.\n"
    )


def test_srt_skips_empty_cues_and_keeps_numbering_contiguous():
    t = transcript((0, 1, "a"), (1, 2, "  \n "), (2, 3, "b"))
    assert [c[2] for c in parse_srt(to_srt(t))] == ["a", "b"]
    assert to_srt(t).startswith("1\n") and "\n2\n00:00:02,000" in to_srt(t)


def test_srt_enforces_end_after_start():
    t = transcript((5, 5, "zero"), (7, 6, "backwards"), (-3, -1, "negative"))
    cues = parse_srt(to_srt(t))
    assert cues == [(5000, 5001, "zero"), (7000, 7001, "backwards"), (0, 1, "negative")]


def test_srt_wraps_long_text_into_two_balanced_lines():
    text = "The quick brown fox jumps over the lazy dog and keeps running far away"
    (cue,) = parse_srt(to_srt(transcript((0, 4, text))))
    lines = cue[2].split("\n")
    assert len(lines) == 2 and all(len(line) <= 42 for line in lines)
    assert " ".join(lines) == text
    assert abs(len(lines[0]) - len(lines[1])) <= 8
    assert parse_srt(to_srt(transcript((0, 1, "short line"))))[0][2] == "short line"


def test_srt_never_contains_an_arrow_or_blank_line_in_text():
    t = transcript((0, 1, "a --> b ---> c\n\nd"))
    (cue,) = parse_srt(to_srt(t))
    assert "-->" not in cue[2] and cue[2] == "a -> b -> c d"


def test_hour_rollover_rounds_with_integer_millis():
    t = transcript((3599.9995, 3600.0004, "x"), (59.9996, 60.0, "y"), (359999.9999, 360000.5, "z"))
    srt = to_srt(t)
    assert "01:00:00,000 --> 01:00:00,001" in srt
    assert "00:01:00,000 --> 00:01:00,001" in srt
    assert "100:00:00,000 --> 100:00:00,500" in srt  # hours beyond 99
    assert "60," not in srt and ":60:" not in srt
    assert "01:00:00.000 --> 01:00:00.001" in to_vtt(t)


def test_unicode_text_survives_every_format():
    text = "Grüße, 東京 — naïve café 🎉"
    t = transcript((0, 2, text), title="Ünïcode 🎉")
    for fmt in FORMATS:
        assert "東京" in export(t, fmt) and "🎉" in export(t, fmt), fmt
    assert parse_srt(to_srt(t))[0][2] == text
    assert parse_vtt(to_vtt(t))[0][2] == text


def test_empty_transcript_gives_valid_empty_files():
    empty = Transcript(())
    assert to_srt(empty) == "" and parse_srt("") == []
    assert to_vtt(empty) == "WEBVTT\n" and parse_vtt(to_vtt(empty)) == []
    assert to_txt(empty) == ""
    assert to_markdown(empty) == ""
    assert json.loads(to_json(empty))["segments"] == []
    assert to_vtt(transcript((0, 1, "   "))) == "WEBVTT\n"


# --- VTT --------------------------------------------------------------------------------------


def test_vtt_header_dot_millis_and_layout():
    t = transcript((1.25, 2.5, "Hello."), (3, 4.001, "World."))
    assert to_vtt(t) == (
        "WEBVTT\n\n00:00:01.250 --> 00:00:02.500\nHello.\n\n00:00:03.000 --> 00:00:04.001\nWorld.\n"
    )


def test_vtt_escapes_markup_and_arrows():
    t = transcript((0, 1, "a < b && c > d --> e <i>x</i>"))
    vtt = to_vtt(t)
    (cue,) = parse_vtt(vtt)
    assert cue[2] == "a &lt; b &amp;&amp; c &gt; d --&gt; e &lt;i&gt;x&lt;/i&gt;"
    assert vtt.count("-->") == 1  # only the timing line
    assert vtt_unescape(cue[2]) == "a < b && c > d --> e <i>x</i>"


# --- JSON -------------------------------------------------------------------------------------


def test_json_schema_and_round_trip():
    words = (Word(" Hi", 0.0004, 0.5006, 0.75), Word(" ünï", 0.6, 1.0, 0.5))
    t = Transcript(
        (Segment(0.0004, 1.0, "Hi ünï", words), Segment(2.0, 3.1234, "Bye.")),
        title="Meeting",
        language="de",
        created="2024-05-01T10:00:00+00:00",
    )
    raw = to_json(t)
    assert "ünï" in raw  # ensure_ascii=False
    doc = json.loads(raw)
    assert list(doc) == ["title", "language", "created", "text", "segments"]
    assert doc["text"] == "Hi ünï Bye."
    assert list(doc["segments"][0]) == ["start", "end", "text", "words"]
    assert doc["segments"][0]["words"][0] == {
        "word": " Hi",
        "start": 0.0,
        "end": 0.501,
        "probability": 0.75,
    }
    assert doc["segments"][1]["end"] == 3.123 and doc["segments"][1]["words"] == []

    back = from_json(raw)
    assert (back.title, back.language, back.created) == (t.title, t.language, t.created)
    assert back.text == t.text
    assert [s.text for s in back.segments] == [s.text for s in t.segments]
    assert back.segments[0].words[1] == Word(" ünï", 0.6, 1.0, 0.5)
    assert to_json(back) == raw


def test_json_is_always_valid_even_with_nan_probability():
    t = Transcript((Segment(0, 1, "x", (Word(" x", 0, 1, float("nan")),)),))
    assert json.loads(to_json(t))["segments"][0]["words"][0]["probability"] is None


def test_from_json_rejects_garbage_clearly():
    with pytest.raises(DesktopRtError, match="not a desktop-rt JSON transcript"):
        from_json('{"nope": 1}')


# --- text and markdown ------------------------------------------------------------------------


def test_txt_paragraphs_at_long_pauses():
    t = transcript((0, 1, "One."), (1.5, 2, "Two."), (4.5, 5, "Three."), (6.9, 7, "Four.\nstill"))
    assert to_txt(t) == "One. Two.\n\nThree. Four. still\n"


def test_markdown_title_and_timestamps():
    t = transcript(
        (0, 1, "Start"), (65.9, 70, "A *bold* [claim]"), (3725.4, 3730, "Late"), title="Weekly sync"
    )
    assert to_markdown(t) == (
        "# Weekly sync\n\n"
        "**[00:00]** Start\n\n"
        "**[01:05]** A \\*bold\\* \\[claim\\]\n\n"
        "**[01:02:05]** Late\n"
    )
    assert to_markdown(transcript((3599.9995, 3600, "x"))) == "**[01:00:00]** x\n"


# --- dispatch ---------------------------------------------------------------------------------


def test_export_dispatches_and_rejects_unknown_formats():
    t = transcript((0, 1, "x"))
    assert set(FORMATS) == {"txt", "srt", "vtt", "json", "md"}
    assert export(t, "SRT") == to_srt(t) and export(t, ".vtt") == to_vtt(t)
    assert export(t, "markdown") == to_markdown(t)
    with pytest.raises(UnknownFormatError) as info:
        export(t, "docx")
    assert isinstance(info.value, ValueError) and isinstance(info.value, DesktopRtError)
    assert "'docx'" in str(info.value) and "json, md, srt, txt, vtt" in str(info.value)


# --- writing ----------------------------------------------------------------------------------


def test_write_transcript_writes_format_from_extension(tmp_path):
    t = transcript((0, 1, "Grüße"))
    out = write_transcript(tmp_path / "a.srt", t)
    assert out.read_bytes() == to_srt(t).encode("utf-8")
    write_transcript(tmp_path / "a.srt", transcript((0, 1, "new")), "vtt")
    assert (tmp_path / "a.srt").read_text(encoding="utf-8") == to_vtt(transcript((0, 1, "new")))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.srt"]


def test_write_transcript_missing_folder(tmp_path):
    target = tmp_path / "missing" / "out.txt"
    with pytest.raises(ExportFolderMissingError, match="does not exist") as info:
        write_transcript(target, transcript((0, 1, "x")))
    assert str(target.parent) in str(info.value) and info.value.path == target
    assert not target.parent.exists()


def test_write_transcript_unknown_extension_writes_nothing(tmp_path):
    with pytest.raises(UnknownFormatError):
        write_transcript(tmp_path / "out.docx", transcript((0, 1, "x")))
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def tiny_disk(tmp_path):
    """A real 64 KiB tmpfs; needs root. Failing to mount is a failure, not a skip."""
    mountpoint = tmp_path / "tiny"
    mountpoint.mkdir()
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mountpoint)],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        pytest.fail(f"could not mount a small tmpfs (needs root): {result.stderr.strip()}")
    try:
        yield mountpoint
    finally:
        if subprocess.run(["umount", str(mountpoint)]).returncode != 0:
            subprocess.run(["umount", "-l", str(mountpoint)])


def test_write_transcript_full_disk_leaves_no_partial_file(tiny_disk):
    target = tiny_disk / "meeting.txt"
    small = transcript((0, 1, "original content"))
    write_transcript(target, small)
    huge = Transcript(
        tuple(Segment(i, i + 0.5, "lorem ipsum dolor sit amet " * 20) for i in range(200))
    )
    assert len(to_txt(huge)) > 64 * 1024

    with pytest.raises(ExportDiskFullError, match="disk is full") as info:
        write_transcript(target, huge)
    assert isinstance(info.value, DesktopRtError) and info.value.path == target
    assert target.read_text(encoding="utf-8") == to_txt(small)  # earlier file untouched
    assert os.listdir(tiny_disk) == ["meeting.txt"]  # no temp file left behind

    with pytest.raises(ExportDiskFullError):
        write_transcript(tiny_disk / "new.txt", huge)
    assert os.listdir(tiny_disk) == ["meeting.txt"]


# --- properties -------------------------------------------------------------------------------

_texts = st.text(
    alphabet=st.one_of(
        st.sampled_from(list(" .?!&<>-\n\t,")),
        st.characters(codec="utf-8", exclude_categories=("Cs",)),
    ),
    min_size=0,
    max_size=12,
)
_times = st.floats(min_value=-5, max_value=400_000, allow_nan=False, allow_infinity=False)
_steps = st.floats(min_value=0, max_value=5, allow_nan=False, allow_infinity=False)
_lengths = st.floats(min_value=-1, max_value=10, allow_nan=False, allow_infinity=False)


@st.composite
def word_streams(draw) -> list[Word]:
    """Time-ordered starts (as a recognizer emits them) with any durations and any text."""
    start = draw(_times)
    words = []
    for text, step, length in draw(st.lists(st.tuples(_texts, _steps, _lengths), max_size=40)):
        start += step
        words.append(Word(text, start, start + length, 0.5))
    return words


def _check_times(cues: list[tuple[int, int, str]]) -> None:
    previous_start = 0
    for start, end, _ in cues:
        assert 0 <= start < end
        assert start >= previous_start
        previous_start = start


@settings(max_examples=150, deadline=None)
@given(word_streams())
def test_any_words_give_parseable_monotonic_srt_and_vtt(words):
    segments = segments_from_words(words)
    t = Transcript(segments)
    assert all(s.text for s in segments)
    assert sum(len(s.words) for s in segments) == sum(1 for w in words if w.text.strip())

    srt_cues = parse_srt(to_srt(t))
    vtt_cues = parse_vtt(to_vtt(t))
    assert len(srt_cues) == len(vtt_cues) == len(segments)
    _check_times(srt_cues)
    _check_times(vtt_cues)
    assert [c[:2] for c in srt_cues] == [c[:2] for c in vtt_cues]
    assert [" ".join(vtt_unescape(c[2]).split()) for c in vtt_cues] == [
        " ".join(s.text.split()) for s in segments
    ]
