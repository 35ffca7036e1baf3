"""``desktop-rt serve`` as a real subprocess: prints its URL, answers /health, stops on SIGINT."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import sys
import urllib.request

import pytest

from tests.support.clips import read_clip
from tests.support.rt_client import COMPLETED, DELTA, check_item_order, open_client
from tests.support.tiny_qwen3asr import write_pair

TIMEOUT = 120.0


async def start_serve(*args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "desktop_rt.cli",
        "serve",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def read_until(stream: asyncio.StreamReader, pattern: str) -> re.Match:
    async def scan() -> re.Match:
        while line := (await stream.readline()).decode():
            if match := re.search(pattern, line):
                return match
        raise AssertionError(f"output ended before {pattern!r}")

    return await asyncio.wait_for(scan(), TIMEOUT)


@pytest.mark.slow
async def test_serve_on_a_free_port_until_sigint(default_model_dir):
    proc = await start_serve("--port", "0")
    try:
        match = await read_until(
            proc.stdout, r"desktop-rt: listening on (ws://127\.0\.0\.1:(\d+)/v1/realtime)"
        )
        port = int(match.group(2))
        assert port > 0
        with await asyncio.to_thread(
            urllib.request.urlopen, f"http://127.0.0.1:{port}/health", None, 30
        ) as r:
            health = json.loads(r.read())
        assert health["status"] == "ok" and health["model"] == "whisper-base"
        proc.send_signal(signal.SIGINT)
        assert await asyncio.wait_for(proc.wait(), TIMEOUT) == 0
        assert b"stopping" in await proc.stdout.read()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_serve_refuses_a_public_address_without_a_key():
    proc = await start_serve("--host", "0.0.0.0", "--port", "0")
    _, stderr = await asyncio.wait_for(proc.communicate(), TIMEOUT)
    assert proc.returncode == 1
    assert b"without an API key" in stderr


@pytest.mark.slow
async def test_serve_runs_a_gguf_pair_over_the_realtime_protocol(tmp_path):
    """``serve --model TEXT.gguf --mmproj MMPROJ.gguf``: the same protocol as the Whisper path,
    through the GGUF backend's blocks and forced prefix (random weights: structure, not words)."""
    text, mmproj = write_pair(tmp_path)
    proc = await start_serve("--port", "0", "--model", str(text), "--mmproj", str(mmproj))
    try:
        match = await read_until(proc.stdout, r"listening on (ws://127\.0\.0\.1:(\d+)/v1/realtime)")
        url, port = match.group(1), int(match.group(2))
        with await asyncio.to_thread(
            urllib.request.urlopen, f"http://127.0.0.1:{port}/health", None, 30
        ) as r:
            assert json.loads(r.read())["model"] == text.name
        client = await open_client(url)
        await client.configure(rate=24_000, language="en")
        clip = read_clip("ss-0870")[: 7 * 16000]
        await client.append_clip(clip)
        await client.send({"type": "input_audio_buffer.commit", "final": True})
        assert await client.drain_to_close() == 1000
        check_item_order(
            client.events
        )  # committed before completed, deltas add up to the transcript
        (completed,) = client.of_type(COMPLETED)
        assert completed["usage"]["seconds"] == pytest.approx(7.0, abs=0.05)
        assert completed["transcript"] == "".join(e["delta"] for e in client.of_type(DELTA))
        proc.send_signal(signal.SIGINT)
        assert await asyncio.wait_for(proc.wait(), TIMEOUT) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
