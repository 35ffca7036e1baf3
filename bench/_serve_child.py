"""A ``desktop-rt serve`` child for the reliability benchmark, and small client helpers.

``Serve(config_dir)`` starts the server on a free loopback port (bench_endpoints.start_upstream),
drains and counts its output in a thread (an undrained pipe would block the server), and
measures its threads, fds and RSS with psutil; ``stop()`` ends it.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import psutil
from bench_endpoints import start_upstream
from websockets.asyncio.client import ClientConnection, connect


class Serve:
    """A ``desktop-rt serve`` child on a free loopback port; its output is drained and counted."""

    def __init__(self, config_dir: Path) -> None:
        self.proc, self.port = start_upstream(config_dir)
        self.ps = psutil.Process(self.proc.pid)
        self.lines = 0
        self.tracebacks = 0
        self.errors = 0
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines += 1
            self.tracebacks += line.startswith("Traceback")
            self.errors += " ERROR " in line or line.startswith("ERROR")

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/v1/realtime"

    def alive(self) -> bool:
        return self.proc.poll() is None

    def health(self) -> dict:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=30) as r:
            return json.loads(r.read())

    def settle(self, timeout: float = 180) -> None:
        """Wait until the server has no session open, then a second (it trims after a close)."""
        deadline = time.monotonic() + timeout
        while self.health()["sessions"] and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.5)

    def rss_mb(self) -> float:
        return round(self.ps.memory_info().rss / 2**20, 1)

    def peak_rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
        return float("nan")

    def resources(self) -> dict:
        return {"threads": self.ps.num_threads(), "fds": self.ps.num_fds(), "rss_mb": self.rss_mb()}

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


async def open_session(url: str) -> ClientConnection:
    ws = await connect(url, max_size=None, compression=None, open_timeout=120)
    while json.loads(await ws.recv())["type"] != "session.created":
        pass
    return ws


async def until(ws: ClientConnection, kind: str, timeout: float = 120) -> list[dict]:
    seen = []
    while True:
        event = json.loads(await asyncio.wait_for(ws.recv(), timeout))
        seen.append(event)
        if event["type"] == kind:
            return seen
