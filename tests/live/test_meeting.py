"""Meeting mode end to end: a file-backed microphone ("You") and system audio played through a
real PulseAudio daemon ("Others"), the real model, a real server and a real SQLite history."""

from __future__ import annotations

import json
import threading

import pytest

from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.audio.loopback import LoopbackSource
from desktop_rt.engine.audio.sources import OPEN, FileAudioSource, SourceStatus
from desktop_rt.engine.audio.vad import TurnDetectorSettings
from desktop_rt.engine.server.server import RealtimeServer, ServerConfig
from desktop_rt.history.export import export
from desktop_rt.history.store import TranscriptStore
from desktop_rt.history.writer import StoreWriter
from desktop_rt.live.meeting import MeetingSession
from desktop_rt.live.session import LiveSettings
from desktop_rt.live.source_choice import OTHERS, YOU, LabelledSource
from desktop_rt.live.transcript_recorder import CaptionTurn
from tests.support.clips import DATA, read_clip, wer, words_of
from tests.support.learning_backend import LearningBackend
from tests.support.pulse_daemon import play, pulse_daemon

pytestmark = pytest.mark.slow


def offline(backend, name: str) -> str:
    return "".join(w.text for w in backend.transcribe(read_clip(name), language="en"))


def test_two_streams_are_captioned_saved_and_exported_with_their_speakers(
    whisper_backend, tmp_path
):
    daemon = pulse_daemon()
    mic = FileAudioSource(DATA / "ss-0870.wav", autoplay=False)
    system = LoopbackSource()
    published: list[object] = []
    closed = threading.Event()
    system_open = threading.Event()

    def publish(value: object) -> None:
        published.append(value)
        if isinstance(value, SourceStatus) and value.device == system.name and value.state == OPEN:
            system_open.set()

    writer = StoreWriter(tmp_path / "history.sqlite3")
    with RealtimeServer(ServerConfig(port=0), whisper_backend) as server:
        meeting = MeetingSession(
            server,
            (LabelledSource(YOU, mic), LabelledSource(OTHERS, system)),
            LiveSettings("en", TurnDetectorSettings()),
            writer=writer,
            model="whisper-base",
            publish=publish,
            on_closed=lambda uid: closed.set(),
        )
        meeting.start()
        assert system_open.wait(20)
        player = play(daemon, "ss-0880")
        mic.play()
        assert player.wait(60) == 0
        assert mic.finished.wait(60)
        meeting.stop()
        assert closed.wait(120)
    writer.flush()
    writer.close()

    captions = [v for v in published if isinstance(v, CaptionTurn)]
    assert {c.speaker for c in captions} == {YOU, OTHERS}

    with TranscriptStore(tmp_path / "history.sqlite3") as store:
        [session] = store.sessions()
        turns = store.turns(session.id)
        transcript = store.transcript(session.id)
    said = {
        who: " ".join(t.text for t in turns if t.speaker == who and t.text) for who in (YOU, OTHERS)
    }
    assert wer(offline(whisper_backend, "ss-0870"), said[YOU]) <= 0.15, said
    assert wer(offline(whisper_backend, "ss-0880"), said[OTHERS]) <= 0.15, said

    assert {s.speaker for s in transcript.segments} == {YOU, OTHERS}
    vtt, srt = export(transcript, "vtt"), export(transcript, "srt")
    assert "<v You>" in vtt and "<v Others>" in vtt
    assert "\nYou: " in srt and "\nOthers: " in srt
    doc = json.loads(export(transcript, "json"))
    assert {s["speaker"] for s in doc["segments"]} == {YOU, OTHERS}
    txt = export(transcript, "txt")
    assert "You: " in txt and "Others: " in txt
    assert "] You:**" in export(transcript, "md")


def test_the_speakers_leaking_into_the_microphone_are_not_captioned_twice(whisper_backend):
    """The microphone hears only system audio at -10 dB: "You" gets (almost) none of its words."""
    played = read_clip("ss-0870")
    mic = FileAudioSource(played * 10 ** (-10 / 20), autoplay=False, name="microphone")
    system = FileAudioSource(played, autoplay=False, name="system audio")
    captions: dict[str, CaptionTurn] = {}
    closed = threading.Event()

    def publish(value: object) -> None:
        if isinstance(value, CaptionTurn):
            captions[value.item_id] = value

    with RealtimeServer(ServerConfig(port=0), whisper_backend) as server:
        meeting = MeetingSession(
            server,
            (LabelledSource(YOU, mic), LabelledSource(OTHERS, system)),
            LiveSettings("en", TurnDetectorSettings()),
            writer=None,
            model="whisper-base",
            publish=publish,
            on_closed=lambda uid: closed.set(),
        )
        meeting.start()
        mic.play()
        system.play()
        assert mic.finished.wait(60) and system.finished.wait(60)
        meeting.stop()
        assert closed.wait(120)
    said = {
        who: " ".join(c.committed for c in captions.values() if c.speaker == who)
        for who in (YOU, OTHERS)
    }
    assert wer(offline(whisper_backend, "ss-0870"), said[OTHERS]) <= 0.15, said
    assert meeting.dedup.dropped_words > 0
    echoed = set(words_of(said[YOU])) & set(words_of(said[OTHERS]))
    assert len(echoed) <= 1, said  # a stray word at most, never the sentence again


def test_a_corrected_word_prompts_both_streams():
    """A word the user corrected in a line reaches the prompt of both streams' passes."""
    backend = LearningBackend("and mister John Dashwood had", {"Dashwood": "Dashwud"})
    spoken = read_clip("ss-0870")[: int(3.5 * SAMPLE_RATE)]
    mic = FileAudioSource(spoken, autoplay=False, name="microphone")
    system = FileAudioSource(spoken, autoplay=False, name="system audio")
    captions: dict[str, CaptionTurn] = {}
    closed = threading.Event()

    def publish(value: object) -> None:
        if isinstance(value, CaptionTurn):
            captions[value.item_id] = value

    with RealtimeServer(ServerConfig(port=0), backend) as server:
        meeting = MeetingSession(
            server,
            (LabelledSource(YOU, mic), LabelledSource(OTHERS, system)),
            LiveSettings("en", TurnDetectorSettings()),
            writer=None,
            model=server.config.model_id,
            publish=publish,
            on_closed=lambda uid: closed.set(),
        )
        meeting.start()
        assert meeting.learn("and mister John Dashwud", "and Mister John Dashwood") == (
            "Mister",
            "Dashwood",
        )
        mic.play()
        system.play()
        assert mic.finished.wait(60) and system.finished.wait(60)
        meeting.stop()
        assert closed.wait(60)
    prompts = backend.prompts_seen()
    assert len(prompts) >= 2 and all("Mister, Dashwood" in (p or "") for p in prompts), prompts
    others = " ".join(c.committed for c in captions.values() if c.speaker == OTHERS)
    assert "Dashwood" in others and "Dashwud" not in others, others
