"""The caption broadcaster and its viewers: changes in order, slow viewers resynced, never waited on."""

from __future__ import annotations

import asyncio
import json
import socket
import time

from websockets.asyncio.client import connect

from desktop_rt.engine.protocol.events import (
    SessionCreated,
    TranscriptionCompleted,
    TranscriptionDelta,
    TranscriptionTentative,
)
from desktop_rt.engine.protocol.session_config import SessionConfig
from desktop_rt.engine.server.captions_feed import RESYNC, CaptionBroadcaster, Viewer
from desktop_rt.engine.server.captions_page import CaptionShareConfig, CaptionShareServer

TOKEN = "viewer-token-0123456789"


def test_a_subscriber_gets_the_snapshot_then_every_change_in_order():
    source = CaptionBroadcaster()
    source.observe(TranscriptionDelta(item_id="a", delta=" one"))
    seen: list[dict] = []
    snapshot, unsubscribe = source.subscribe(seen.append)
    assert [line["committed"] for line in snapshot["lines"]] == [" one"]
    source.observe(TranscriptionDelta(item_id="a", delta=" two"))
    source.observe(SessionCreated(session=SessionConfig(id="s", model="m")))  # not shown
    source.observe(TranscriptionTentative(item_id="a", text=" three"))
    assert [(f["line"]["committed"], f["line"]["tentative"]) for f in seen] == [
        (" one two", ""),
        (" one two", " three"),
    ]
    assert source.subscriber_count == 1
    unsubscribe()
    source.observe(TranscriptionDelta(item_id="a", delta=" four"))
    assert len(seen) == 2 and source.subscriber_count == 0


def test_without_subscribers_the_board_still_follows_the_session():
    source = CaptionBroadcaster()
    source.observe(TranscriptionDelta(item_id="a", delta=" kept"))
    assert source.snapshot()["lines"][0]["committed"] == " kept"


def test_a_correction_reaches_subscribers_as_the_line_with_the_corrected_words():
    source = CaptionBroadcaster()
    source.observe(TranscriptionCompleted(item_id="a", transcript=" dashwud", audio_seconds=1.0))
    seen: list[dict] = []
    _snapshot, _unsubscribe = source.subscribe(seen.append)
    source.observe_correction("a", "Dashwood")
    source.observe_correction("missing", "Dashwood")  # no such line: nothing is sent
    assert [(f["line"]["id"], f["line"]["committed"]) for f in seen] == [("a", "Dashwood")]
    assert source.snapshot()["lines"][0]["committed"] == "Dashwood"


async def test_a_full_viewer_queue_is_replaced_by_one_resync():
    viewer = Viewer(queue_size=3)
    for n in range(3):
        viewer.offer(f"frame {n}")
    assert viewer.resyncs == 0 and viewer.queue.qsize() == 3
    viewer.offer("frame 3")
    assert viewer.resyncs == 1 and viewer.queue.qsize() == 1
    assert viewer.queue.get_nowait() is RESYNC


async def read_until(ws, predicate, timeout=120.0):
    """Frames from ``ws`` until one satisfies ``predicate``; that one."""
    async with asyncio.timeout(timeout):
        while True:
            frame = json.loads(await ws.recv())
            if predicate(frame):
                return frame


def shows(frame, text):
    lines = frame["lines"] if frame["type"] == "snapshot" else [frame["line"]]
    return any(line["committed"] == text for line in lines)


async def test_a_stalled_viewer_is_resynced_and_delays_nobody():
    """One viewer stops reading (its TCP buffers fill); the publisher never waits and the other
    viewer sees the end; the stalled one, reading again, gets the whole text at once."""
    source = CaptionBroadcaster()
    share = CaptionShareServer(CaptionShareConfig(TOKEN, host="127.0.0.1", port=0, queue_size=8))
    share.follow(source)
    with share:
        url = f"ws://127.0.0.1:{share.port}/captions/feed?token={TOKEN}"
        small = socket.socket()
        small.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # no autotuned megabytes
        small.connect(("127.0.0.1", share.port))
        small.setblocking(False)
        stalled_ws = connect(url, sock=small, max_queue=1, max_size=None)
        async with stalled_ws as stalled, connect(url, max_size=None) as reader:
            await read_until(stalled, lambda f: f["type"] == "snapshot")
            await read_until(reader, lambda f: f["type"] == "snapshot")
            final = " the last words"

            def publish() -> None:
                for n in range(600):
                    source.observe(
                        TranscriptionTentative(item_id="a", text=f" {n} " + "x" * 20_000)
                    )
                source.observe(TranscriptionDelta(item_id="a", delta=final))

            publisher = asyncio.create_task(asyncio.to_thread(publish))
            await read_until(reader, lambda f: shows(f, final))
            await publisher
            deadline = time.monotonic() + 60
            while not any(v.resyncs for v in share.fanout.viewers) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert any(v.resyncs for v in share.fanout.viewers), (
                "the stalled viewer never fell behind"
            )
            kinds: list[str] = []
            await read_until(stalled, lambda f: kinds.append(f["type"]) or shows(f, final))
            assert "snapshot" in kinds and len(kinds) < 601  # the text again, not every frame
