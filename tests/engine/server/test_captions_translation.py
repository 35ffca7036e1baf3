"""The caption page shows what the window shows, translation line included, end to end.

A real server on the real model; the app's own session (:class:`~desktop_rt.live.session.LiveSession`,
the window's path) with live translation on; the listener as the app runs it
(:class:`~desktop_rt.live.caption_share.CaptionShare`); the page in a real headless chromium.
The clip is declared French so the original line is the transcribe task's and the English line
the translate task's (as in test_bridge_translation.py). Every line the page draws must hold
exactly the texts of the window's last :class:`~desktop_rt.live.transcript_recorder.CaptionTurn`
for it; the English line must be the English reference (WER bound). Whether the original line
comes out French is the model's call on 1-2 s streaming windows of English speech (one run in
four wrote it nearly English, WER 0.14): test_bridge_translation.py holds the French bound on a
whole-clip window; here the two lines need only be two texts.
"""

from __future__ import annotations

import json
import threading

import pytest

from desktop_rt.config import ShareSettings
from desktop_rt.engine.audio.sources import FileAudioSource
from desktop_rt.engine.server.server import RealtimeServer, ServerConfig
from desktop_rt.live.caption_share import CaptionShare
from desktop_rt.live.session import LiveSession, LiveSettings
from desktop_rt.live.transcript_recorder import CaptionTurn
from tests.support.browser import Chromium
from tests.support.clips import read_clip, reference_text, wer

pytestmark = pytest.mark.slow

TOKEN = "viewer-token-0123456789"
CLIP = "ss-0870"
WER_BOUND = 0.2  # the English line of a clean 7 s clip (the websocket test measured 0.05)
LINES_JS = (
    "Array.from(document.querySelectorAll('#captions .line')).map(p => ({"
    "id: p.dataset.id, committed: p.querySelector('.committed').textContent,"
    "tentative: p.querySelector('.tentative').textContent,"
    "translation: p.querySelector('.translated').textContent,"
    "translation_tentative: p.querySelector('.translation .tentative').textContent,"
    "shown: !p.querySelector('.translation').hidden}))"
)


@pytest.fixture
def server(whisper_backend):
    with RealtimeServer(ServerConfig(port=0), whisper_backend) as srv:
        yield srv


@pytest.fixture
def page_url(server):
    share = CaptionShare(address="127.0.0.1")
    share.follow(server.captions)
    state = share.apply(ShareSettings(enabled=True, port=0, token=TOKEN))
    assert state.shared, state.message
    yield state.url
    share.stop()


def compact(value: object) -> str:
    """``value`` as JSON.stringify writes it (no spaces, characters as they are)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def play_translated(server: RealtimeServer) -> dict[str, CaptionTurn]:
    """Push-to-talk over the clip with translation on; the window's last turn of each item."""
    source = FileAudioSource(read_clip(CLIP), autoplay=False)
    closed = threading.Event()
    turns: dict[str, CaptionTurn] = {}

    def publish(update: object) -> None:
        if isinstance(update, CaptionTurn):
            turns[update.item_id] = update

    live = LiveSession(
        server,
        source,
        LiveSettings("fr", translate=True),
        writer=None,
        model=server.config.model_id,
        publish=publish,
        on_closed=lambda _uid: closed.set(),
    )
    live.start()
    live.talk_down()
    source.play()
    assert source.finished.wait(60), "the clip did not play"
    live.talk_up()
    live.stop()
    assert closed.wait(180), "the session did not close"
    return turns


def test_the_page_shows_the_windows_lines_with_their_translation(server, page_url, tmp_path):
    with Chromium(tmp_path) as browser:
        page = browser.open(page_url)
        assert page.wait_for("document.getElementById('status').textContent === 'Live'")
        turns = play_translated(server)
        final = [t for t in turns.values() if t.final and t.translation.strip()]
        assert final, turns
        expected = [
            {
                "id": t.item_id,
                "committed": t.committed,
                "tentative": t.tentative,
                "translation": t.translation,
                "translation_tentative": t.translation_tentative,
                "shown": bool(t.translation.strip() or t.translation_tentative.strip()),
            }
            for t in turns.values()
            if not t.removed
        ]
        shown = page.wait_for(
            f"(() => {{ const l = {LINES_JS}; "
            f"return JSON.stringify(l) === {json.dumps(compact(expected))} ? l : null; }})()",
            timeout=60,
        )
        assert shown == expected, page.evaluate(LINES_JS)
    english = " ".join(t.translation for t in final)
    assert wer(reference_text(CLIP), english) <= WER_BOUND, english
    assert " ".join(t.committed for t in final) != english  # the two tasks' texts, not one twice
