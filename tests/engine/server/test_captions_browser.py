"""The caption page in a real headless chromium, fed by the app's own session on the real model.

A clip plays through the file-backed source into a :class:`~desktop_rt.live.session.LiveSession`
(the window's path); the page, opened with the viewer token, must show its words (WER bound
against the reference). A wrong token shows nothing; a page of another origin gets no feed.
"""

from __future__ import annotations

import threading

import pytest

from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.audio.sources import FileAudioSource
from desktop_rt.engine.server.captions_page import CaptionShareConfig, CaptionShareServer
from desktop_rt.engine.server.server import RealtimeServer, ServerConfig
from desktop_rt.live.session import LiveSession, LiveSettings
from tests.support.browser import Chromium
from tests.support.clips import read_clip, reference_text, wer
from tests.support.held_backend import until
from tests.support.learning_backend import LearningBackend

TOKEN = "viewer-token-0123456789"
CLIP = "ss-0870"
COMMITTED_JS = (
    "Array.from(document.querySelectorAll('#captions .committed'))"
    ".map(e => e.textContent).join(' ')"
)


@pytest.fixture
def server(whisper_backend):
    with RealtimeServer(ServerConfig(port=0), whisper_backend) as srv:
        yield srv


@pytest.fixture
def share(server):
    share = CaptionShareServer(CaptionShareConfig(TOKEN, host="127.0.0.1", port=0))
    share.follow(server.captions)
    with share:
        yield share


@pytest.fixture
def browser(tmp_path):
    with Chromium(tmp_path) as chromium:
        yield chromium


def play_clip(server: RealtimeServer) -> LiveSession:
    """Push-to-talk over the whole clip, through the real capture feed; returns once committed."""
    source = FileAudioSource(read_clip(CLIP), autoplay=False)
    closed = threading.Event()
    live = LiveSession(
        server,
        source,
        LiveSettings("en"),
        writer=None,
        model=server.config.model_id,
        publish=lambda _update: None,
        on_closed=lambda _uid: closed.set(),
    )
    live.start()
    live.talk_down()
    source.play()
    assert source.finished.wait(60), "the clip did not play"
    live.talk_up()
    live.stop()
    assert closed.wait(120), "the session did not close"
    return live


def test_the_page_shows_the_words_of_a_fed_clip(server, share, browser):
    page = browser.open(share.page_url("127.0.0.1"))
    assert page.wait_for("document.getElementById('status').textContent === 'Live'")
    live = play_clip(server)
    reference = reference_text(CLIP)
    shown = page.wait_for(
        f"(() => {{ const t = {COMMITTED_JS}; return t.trim().split(/\\s+/).length >= "
        f"{len(reference.split()) - 3} ? t : ''; }})()"
    )
    assert shown, page.evaluate(COMMITTED_JS)
    assert wer(reference, shown) < 0.2, shown
    assert wer(live.recorder.committed_text, shown) < 0.05, (live.recorder.committed_text, shown)
    # the viewer's own settings: larger text and a theme, kept in localStorage
    page.evaluate("document.getElementById('larger').click()")
    page.evaluate(
        "const t = document.getElementById('theme'); t.value = 'high-contrast'; t.onchange()"
    )
    assert page.evaluate("document.body.className") == "theme-high-contrast"
    again = browser.open(share.page_url("127.0.0.1"))
    assert again.evaluate("document.body.className") == "theme-high-contrast"
    size = again.evaluate("getComputedStyle(document.getElementById('captions')).fontSize")
    assert size == "36px"


def test_a_wrong_token_shows_nothing(server, share, browser):
    page = browser.open(share.page_url("127.0.0.1").replace(TOKEN, "wrong-token-0123456789"))
    assert page.evaluate("document.getElementById('captions')") is None
    assert page.evaluate("document.body.innerText").strip() == "Forbidden"
    play_clip(server)
    assert page.evaluate("document.body.innerText").strip() == "Forbidden"


def test_a_page_of_another_origin_gets_no_feed(server, share, browser):
    """A page served under another origin (localhost, not 127.0.0.1) that knows the token
    still cannot open the feed on 127.0.0.1."""
    page = browser.open(share.page_url("localhost"))
    url = f"ws://127.0.0.1:{share.port}/captions/feed?token={TOKEN}"
    outcome = page.evaluate(
        "new Promise(done => { const got = []; const ws = new WebSocket("
        + repr(url)
        + "); ws.onmessage = m => got.push(m.data);"
        " const end = () => done({state: ws.readyState, got: got.length});"
        " ws.onerror = end; ws.onclose = end; setTimeout(end, 20000); })"
    )
    assert outcome == {"state": 3, "got": 0}  # CLOSED, having received nothing


def test_a_line_corrected_in_the_window_replaces_the_old_one_on_the_page(browser):
    """The window's session on a backend that writes "Dashwud"; the user's correction (what
    ui/caption_edits hands the server's captions) redraws that line, in its place, on the page."""
    backend = LearningBackend("and mister John Dashwood had", {"Dashwood": "Dashwud"})
    with (
        RealtimeServer(ServerConfig(port=0), backend) as server,
        CaptionShareServer(CaptionShareConfig(TOKEN, host="127.0.0.1", port=0)) as share,
    ):
        share.follow(server.captions)
        page = browser.open(share.page_url("127.0.0.1"))
        assert page.wait_for("document.getElementById('status').textContent === 'Live'")
        live = LiveSession(
            server,
            FileAudioSource(read_clip(CLIP)[: 4 * SAMPLE_RATE]),
            LiveSettings("en"),
            writer=None,
            model=server.config.model_id,
            publish=lambda _update: None,
            on_closed=lambda _uid: None,
        )
        live.start()
        live.talk_down()
        assert page.wait_for(f"{COMMITTED_JS}.includes('Dashwud')"), page.evaluate(COMMITTED_JS)
        live.talk_up()
        assert until(lambda: server.captions.snapshot()["lines"][0]["final"])
        [line] = server.captions.snapshot()["lines"]
        assert page.wait_for(f"{COMMITTED_JS} === {line['committed']!r}")
        corrected = " ".join(line["committed"].split()).replace("Dashwud", "Dashwood")
        server.captions.observe_correction(line["id"], corrected)
        assert page.wait_for(f"{COMMITTED_JS} === {corrected!r}"), page.evaluate(COMMITTED_JS)
        assert page.evaluate("document.querySelectorAll('#captions .line').length") == 1
        again = browser.open(share.page_url("127.0.0.1"))  # a viewer joining later
        assert again.wait_for(f"{COMMITTED_JS} === {corrected!r}"), again.evaluate(COMMITTED_JS)
        live.stop()
