"""Exports of a meeting: WebVTT voice tags, SRT/text/Markdown prefixes, a JSON speaker field."""

from __future__ import annotations

import json

from desktop_rt.history.export import from_json, to_json, to_markdown, to_srt, to_txt, to_vtt
from desktop_rt.history.transcript import Segment, Transcript

MEETING = Transcript(
    (
        Segment(0.0, 1.5, "Welcome <everyone>.", speaker="Others"),
        Segment(1.6, 2.4, "Thanks.", speaker="You"),
        Segment(2.5, 3.0, "Shall we start?", speaker="You"),
        Segment(3.2, 4.0, "Yes.", speaker="Others"),
    ),
    title="Standup",
)


def test_vtt_tags_each_cue_with_its_voice_escaped():
    vtt = to_vtt(MEETING)
    assert "<v Others>Welcome &lt;everyone&gt;." in vtt
    assert "<v You>Thanks." in vtt and vtt.count("<v ") == 4


def test_srt_text_and_markdown_prefix_the_speaker():
    srt = to_srt(MEETING)
    assert "\nOthers: Welcome <everyone>.\n" in srt and "\nYou: Thanks.\n" in srt
    assert to_txt(MEETING) == (
        "Others: Welcome <everyone>.\n\nYou: Thanks. Shall we start?\n\nOthers: Yes.\n"
    )
    md = to_markdown(MEETING)
    assert "**[00:01] You:** Thanks." in md and "**[00:00] Others:** Welcome" in md


def test_json_carries_the_speaker_and_reads_it_back():
    doc = json.loads(to_json(MEETING))
    assert [s["speaker"] for s in doc["segments"]] == ["Others", "You", "You", "Others"]
    assert from_json(to_json(MEETING)) == MEETING


def test_a_transcript_without_speakers_exports_as_before():
    plain = Transcript((Segment(0.0, 1.0, "Hello."),))
    assert "speaker" not in json.loads(to_json(plain))["segments"][0]
    assert "<v " not in to_vtt(plain) and to_txt(plain) == "Hello.\n"
    assert to_srt(plain) == "1\n00:00:00,000 --> 00:00:01,000\nHello.\n"
