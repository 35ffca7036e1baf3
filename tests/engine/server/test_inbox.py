"""The frame inbox: arrival order, the end marker, and backpressure past its byte bound."""

from __future__ import annotations

import asyncio

from desktop_rt.engine.server.inbox import FrameInbox


async def test_frames_come_out_in_order_then_the_iteration_ends():
    inbox = FrameInbox(max_bytes=1_000)
    for frame in ("a", b"bb", "ccc"):
        await inbox.put(frame)
    inbox.close()
    assert [frame async for frame in inbox] == ["a", b"bb", "ccc"]


async def test_a_put_past_the_bound_waits_until_frames_are_taken():
    inbox = FrameInbox(max_bytes=4)
    await inbox.put("abc")
    blocked = asyncio.ensure_future(inbox.put("defgh"))  # 8 bytes held: over the bound
    await asyncio.sleep(0)
    assert not blocked.done()
    assert await inbox.get() == "abc"  # 5 bytes held: still over
    await asyncio.sleep(0)
    assert not blocked.done()
    assert await inbox.get() == "defgh"
    await asyncio.wait_for(blocked, 1)
    inbox.close()
    assert await inbox.get() is None
