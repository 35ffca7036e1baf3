"""``command`` models: a real child ``desktop-rt serve --port ${PORT}`` started on demand, health
checked, proxied both ways over real websockets, and stopped after its ttl."""

from __future__ import annotations

import asyncio
import json
import sys
import urllib.request

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from desktop_rt.engine.models.catalogue import EMBEDDED_ENTRY, ModelEntry, ModelsConfig
from desktop_rt.engine.models.proxy import CommandRuntime, http_status, upstream_query
from desktop_rt.engine.server.server import RealtimeServer, ServerConfig
from tests.support.clips import read_clip, reference_text
from tests.support.rt_client import COMPLETED, EVENT_TIMEOUT, check_item_order, chunks_b64, wer

CHILD = f"{sys.executable} -m desktop_rt.cli serve --port ${{PORT}}"


def test_the_query_is_kept_with_the_upstream_model():
    assert (
        upstream_query("/v1/realtime?intent=transcription&model=mine", "theirs")
        == "intent=transcription&model=theirs"
    )
    assert upstream_query("/v1/realtime", "m") == "model=m"
    runtime = CommandRuntime(ModelEntry("x", "command", cmd='server --port ${PORT} --name "a b"'))
    assert runtime.argv(4321) == ["server", "--port", "4321", "--name", "a b"]


@pytest.fixture
def child_server(whisper_backend, tmp_path):
    entry = ModelEntry(
        "child",
        "command",
        cmd=CHILD,
        ttl=0.3,
        options=(("upstream_model", "whisper-base"),),
        env=(("DESKTOP_RT_CONFIG_DIR", str(tmp_path / "child-config")),),
    )
    config = ModelsConfig((EMBEDDED_ENTRY, entry), max_loaded_models=2)
    settings = ServerConfig(port=0, models=config, activity_path=tmp_path / "activity.sqlite3")
    with RealtimeServer(settings, whisper_backend) as server:
        yield server


@pytest.mark.slow
async def test_a_command_model_is_started_proxied_and_stopped_after_its_ttl(child_server):
    server = child_server
    clip = read_clip("ss-0870")
    async with connect(server.url + "?intent=transcription", max_size=None) as ws:
        # named in the session.update: everything below is sent before the child even started
        await ws.send(
            json.dumps(
                {
                    "type": "session.update",
                    "session": {
                        "type": "transcription",
                        "audio": {
                            "input": {
                                "format": {"type": "audio/pcm", "rate": 24_000},
                                "transcription": {"model": "child", "language": "en"},
                            }
                        },
                    },
                }
            )
        )
        for chunk in chunks_b64(clip, 24_000):
            await ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": chunk}))
        await ws.send(json.dumps({"type": "input_audio_buffer.commit"}))
        events = []
        while not any(e["type"] == COMPLETED for e in events):
            events.append(json.loads(await asyncio.wait_for(ws.recv(), EVENT_TIMEOUT)))

        # the session lives in the child: its own /health counts it
        runtime = server.router._slots["child"].runtime
        assert runtime.alive and runtime.port != server.port
        url = f"http://127.0.0.1:{runtime.port}/health"
        with await asyncio.to_thread(urllib.request.urlopen, url, None, 30) as response:
            health = json.loads(response.read())
        assert health["sessions"] == 1 and server.router.snapshot()["child"].sessions == 1

        await ws.send(b"\x00binary frames pass through too")
        error = json.loads(await asyncio.wait_for(ws.recv(), EVENT_TIMEOUT))
        assert error["type"] == "error" and error["error"]["code"] == "invalid_frame"
        await ws.send(json.dumps({"type": "input_audio_buffer.commit", "final": True}))
        with pytest.raises(ConnectionClosed):
            while True:
                events.append(json.loads(await asyncio.wait_for(ws.recv(), EVENT_TIMEOUT)))
    assert ws.close_code == 1000  # the child's close, passed on
    assert [e["type"] for e in events[:2]] == ["session.created", "session.updated"]
    assert (
        events[0]["session"]["audio"]["input"]["transcription"]["model"] == "whisper-base"
    )  # the child's name
    check_item_order(events)
    (done,) = [e for e in events if e["type"] == COMPLETED]
    assert wer(reference_text("ss-0870"), done["transcript"]) < 0.25, done

    assert await asyncio.to_thread(
        server.router.wait_for, lambda s: s["child"].state == "stopped", EVENT_TIMEOUT
    )
    assert server.router.snapshot()["child"].last_unload == "unloaded after its ttl of 0.3 s"
    assert runtime.process.returncode == 0  # it stopped cleanly on SIGTERM
    assert await asyncio.to_thread(server.activity.wait_recorded, 1, EVENT_TIMEOUT)
    (row,) = server.activity.rows()
    assert row.model == "child" and row.items == 1 and row.close_code == 1000
    assert row.session_id == events[0]["session"]["id"]
    assert row.audio_seconds == pytest.approx(len(clip) / 16_000, abs=0.1)
    assert row.words == len(done["transcript"].split())
    assert row.close_reason == "the model server closed (1000)"


async def test_a_command_that_exits_is_a_failed_load(whisper_backend, tmp_path):
    script = "import sys; print('no model file here', flush=True); sys.exit(3)"
    entry = ModelEntry("dies", "command", cmd=f'{sys.executable} -c "{script}" ${{PORT}}')
    config = ModelsConfig((EMBEDDED_ENTRY, entry), max_loaded_models=2)
    with RealtimeServer(
        ServerConfig(port=0, models=config, record_activity=False), whisper_backend
    ) as server:
        async with connect(server.url + "?model=dies") as ws:
            error = json.loads(await asyncio.wait_for(ws.recv(), EVENT_TIMEOUT))
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(ws.recv(), EVENT_TIMEOUT)
        assert ws.close_code == 1011
        assert error["error"]["code"] == "model_load_failed"
        assert (
            "exited with code 3" in error["error"]["message"]
            and "no model file here" in error["error"]["message"]
        )
        assert server.router.snapshot()["dies"].state == "stopped"


async def test_health_probe_of_a_port_nobody_listens_on_fails():
    from desktop_rt.engine.models.proxy import free_port

    with pytest.raises(OSError):
        await http_status("127.0.0.1", free_port(), "/health")


@pytest.mark.slow
def test_rest_for_a_command_model_is_passed_to_its_server(child_server):
    from openai import OpenAI

    from tests.support.clips import DATA

    client = OpenAI(api_key="unused", base_url=f"{child_server.http_url}/v1", max_retries=0)
    with (DATA / "ss-0870.wav").open("rb") as audio:
        result = client.audio.transcriptions.create(model="child", file=audio)
    assert wer(reference_text("ss-0870"), result.text) <= 0.1, result.text
    assert child_server.activity.wait_recorded(1, EVENT_TIMEOUT)
    (row,) = child_server.activity.rows()
    assert row.model == "child" and row.close_reason == "POST transcription passed on"
