"""The caption listener over real loopback sockets: the token, the origin, the read-only feed."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from desktop_rt.engine.protocol.events import TranscriptionDelta, TranscriptionTentative
from desktop_rt.engine.server.captions_feed import CaptionBroadcaster
from desktop_rt.engine.server.captions_page import (
    CaptionShareConfig,
    CaptionShareError,
    CaptionShareServer,
    lan_address,
)
from tests.support.rt_client import get_request, raw_http

TOKEN = "viewer-token-0123456789"


@pytest.fixture
def captions():
    source = CaptionBroadcaster()
    source.observe(TranscriptionDelta(item_id="i1", delta=" Good morning"))
    return source


@pytest.fixture
def share(captions):
    server = CaptionShareServer(CaptionShareConfig(TOKEN, host="127.0.0.1", port=0))
    server.follow(captions)
    with server:
        yield server


def feed_url(share, token=TOKEN):
    return f"ws://127.0.0.1:{share.port}/captions/feed?token={token}"


async def next_frame(ws):
    return json.loads(await asyncio.wait_for(ws.recv(), 30))


def test_the_page_is_served_with_the_token(share):
    reply = raw_http(share.port, get_request(f"/captions?token={TOKEN}", f"127.0.0.1:{share.port}"))
    assert reply.status == 200
    assert reply.headers["content-type"].startswith("text/html")
    assert reply.headers["referrer-policy"] == "no-referrer"
    assert "connect-src 'self'" in reply.headers["content-security-policy"]
    page = reply.body.decode()
    assert "/*CAPTIONS_JS*/" not in page and "/captions/feed" in page and "localStorage" in page


@pytest.mark.parametrize(
    "query", ["", "?token=", "?token=wrong-token-0123456789", f"?token={TOKEN}&token={TOKEN}"]
)
@pytest.mark.parametrize("path", ["/captions", "/captions/feed", "/", "/v1/realtime", "/health"])
def test_a_wrong_or_missing_token_gets_403_and_nothing_else(share, path, query):
    reply = raw_http(share.port, get_request(path + query, f"127.0.0.1:{share.port}"))
    assert reply.status == 403
    assert reply.body == b"Forbidden\n"


def test_other_paths_with_the_token_are_not_found(share):
    reply = raw_http(
        share.port, get_request(f"/v1/realtime?token={TOKEN}", f"127.0.0.1:{share.port}")
    )
    assert reply.status == 404


async def test_a_wrong_token_cannot_open_the_feed(share):
    with pytest.raises(InvalidStatus) as info:
        await connect(feed_url(share, "wrong-token-0123456789"))
    assert info.value.response.status_code == 403


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://localhost:1", "file://"])
async def test_a_foreign_origin_is_refused_on_the_feed(share, origin):
    with pytest.raises(InvalidStatus) as info:
        await connect(feed_url(share), origin=origin)
    assert info.value.response.status_code == 403


async def test_the_listeners_own_origin_opens_the_feed(share):
    async with connect(feed_url(share), origin=f"http://127.0.0.1:{share.port}") as ws:
        assert (await next_frame(ws))["type"] == "snapshot"


async def test_a_viewer_gets_the_text_so_far_then_every_change(share, captions):
    async with connect(feed_url(share)) as ws:
        snapshot = await next_frame(ws)
        assert [line["committed"] for line in snapshot["lines"]] == [" Good morning"]
        captions.observe(TranscriptionTentative(item_id="i1", text=" every"))
        frame = await next_frame(ws)
        assert frame["line"]["tentative"] == " every"
        captions.observe_translation("i1", "Guten Morgen")
        assert (await next_frame(ws))["line"]["translation"] == "Guten Morgen"


async def test_the_feed_is_read_only(share, captions):
    async with connect(feed_url(share)) as ws:
        await next_frame(ws)
        await ws.send(json.dumps({"type": "input_audio_buffer.clear"}))
        with pytest.raises(ConnectionClosed):
            while True:
                await next_frame(ws)
        assert ws.close_code == 1008
    assert [line["committed"] for line in captions.snapshot()["lines"]] == [" Good morning"]


async def test_following_another_source_resyncs_viewers(share):
    other = CaptionBroadcaster()
    other.observe(TranscriptionDelta(item_id="j1", delta=" after the restart"))
    async with connect(feed_url(share)) as ws:
        await next_frame(ws)
        share.follow(other)
        snapshot = await next_frame(ws)
        assert snapshot == {"type": "snapshot", "lines": [other.snapshot()["lines"][0]]}
        share.follow(None)
        assert await next_frame(ws) == {"type": "snapshot", "lines": []}


async def test_stopping_closes_every_viewer(captions):
    server = CaptionShareServer(CaptionShareConfig(TOKEN, host="127.0.0.1", port=0))
    server.follow(captions)
    server.start()
    async with connect(f"ws://127.0.0.1:{server.port}/captions/feed?token={TOKEN}") as ws:
        await next_frame(ws)
        await asyncio.to_thread(server.stop)
        with pytest.raises(ConnectionClosed):
            await next_frame(ws)
    assert captions.subscriber_count == 0


def test_a_busy_port_is_a_clear_error():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = CaptionShareServer(CaptionShareConfig(TOKEN, host="127.0.0.1", port=port))
        with pytest.raises(CaptionShareError, match="Could not share captions on 127.0.0.1"):
            server.start()


def test_a_short_token_is_refused():
    with pytest.raises(CaptionShareError, match="at least 16"):
        CaptionShareServer(CaptionShareConfig("short"))


def test_the_url_names_the_lan_address_and_the_token(share):
    address = lan_address()
    assert address and share.page_url().startswith(f"http://{address}:{share.port}/captions?token=")
    assert share.page_url("::1") == f"http://[::1]:{share.port}/captions?token={TOKEN}"


async def test_a_new_token_closes_pages_opened_with_the_old_one(share):
    async with connect(feed_url(share)) as ws:
        await next_frame(ws)
        new = "a-brand-new-token-987654321"
        share.replace_token(new)
        with pytest.raises(ConnectionClosed):
            while True:
                await next_frame(ws)
        assert ws.close_code == 1008
    with pytest.raises(InvalidStatus):
        await connect(feed_url(share))
    async with connect(feed_url(share, new)) as ws:
        assert (await next_frame(ws))["type"] == "snapshot"
    with pytest.raises(CaptionShareError):
        share.replace_token("short")


@pytest.mark.parametrize(
    ("with_host", "headers"),
    [
        (False, ()),
        (False, ("Host: 127.0.0.1", "Host: 127.0.0.1")),
        (True, ("Origin: http://a", "Origin: http://a")),
    ],
)
def test_missing_or_repeated_host_and_origin_headers_are_refused(share, with_host, headers):
    host = f"127.0.0.1:{share.port}" if with_host else None
    reply = raw_http(share.port, get_request(f"/captions?token={TOKEN}", host, *headers))
    assert reply.status == 403 and reply.body == b"Forbidden\n"
