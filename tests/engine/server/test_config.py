"""ServerConfig: the default session limit from memory and cores, its overrides, and the refusal
a client over it gets from a real server."""

from __future__ import annotations

import asyncio
import json

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from desktop_rt.engine.models.catalogue import ModelsConfig
from desktop_rt.engine.server.config import ServerConfig, default_session_limit
from desktop_rt.engine.server.server import RealtimeServer
from tests.support.rt_client import open_client
from tests.support.scripted_backend import ScriptedBackend, Truth

GB = 1024**3


def test_the_default_limit_follows_memory_and_cores():
    assert default_session_limit(16 * GB, 8) == 128  # by memory: 4 GB / 32 MB
    assert default_session_limit(16 * GB, 2) == 32  # by cores: 16 each
    assert default_session_limit(1 * GB, 16) == 8  # a small machine's memory
    assert default_session_limit(GB // 4, 1) == 4  # never below 4
    assert default_session_limit(1024 * GB, 128) == 256  # never above 256
    assert 4 <= default_session_limit() <= 256  # this machine's


def test_the_limit_is_overridable_and_models_toml_wins():
    assert ServerConfig().session_limit == default_session_limit()
    assert ServerConfig(max_sessions=3).session_limit == 3
    assert ServerConfig(max_sessions=0).session_limit == 0  # no limit
    empty = ModelsConfig(entries=())
    assert ServerConfig(max_sessions=3).limited(empty).global_concurrency_limit == 3
    own = ModelsConfig(entries=(), global_concurrency_limit=7)
    assert ServerConfig(max_sessions=3).limited(own).global_concurrency_limit == 7


def test_a_negative_limit_is_refused_with_its_value():
    with pytest.raises(ValueError, match="max_sessions must be 0 .* not -1"):
        ServerConfig(max_sessions=-1)


async def test_a_client_over_the_limit_gets_429_naming_it_and_a_freed_slot_admits_the_next():
    config = ServerConfig(port=0, max_sessions=1, record_activity=False)
    with RealtimeServer(config, ScriptedBackend(Truth(()))) as server:
        first = await open_client(server.url)
        with pytest.raises(InvalidStatus) as caught:
            await connect(server.url)
        response = caught.value.response
        assert response.status_code == 429
        body = json.loads(response.body)["error"]
        assert body["code"] == "global_concurrency_limit" and body["type"] == "rate_limit_error"
        assert body["limit"] == {"scope": "global", "max_sessions": 1, "model": None}
        assert "global_concurrency_limit of 1" in body["message"]
        await first.ws.close()
        router = server.router
        assert router is not None
        freed = await asyncio.to_thread(
            router.wait_for, lambda models: all(m.admitted == 0 for m in models.values()), 30
        )
        assert freed
        second = await open_client(server.url)  # the slot came back
        await second.ws.close()
