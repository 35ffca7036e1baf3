"""``desktop-rt serve`` as a real subprocess: prints its URL, answers /health, stops on SIGINT."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import sys
import urllib.request

import pytest

TIMEOUT = 120.0


async def start_serve(*args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "desktop_rt.cli", "serve", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
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
        match = await read_until(proc.stdout, r"desktop-rt: listening on (ws://127\.0\.0\.1:(\d+)/v1/realtime)")
        port = int(match.group(2))
        assert port > 0
        with await asyncio.to_thread(urllib.request.urlopen, f"http://127.0.0.1:{port}/health", None, 30) as r:
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
