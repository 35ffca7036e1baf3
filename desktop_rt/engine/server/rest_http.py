"""Plain HTTP/1.1 POST requests on the websocket port: the request body in, a response out.

websockets only takes GET upgrade requests. For a POST to a path in :data:`POST_PATHS`,
:mod:`.http_guard` builds a :class:`PostRequest` whose raw bytes after the headers go to a
:class:`BodyPipe` (``feed_body``, the protocol's parser from then on), and hands the request to
the same ``process_request`` hook as every other request (host, origin, key, route). The route
reads the body with :meth:`HttpExchange.body` (Content-Length or chunked, with a size limit)
and answers with :meth:`~HttpExchange.send` or a stream (:meth:`~HttpExchange.start`, ``write``,
then :meth:`~HttpExchange.finish`). Every response says ``Connection: close``; one request per
connection.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Generator
from dataclasses import dataclass, field
from http import HTTPStatus

from websockets.asyncio.server import ServerConnection
from websockets.http11 import Request, Response
from websockets.protocol import CLOSED
from websockets.server import ServerProtocol

from desktop_rt.engine.server.handshake import error_body

__all__ = [
    "BodyError",
    "BodyPipe",
    "HttpExchange",
    "POST_PATHS",
    "PostRequest",
    "TRANSCRIPTIONS_PATH",
    "TRANSLATIONS_PATH",
    "feed_body",
    "is_post_path",
    "serve_post",
]

log = logging.getLogger(__name__)

ProcessRequest = Callable[[ServerConnection, Request], Awaitable[Response | None] | Response | None]

TRANSCRIPTIONS_PATH = "/v1/audio/transcriptions"
TRANSLATIONS_PATH = "/v1/audio/translations"
POST_PATHS = (TRANSCRIPTIONS_PATH, TRANSLATIONS_PATH)
_PIPE_HIGH = 1024 * 1024  # bytes buffered before the socket stops being read
_LINGER_BYTES = 64 * 1024 * 1024  # after an early answer, body bytes read and dropped, at most
_LINGER_SECONDS = 10.0
_CLOSE_SECONDS = 10.0


def is_post_path(raw_path: str) -> bool:
    """The request path (query ignored) is one this server answers POST on."""
    return (raw_path.partition("?")[0].rstrip("/") or "/") in POST_PATHS


class BodyError(Exception):
    """The request body cannot be read: ``status`` and an OpenAI error body."""

    def __init__(self, status: HTTPStatus, message: str, code: str):
        super().__init__(message)
        self.status, self.message, self.code = status, message, code


class BodyPipe:
    """Raw bytes from the socket to the route, on the loop; reading pauses past a bound."""

    def __init__(self, pause: Callable[[], None], resume: Callable[[], None]):
        self._pause, self._resume = pause, resume
        self._chunks: collections.deque[bytes] = collections.deque()
        self._size = 0
        self._paused = False
        self.eof = False
        self._wake = asyncio.Event()

    def feed(self, data: bytes) -> None:
        self._chunks.append(data)
        self._size += len(data)
        self._wake.set()
        if self._size > _PIPE_HIGH and not self._paused:
            self._paused = True
            self._pause()

    def feed_eof(self) -> None:
        self.eof = True
        self._wake.set()

    async def read(self) -> bytes:
        """The next bytes; ``b""`` once the client closed its side."""
        while not self._chunks:
            if self.eof:
                return b""
            self._wake.clear()
            await self._wake.wait()
        data = self._chunks.popleft()
        self._size -= len(data)
        if self._paused and self._size < _PIPE_HIGH // 2:
            self._paused = False
            self._resume()
        return data


def feed_body(protocol: ServerProtocol, pipe: BodyPipe) -> Generator[None]:
    """The protocol's parser after a POST request's headers: everything goes to ``pipe``."""
    reader = protocol.reader
    while True:
        if reader.buffer:
            pipe.feed(bytes(reader.buffer))
            del reader.buffer[:]
        elif reader.eof:
            pipe.feed_eof()
            protocol.state = CLOSED
            while True:  # nothing arrives after the end of the stream
                yield
        yield


@dataclass
class PostRequest(Request):
    """A POST request: :class:`Request` plus its body and, once the handshake runs, its exchange."""

    pipe: BodyPipe | None = None
    exchange: HttpExchange | None = None


@dataclass
class HttpExchange:
    """One POST request's answer, written straight to the connection's transport."""

    connection: ServerConnection
    request: PostRequest
    responded: bool = False
    _consumed: bool = field(default=False, repr=False)

    @property
    def lost(self) -> asyncio.Future[None]:
        """Done once the client is gone."""
        return self.connection.connection_lost_waiter

    async def body(self, limit: int) -> AsyncIterator[bytes]:
        """The body's bytes (Content-Length or chunked); :class:`BodyError` when it is longer
        than ``limit``, malformed, or cut short."""
        headers = self.request.headers
        pipe = self.request.pipe
        assert pipe is not None  # http_guard made it
        chunked = "chunked" in headers.get("Transfer-Encoding", "").lower()
        length = _content_length(headers.get("Content-Length"), chunked)
        if length is not None and length > limit:
            raise _too_large(limit)
        if headers.get("Expect", "").lower() == "100-continue":
            self.connection.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        self._consumed = True
        parts = _chunked(pipe) if chunked else _sized(pipe, length or 0)
        total = 0
        async for data in parts:
            total += len(data)
            if total > limit:
                raise _too_large(limit)
            yield data

    async def send(self, status: HTTPStatus, body: bytes, content_type: str) -> None:
        """A whole response."""
        await self.start(status, content_type, len(body))
        await self.write(body)

    async def send_error(
        self,
        status: HTTPStatus,
        message: str,
        code: str,
        param: str | None = None,
        type_: str = "invalid_request_error",
    ) -> None:
        """OpenAI's error JSON."""
        body = error_body(message, type_, code, param).encode()
        await self.send(status, body, "application/json")

    async def start(self, status: HTTPStatus, content_type: str, length: int | None = None) -> None:
        """The status line and headers; without ``length`` the body ends with the connection."""
        head = [f"HTTP/1.1 {status.value} {status.phrase}", f"Content-Type: {content_type}"]
        if length is not None:
            head.append(f"Content-Length: {length}")
        else:
            head.append("Cache-Control: no-cache")
        head += ["Connection: close", "Server: desktop-rt", "", ""]
        self.responded = True
        await self.write("\r\n".join(head).encode("latin-1"))

    async def write(self, data: bytes) -> None:
        transport = self.connection.transport
        if transport.is_closing():
            return
        transport.write(data)
        with contextlib.suppress(ConnectionError):
            await self.connection.drain()

    async def send_response(self, response: Response) -> None:
        """A response built by the ``process_request`` hook (a refusal)."""
        content_type = response.headers.get("Content-Type", "application/json")
        await self.send(HTTPStatus(response.status_code), response.body, content_type)

    async def finish(self) -> None:
        """End the exchange: drop what is left of the body (so the client reads the answer
        instead of a reset), close, and wait for the socket to close."""
        pipe = self.request.pipe
        if pipe is not None and not self._consumed and not self.lost.done():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(_LINGER_SECONDS):
                    dropped = 0
                    while dropped < _LINGER_BYTES and (data := await pipe.read()):
                        dropped += len(data)
        self.connection.transport.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.lost), _CLOSE_SECONDS)


