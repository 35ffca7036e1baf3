"""The caption page shows what the window shows: the same non-speech filter, over a real feed.

The same server events (sound tags, runs of underscores and punctuation, a tag still being
written, a translation with a tag) go to the window's
:class:`~desktop_rt.live.transcript_recorder.TranscriptRecorder` and to the broadcaster the app's
:class:`~desktop_rt.live.caption_share.CaptionShare` follows; a viewer reading the feed over a
real websocket on loopback must get exactly the window's texts, after every event and in the
snapshot a late viewer gets.
"""

from __future__ import annotations

import json

import pytest
from websockets.sync.client import connect

from desktop_rt.config import ShareSettings
from desktop_rt.engine.protocol.events import (
    TranscriptionCompleted,
    TranscriptionDelta,
    TranscriptionTentative,
)
from desktop_rt.engine.protocol.translation import TranslationDelta, TranslationTentative
from desktop_rt.engine.server.captions_feed import CaptionBroadcaster
from desktop_rt.live.caption_share import CaptionShare
from desktop_rt.live.transcript_recorder import CaptionTurn, TranscriptRecorder

TOKEN = "viewer-token-0123456789"
EVENTS = [
    TranscriptionTentative(item_id="a", text=" ______"),
    TranscriptionTentative(item_id="a", text=" [MUSIC] So"),
    TranscriptionDelta(item_id="a", delta=" (breath) So we"),
    TranscriptionTentative(item_id="a", text=" met at ♪ la la ♪ noon !!!! [App"),
    TranslationTentative(item_id="a", text=" *coughs* We"),
    TranslationDelta(item_id="a", delta=" We met - - - -"),
    TranscriptionCompleted(item_id="a", transcript=" (breath) So we met at noon.", audio_seconds=2),
    TranscriptionTentative(item_id="b", text=" {laughs} ____ Right"),
]
TEXTS = ("committed", "tentative", "translation", "translation_tentative")


def window_texts(turn: CaptionTurn) -> dict[str, str]:
    return {key: getattr(turn, key) for key in TEXTS}


def page_texts(line: dict) -> dict[str, str]:
    return {key: line[key] for key in TEXTS}


@pytest.fixture
def feed():
    source = CaptionBroadcaster()
    share = CaptionShare(address="127.0.0.1")
    share.follow(source)
    state = share.apply(ShareSettings(enabled=True, port=0, token=TOKEN))
    assert state.shared, state.message
    url = state.url.replace("http://", "ws://").replace("/captions?", "/captions/feed?")
    yield source, url
    share.stop()


def test_every_line_a_viewer_gets_is_the_windows_line(feed):
    source, url = feed
    recorder = TranscriptRecorder("s1")
    with connect(url, open_timeout=30) as ws:
        assert json.loads(ws.recv(timeout=30)) == {"type": "snapshot", "lines": []}
        for event in EVENTS:
            (turn,) = [u for u in recorder.handle(event) if isinstance(u, CaptionTurn)]
            source.observe(event)
            frame = json.loads(ws.recv(timeout=30))
            assert frame["type"] == "line" and frame["line"]["id"] == turn.item_id
            assert page_texts(frame["line"]) == window_texts(turn), event
    with connect(url, open_timeout=30) as late:
        snapshot = json.loads(late.recv(timeout=30))
    shown = {line["id"]: page_texts(line) for line in snapshot["lines"]}
    assert shown == {t.item_id: window_texts(t) for t in recorder.captions()}
    assert shown["a"]["committed"] == " So we met at noon."  # no tag, nothing raw
    texts = " ".join(text for line in shown.values() for text in line.values())
    assert not any(mark in texts for mark in ("[", "(", "_", "*", "♪", "{", "!!"))
