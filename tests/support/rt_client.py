"""A small realtime client for the server tests: real websockets, real clips, no mocks."""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field

import numpy as np
import soxr
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from desktop_rt.engine.audio.codecs import float_to_pcm16
from tests.support.clips import wer  # noqa: F401  (re-exported: the server tests score transcripts with it)

COMPLETED = "conversation.item.input_audio_transcription.completed"
DELTA = "conversation.item.input_audio_transcription.delta"
COMMITTED = "input_audio_buffer.committed"

EVENT_TIMEOUT = 120.0
"""Seconds to wait for one event: the CPUs are shared, the model is real."""


def pcm16_b64(samples16k: np.ndarray, rate: int = 16_000) -> str:
    if rate != 16_000:
        samples16k = soxr.resample(samples16k, 16_000, rate, quality="HQ")
    return base64.b64encode(float_to_pcm16(samples16k)).decode("ascii")


def chunks_b64(samples16k: np.ndarray, rate: int = 24_000, chunk_seconds: float = 0.1) -> list[str]:
    """The clip resampled to ``rate`` as base64 PCM16 chunks, as a microphone client sends it."""
    audio = soxr.resample(samples16k, 16_000, rate, quality="HQ") if rate != 16_000 else samples16k
    step = int(rate * chunk_seconds)
    return [
        base64.b64encode(float_to_pcm16(audio[i : i + step])).decode("ascii")
        for i in range(0, len(audio), step)
    ]


@dataclass
class Client:
    """One websocket session: every event it received, in order."""

    ws: ClientConnection
    events: list[dict] = field(default_factory=list)

    async def send(self, event: dict | str | bytes) -> None:
        await self.ws.send(json.dumps(event) if isinstance(event, dict) else event)

    async def next(self, timeout: float = EVENT_TIMEOUT) -> dict:
        raw = await asyncio.wait_for(self.ws.recv(), timeout)
        event = json.loads(raw)
        self.events.append(event)
        return event

    async def until(self, type_: str, timeout: float = EVENT_TIMEOUT) -> dict:
        """Read events until one of ``type_`` arrives; return it."""
        while True:
            event = await self.next(timeout)
            if event["type"] == type_:
                return event

    async def drain_to_close(self, timeout: float = EVENT_TIMEOUT) -> int | None:
        """Read every event until the server closes; returns the close code."""
        try:
            while True:
                await self.next(timeout)
        except ConnectionClosed:
            pass
        await asyncio.wait_for(self.ws.wait_closed(), timeout)
        return self.ws.close_code

    async def configure(self, rate: int = 24_000, **transcription) -> dict:
        session = {
            "type": "transcription",
            "audio": {"input": {"format": {"type": "audio/pcm", "rate": rate}}},
        }
        if transcription:
            session["audio"]["input"]["transcription"] = transcription
        await self.send({"type": "session.update", "session": session})
        return await self.until("session.updated")

    async def append_clip(self, samples16k: np.ndarray, rate: int = 24_000) -> None:
        for chunk in chunks_b64(samples16k, rate):
            await self.send({"type": "input_audio_buffer.append", "audio": chunk})

    def of_type(self, type_: str) -> list[dict]:
        return [e for e in self.events if e["type"] == type_]

    def transcripts(self) -> list[str]:
        return [e["transcript"] for e in self.of_type(COMPLETED)]


async def open_client(url: str, **kwargs) -> Client:
    ws = await connect(url, max_size=None, open_timeout=60, **kwargs)
    client = Client(ws)
    first = await client.next()
    assert first["type"] == "session.created", first
    return client


def check_item_order(events: list[dict]) -> None:
    """Per item: committed before completed, and completed's transcript is its deltas joined
    or, for an item decoded whole once it ended (docs/protocol.md: ``completed`` is
    authoritative), a text of its own, never empty where the deltas had words (how close it
    is to the speech, each test bounds against the reference)."""
    deltas: dict[str, list[str]] = {}
    committed: set[str] = set()
    previous = None
    for event in events:
        kind = event["type"]
        assert event.get("event_id"), event
        if kind == DELTA:
            deltas.setdefault(event["item_id"], []).append(event["delta"])
        elif kind == COMMITTED:
            assert event["previous_item_id"] == previous, (event, previous)
            committed.add(event["item_id"])
            previous = event["item_id"]
        elif kind == COMPLETED:
            item = event["item_id"]
            assert item in committed, f"completed before committed for {item}"
            joined = "".join(deltas.get(item, []))
            whole = bool(event["transcript"].strip() and joined.strip())
            assert event["transcript"] == joined or whole, (event, joined)
    ids = [e["event_id"] for e in events]
    assert len(ids) == len(set(ids)), "event ids repeat"


def http_get(url: str, headers: dict | None = None) -> tuple[int, dict]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@dataclass
class RawReply:
    """An HTTP answer read off a raw socket: ``status`` 0 when the server sent nothing."""

    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> dict:
        return json.loads(self.body)


def raw_http(port: int, request: bytes, timeout: float = 15.0) -> RawReply:
    """Send ``request`` as is to 127.0.0.1:``port``; read one answer (its head, then
    Content-Length bytes of body) or until the server closes, within ``timeout``."""
    deadline = time.monotonic() + timeout
    data = b""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(request)
        while time.monotonic() < deadline and len(data) < 1 << 20 and not _complete(data):
            try:
                chunk = sock.recv(65536)
            except (ConnectionResetError, TimeoutError):
                break
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    if not lines[0].startswith("HTTP/"):
        return RawReply(0, {}, data)
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return RawReply(int(lines[0].split()[1]), headers, body)


def _complete(data: bytes) -> bool:
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        return False
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip() or 0)
    return len(body) >= length


def get_request(path: str, host: str | None = "127.0.0.1", *headers: str) -> bytes:
    """A GET request; ``host`` None sends no Host header; ``headers`` as ``"Name: value"``."""
    lines = [f"GET {path} HTTP/1.1", *([f"Host: {host}"] if host is not None else []), *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