def _too_large(limit: int) -> BodyError:
    return BodyError(
        HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
        f"The request is larger than this server's limit of {limit / 1e6:g} MB "
        "(max_request_bytes). Send a shorter or more compressed file.",
        "file_too_large",
    )


def _content_length(value: str | None, chunked: bool) -> int | None:
    if chunked:
        return None
    if value is None or not value.strip().isdigit():
        raise BodyError(
            HTTPStatus.LENGTH_REQUIRED,
            "Send a Content-Length header or a chunked body.",
            "invalid_request",
        )
    return int(value)


async def _sized(pipe: BodyPipe, length: int) -> AsyncIterator[bytes]:
    left = length
    while left > 0:
        data = await pipe.read()
        if not data:
            raise BodyError(HTTPStatus.BAD_REQUEST, "The body ended early.", "invalid_request")
        yield data[:left]
        left -= len(data)


async def _chunked(pipe: BodyPipe) -> AsyncIterator[bytes]:
    """Decode ``Transfer-Encoding: chunked``; trailers are read and dropped."""
    buffer = bytearray()

    async def line() -> bytes:
        while (at := buffer.find(b"\r\n")) < 0:
            if len(buffer) > 4096 or not (data := await pipe.read()):
                raise BodyError(
                    HTTPStatus.BAD_REQUEST, "A malformed chunked body.", "invalid_request"
                )
            buffer.extend(data)
        text = bytes(buffer[:at])
        del buffer[: at + 2]
        return text

    while True:
        size_text = (await line()).split(b";")[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise BodyError(
                HTTPStatus.BAD_REQUEST, "A malformed chunk size.", "invalid_request"
            ) from None
        if size == 0:
            while await line():
                pass
            return
        while len(buffer) < size + 2:
            data = await pipe.read()
            if not data:
                raise BodyError(HTTPStatus.BAD_REQUEST, "The body ended early.", "invalid_request")
            if len(buffer) >= 1024 * 1024:  # hand over what is whole, keep reading
                take = min(len(buffer), size)
                yield bytes(buffer[:take])
                del buffer[:take]
                size -= take
            buffer.extend(data)
        if size:
            yield bytes(buffer[:size])
        if buffer[size : size + 2] != b"\r\n":
            raise BodyError(HTTPStatus.BAD_REQUEST, "A malformed chunk end.", "invalid_request")
        del buffer[: size + 2]


async def serve_post(
    connection: ServerConnection, request: Request | None, process_request: ProcessRequest | None
) -> None:
    """Answer one POST request with the ``process_request`` hook's route, then close."""
    if not isinstance(request, PostRequest):
        return
    exchange = request.exchange = HttpExchange(connection, request)
    try:
        response = process_request(connection, request) if process_request else None
        if isinstance(response, Awaitable):
            response = await response
        if not exchange.responded:
            if response is None:
                await exchange.send_error(
                    HTTPStatus.METHOD_NOT_ALLOWED, "POST is not served here.", "method_not_allowed"
                )
            else:
                await exchange.send_response(response)
    except Exception:
        log.exception("answering POST %s failed", request.path[:200])
        if not exchange.responded:
            await exchange.send_error(
                HTTPStatus.INTERNAL_SERVER_ERROR,
                "The server failed to answer; see its log.",
                "server_error",
                type_="server_error",
            )
    finally:
        await exchange.finish()
