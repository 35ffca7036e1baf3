"""The caption listener's life as the settings say: started, kept, retokened, moved, stopped."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request

import pytest
from websockets.sync.client import connect

from desktop_rt.config import ShareSettings
from desktop_rt.engine.protocol.events import TranscriptionDelta
from desktop_rt.engine.server.captions_feed import CaptionBroadcaster
from desktop_rt.live.caption_share import CaptionShare

TOKEN = "viewer-token-0123456789"


def status_of(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.fixture
def share():
    share = CaptionShare(address="127.0.0.1")
    yield share
    share.stop()


def test_off_or_without_a_token_nothing_listens(share):
    assert not share.apply(ShareSettings()).shared
    assert not share.apply(ShareSettings(enabled=True, port=0)).shared
    assert share.server is None


def test_on_it_listens_and_the_same_settings_keep_the_same_listener(share):
    state = share.apply(ShareSettings(enabled=True, port=0, token=TOKEN))
    assert state.shared and state.url.startswith("http://127.0.0.1:")
    assert state.url.endswith(f"/captions?token={TOKEN}")
    assert status_of(state.url) == 200
    server = share.server
    assert share.apply(ShareSettings(enabled=True, port=0, token=TOKEN)) == state
    assert share.server is server


def test_a_new_token_keeps_the_port_and_retires_the_old_link(share):
    old = share.apply(ShareSettings(enabled=True, port=0, token=TOKEN))
    new = share.apply(ShareSettings(enabled=True, port=0, token="another-token-0123456789"))
    assert new.url.split("/captions")[0] == old.url.split("/captions")[0]
    assert status_of(old.url) == 403 and status_of(new.url) == 200


def test_another_port_moves_the_listener(share):
    share.apply(ShareSettings(enabled=True, port=0, token=TOKEN))
    with socket.socket() as probe:
        probe.bind(("0.0.0.0", 0))
        port = probe.getsockname()[1]
    state = share.apply(ShareSettings(enabled=True, port=port, token=TOKEN))
    assert f":{port}/captions" in state.url and status_of(state.url) == 200


def test_turning_it_off_closes_the_port(share):
    on = share.apply(ShareSettings(enabled=True, port=0, token=TOKEN))
    off = share.apply(ShareSettings(enabled=False, port=0, token=TOKEN))
    assert not off.shared and share.server is None
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(on.url, timeout=30)


def test_a_busy_port_is_a_state_with_a_message(share):
    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        state = share.apply(ShareSettings(enabled=True, port=taken.getsockname()[1], token=TOKEN))
    assert not state.shared and "Could not share captions" in state.message


def first_frame(url: str) -> dict:
    feed = url.replace("http://", "ws://").replace("/captions?", "/captions/feed?")
    with connect(feed, open_timeout=30) as ws:
        return json.loads(ws.recv(timeout=30))


def test_the_source_followed_before_the_start_is_shown_and_can_change(share):
    source = CaptionBroadcaster()
    source.observe(TranscriptionDelta(item_id="a", delta=" early words"))
    share.follow(source)
    state = share.apply(ShareSettings(enabled=True, port=0, token=TOKEN))
    assert [line["committed"] for line in first_frame(state.url)["lines"]] == [" early words"]
    share.follow(None)
    assert first_frame(state.url) == {"type": "snapshot", "lines": []}
