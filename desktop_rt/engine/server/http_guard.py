"""The HTTP edge under the handshake hooks: requests websockets cannot take get a JSON answer.

websockets' own request parser drops the connection on a request it cannot take (a method
other than GET, HTTP/1.0, more than 128 headers, a body) and logs every failed handshake at
ERROR with its chained tracebacks. :class:`GuardedConnection`, given to ``serve`` as
``create_connection``, reads the request itself with :func:`read_request`: those requests get
405, 400, 414 or 431 with a JSON body; a handshake the client abandons is one INFO line.
A POST to a REST path (:mod:`.rest_http`) goes through the same ``process_request`` hook and is
answered over plain HTTP/1.1 with no time limit; a websocket handshake must end within
:data:`OPEN_TIMEOUT` (the server gives ``serve`` no ``open_timeout``, which would cut uploads).
Everything after a GET request's line and headers is websockets' own protocol, unchanged.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Generator
from http import HTTPStatus
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidMessage, SecurityError
from websockets.http11 import Request, parse_headers, parse_line
from websockets.protocol import Protocol
from websockets.server import ServerProtocol

from desktop_rt.engine.server.handshake import error_body, json_rejection
from desktop_rt.engine.server.rest_http import (
    BodyPipe,
    PostRequest,
    feed_body,
    is_post_path,
    serve_post,
)

__all__ = ["GuardedConnection", "OPEN_TIMEOUT", "RequestRefused", "read_request"]

OPEN_TIMEOUT = 10.0
"""Seconds a websocket client has from connecting to the end of its handshake."""

log = logging.getLogger(__name__)

ReadLine = Callable[[int], Generator[None, None, bytes]]


class RequestRefused(Exception):
    """A request this server answers with ``status`` and an error body, then closes."""

    def __init__(self, status: HTTPStatus, message: str, code: str):
        super().__init__(message)
        self.status, self.message, self.code = status, message, code

    def body(self) -> str:
        return error_body(self.message, "invalid_request_error", self.code)


def read_request(read_line: ReadLine) -> Generator[None, None, Request]:
    """websockets' ``Request.parse``, raising :class:`RequestRefused` where it fails on a request
    it cannot take; ``EOFError`` when the client leaves first."""
    try:
        line = yield from parse_line(read_line)
    except SecurityError:
        raise RequestRefused(
            HTTPStatus.REQUEST_URI_TOO_LONG, "The request line is too long.", "uri_too_long"
        ) from None
    method, _, rest = line.partition(b" ")
    raw_path, _, version = rest.partition(b" ")
    if not version.startswith(b"HTTP/") or not raw_path:
        raise RequestRefused(HTTPStatus.BAD_REQUEST, "Not an HTTP request.", "invalid_request")
    if version != b"HTTP/1.1":
        raise RequestRefused(
            HTTPStatus.BAD_REQUEST,
            f"{version[:20].decode('ascii', 'replace')} is not served: send HTTP/1.1 requests.",
            "http_version_not_supported",
        )
    post = method == b"POST" and is_post_path(raw_path.decode("ascii", "replace"))
    if method != b"GET" and not post:
        raise RequestRefused(
            HTTPStatus.METHOD_NOT_ALLOWED,
            f"{method[:20].decode('ascii', 'replace')} is not allowed: this server answers GET "
            "only (/health, /v1/models, /v1/activity, and /v1/realtime as a websocket), and "
            "POST on /v1/audio/transcriptions and /v1/audio/translations.",
            "method_not_allowed",
        )
    try:
        headers = yield from parse_headers(read_line)
    except SecurityError:
        raise RequestRefused(
            HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
            "Too many or too long request headers.",
            "headers_too_large",
        ) from None
    except ValueError:
        raise RequestRefused(
            HTTPStatus.BAD_REQUEST, "Malformed request headers.", "invalid_request"
        ) from None
    path = raw_path.decode("ascii", "surrogateescape")
    if post:
        return PostRequest(path, headers)
    if "Transfer-Encoding" in headers or "Content-Length" in headers:
        raise RequestRefused(
            HTTPStatus.BAD_REQUEST, "A GET request has no body.", "invalid_request"
        )
    return Request(path, headers)


def _parse(protocol: ServerProtocol, pipe: Callable[[], BodyPipe]) -> Generator[None]:
    """``ServerProtocol.parse`` with :func:`read_request` reading the request; a POST
    request's body then goes to a :class:`BodyPipe` made by ``pipe``."""
    try:
        request = yield from read_request(protocol.reader.read_line)
    except RequestRefused as refused:
        response = json_rejection(protocol, refused.status, refused.body())
        if refused.status == HTTPStatus.METHOD_NOT_ALLOWED:
            response.headers["Allow"] = "GET"
        protocol.send_response(response)  # then ends the connection, discarding what follows
        yield
    except Exception as exc:  # as websockets does: no answer, the handshake fails
        protocol.handshake_exc = InvalidMessage("did not receive a valid HTTP request")
        protocol.handshake_exc.__cause__ = exc
        protocol.send_eof()
        protocol.parser = protocol.discard()
        next(protocol.parser)
        yield
    if isinstance(request, PostRequest):
        request.pipe = pipe()
        protocol.events.append(request)
        yield from feed_body(protocol, request.pipe)
    protocol.events.append(request)
    yield from Protocol.parse(protocol)


def _reasons(exc: BaseException) -> str:
    """An exception and its causes, on one line."""
    parts: list[str] = []
    cause: BaseException | None = exc
    while cause is not None and len(parts) < 5:
        parts.append(str(cause) or type(cause).__name__)
        cause = cause.__cause__
    return ": ".join(parts)


class GuardedConnection(ServerConnection):
    """A websockets ``ServerConnection`` that answers requests websockets cannot take (see the
    module docstring) and logs a failed handshake as one INFO line."""

    def __init__(self, protocol: ServerProtocol, *args: Any, **kwargs: Any) -> None:
        super().__init__(protocol, *args, **kwargs)
        protocol.parser = _parse(protocol, self._body_pipe)  # no data has arrived yet
        next(protocol.parser)

    def _body_pipe(self) -> BodyPipe:
        return BodyPipe(self.transport.pause_reading, self.transport.resume_reading)

    async def handshake(self, *args: Any, **kwargs: Any) -> None:
        try:
            async with asyncio.timeout(OPEN_TIMEOUT):
                await asyncio.wait(
                    [self.request_rcvd, self.connection_lost_waiter],
                    return_when=asyncio.FIRST_COMPLETED,
                )
                if not isinstance(self.request, PostRequest):
                    await super().handshake(*args, **kwargs)
                    return
        except TimeoutError:  # as websockets' own open_timeout: dropped, nothing logged
            self.transport.abort()
            return
        except (InvalidHandshake, ConnectionClosed, EOFError, OSError) as exc:
            peer = self.remote_address
            where = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else "a client"
            log.info("handshake with %s failed: %s", where, _reasons(exc))
            return
        await serve_post(self, self.request, args[0] if args else kwargs.get("process_request"))
