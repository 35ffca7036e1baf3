"""A REST request for a proxied model (``remote`` or ``command``), passed on to its server.

Call order: :meth:`RestForward.send` once the model is leased. The form goes out as it came,
every field in order with ``model`` set to the server's name for the model (the ``model`` of
its realtime URL), the file streamed from the temp dir, to the same path on the server's
``http://`` (``https://`` for ``wss://``, with the runtime's TLS context and API key). The
server's status, Content-Type and body are relayed as they arrive, so server-sent events stream
through (the relay ends at ``transcript.text.done`` or an error event, the last ones OpenAI
sends); its errors reach the client unchanged. A server that cannot be reached is 502
``upstream_unreachable``, naming the URL.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import ssl
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from urllib.parse import parse_qsl, urlsplit

from desktop_rt.engine.models.proxy import UpstreamTarget
from desktop_rt.engine.server.rest_http import HttpExchange
from desktop_rt.engine.server.rest_multipart import UploadedFile
from desktop_rt.engine.server.rest_params import RestError

__all__ = ["RestForward", "rest_url"]

_CHUNK = 64 * 1024
_OPEN_TIMEOUT = 30.0
_MAX_HEAD = 64 * 1024


def rest_url(target: UpstreamTarget, path: str) -> tuple[str, str]:
    """``(http(s) URL of path on the target's server, the target's model name)``."""
    parts = urlsplit(target.url)
    scheme = "https" if parts.scheme == "wss" else "http"
    prefix = parts.path.rsplit("/realtime", 1)[0] if parts.path.endswith("/realtime") else ""
    suffix = path.removeprefix("/v1") if prefix.endswith("/v1") else path
    model = dict(parse_qsl(parts.query)).get("model", "")
    return f"{scheme}://{parts.netloc}{prefix}{suffix}", model


@dataclass
class RestForward:
    """One request's form and file, to be sent to ``target``'s server at ``path``."""

    target: UpstreamTarget
    path: str
    fields: Mapping[str, Sequence[str]]
    upload: UploadedFile

    def _form(self, model: str, boundary: str) -> tuple[bytes, bytes]:
        """The multipart text before the file's bytes, and after them."""
        head = bytearray()
        for name, values in self.fields.items():
            for value in [model] if name == "model" and model else values:
                disposition = f'form-data; name="{_quoted(name)}"'
                head += f"--{boundary}\r\nContent-Disposition: {disposition}\r\n\r\n".encode()
                head += value.encode() + b"\r\n"
        filename = _quoted(self.upload.filename)
        head += (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
            f'filename="{filename}"\r\n'
            f"Content-Type: {self.upload.content_type or 'application/octet-stream'}\r\n\r\n"
        ).encode()
        return bytes(head), f"\r\n--{boundary}--\r\n".encode()

    async def send(self, exchange: HttpExchange) -> str:
        """Pass the request on and relay the answer; returns its text when it was JSON."""
        url, model = rest_url(self.target, self.path)
        parts = urlsplit(url)
        host, port = parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)
        boundary = "desktop-rt-" + secrets.token_hex(12)
        head, tail = self._form(model, boundary)
        length = len(head) + self.upload.size + len(tail)
        https = parts.scheme == "https"
        context = (self.target.ssl or ssl.create_default_context()) if https else None
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(host, port, ssl=context), _OPEN_TIMEOUT
            )
        except (OSError, TimeoutError, ssl.SSLError) as exc:
            raise _unreachable(url, exc) from None
        try:
            request = [
                f"POST {parts.path} HTTP/1.1",
                f"Host: {parts.netloc}",
                f"Content-Type: multipart/form-data; boundary={boundary}",
                f"Content-Length: {length}",
                "Connection: close",
                *(f"{name}: {value}" for name, value in self.target.headers),
                "",
                "",
            ]
            writer.write("\r\n".join(request).encode("latin-1") + head)
            await self._write_file(writer)
            writer.write(tail)
            await writer.drain()
            return await self._relay(reader, exchange, url)
        except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
            if exchange.responded:
                return ""  # the answer was cut off; the client sees it end
            raise _unreachable(url, exc) from None
        finally:
            writer.close()  # not awaited: a TLS goodbye must not hold the answer back

    async def _write_file(self, writer: asyncio.StreamWriter) -> None:
        with self.upload.path.open("rb") as source:
            while data := await asyncio.to_thread(source.read, _CHUNK):
                writer.write(data)
                await writer.drain()

    async def _relay(self, reader: asyncio.StreamReader, exchange: HttpExchange, url: str) -> str:
        status_line = await reader.readline()
        fields = status_line.decode("latin-1").split(" ", 2)
        if len(fields) < 2 or not fields[1].isdigit():
            raise ValueError(f"not an HTTP answer from {url}")
        headers: dict[str, str] = {}
        while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
            if len(headers) > 100 or len(line) > _MAX_HEAD:
                raise ValueError("the answer's headers are too large")
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        declared = headers.get("content-length")
        length = int(declared) if declared and declared.isdigit() and not chunked else None
        content_type = headers.get("content-type", "application/octet-stream")
        await exchange.start(HTTPStatus(int(fields[1])), content_type, length)
        kept = bytearray()
        events = _EventWatch() if content_type.startswith("text/event-stream") else None
        async for data in _chunks(reader) if chunked else _plain(reader, length):
            await exchange.write(data)
            if events is not None and events.feed(data):
                return events.text
            if content_type.startswith("application/json") and len(kept) < 1 << 20:
                kept += data
        return events.text if events is not None else _json_text(bytes(kept))


async def _plain(reader: asyncio.StreamReader, length: int | None) -> AsyncIterator[bytes]:
    left = length
    while left is None or left > 0:
        data = await reader.read(_CHUNK if left is None else min(_CHUNK, left))
        if not data:
            return
        if left is not None:
            left -= len(data)
        yield data


async def _chunks(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
    while True:
        size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
        if size == 0:
            return
        yield await reader.readexactly(size)
        await reader.readline()


class _EventWatch:
    """Reads server-sent events as they pass; says when the last one (done or error) passed."""

    def __init__(self) -> None:
        self._buffer = b""
        self.text = ""

    def feed(self, data: bytes) -> bool:
        self._buffer += data
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            if not line.startswith(b"data:"):
                continue
            with contextlib.suppress(ValueError):
                event = json.loads(line[5:])
                if isinstance(event, dict) and "error" in event:
                    return True
                if isinstance(event, dict) and event.get("type") == "transcript.text.done":
                    self.text = str(event.get("text", ""))
                    return True
        return False


def _quoted(text: str) -> str:
    """``text`` safe inside a quoted header parameter."""
    return text.replace('"', "'").replace("\r", " ").replace("\n", " ")


def _json_text(body: bytes) -> str:
    with contextlib.suppress(ValueError, AttributeError):
        text = json.loads(body).get("text")
        return text if isinstance(text, str) else ""
    return ""


def _unreachable(url: str, exc: BaseException) -> RestError:
    return RestError(
        HTTPStatus.BAD_GATEWAY,
        f"The model's server at {url} could not be reached or did not answer: {exc}",
        "upstream_unreachable",
        "model",
        "server_error",
    )
