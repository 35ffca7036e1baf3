"""What the server decides before a websocket opens: routes, origin, API key, subprotocol.

Pure functions over header values, plus :class:`HandshakeGate`, the websockets server's
``process_request`` and ``select_subprotocol`` hooks. Plain HTTP (``/health``, ``/v1/models``,
the ``routes`` handlers) is answered here and never becomes a websocket. Order of the checks:
origin (a non-loopback browser page not allowed gets 403), route (404), API key (401; keys are
compared in constant time; ``/health`` needs none), then ``admit`` (the concurrency limits, 429).
The accepted key forms and origins are documented in docs/protocol.md ("Connecting").
"""

from __future__ import annotations

import hmac
import json
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response
from websockets.typing import Subprotocol

__all__ = [
    "REALTIME_PATH",
    "KEY_SUBPROTOCOL_PREFIX",
    "is_loopback_host",
    "is_loopback_origin",
    "origin_allowed",
    "offered_subprotocols",
    "presented_keys",
    "key_matches",
    "choose_subprotocol",
    "error_body",
    "json_response",
    "HandshakeGate",
]

REALTIME_PATH = "/v1/realtime"
KEY_SUBPROTOCOL_PREFIX = "openai-insecure-api-key."
_LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "::1", "[::1]"}


def is_loopback_host(host: str | None) -> bool:
    """True for addresses only this machine can reach (``localhost``, 127.0.0.0/8, ``::1``)."""
    if not host:
        return False
    host = host.strip().lower()
    if host in _LOOPBACK_HOSTS:
        return True
    parts = host.split(".")
    return (
        len(parts) == 4 and parts[0] == "127" and all(p.isdigit() and int(p) < 256 for p in parts)
    )


def is_loopback_origin(origin: str) -> bool:
    try:
        parts = urlsplit(origin.strip())
        hostname = parts.hostname
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and hostname is not None and is_loopback_host(hostname)


def _normalize_origin(origin: str) -> str:
    return origin.strip().rstrip("/").lower()


def origin_allowed(origin: str | None, allowed: Iterable[str] = ()) -> bool:
    """No Origin (not a browser), a loopback page, or one the user allowed in settings."""
    if origin is None:
        return True
    if is_loopback_origin(origin):
        return True
    wanted = _normalize_origin(origin)
    return any(_normalize_origin(a) == wanted for a in allowed)


def offered_subprotocols(header_values: Iterable[str]) -> list[str]:
    """The ``Sec-WebSocket-Protocol`` values, split on commas, in the client's order."""
    out: list[str] = []
    for value in header_values:
        out += [p.strip() for p in value.split(",") if p.strip()]
    return out


def presented_keys(headers: Headers | Mapping[str, str], subprotocols: Sequence[str]) -> list[str]:
    """Every key the client presented, in the four accepted forms."""
    authorization: list[str | None]
    api_key: list[str | None]
    if isinstance(headers, Headers):  # every value of a repeated header
        authorization, api_key = (
            [*headers.get_all("Authorization")],
            [*headers.get_all("X-Api-Key")],
        )
    else:
        authorization, api_key = [headers.get("Authorization")], [headers.get("X-Api-Key")]
    keys: list[str] = []
    for value in authorization:
        if not value:
            continue
        value = value.strip()
        scheme, _, rest = value.partition(" ")
        keys.append(rest.strip() if scheme.lower() == "bearer" and rest.strip() else value)
    keys += [v.strip() for v in api_key if v]
    keys += [
        p[len(KEY_SUBPROTOCOL_PREFIX) :]
        for p in subprotocols
        if p.startswith(KEY_SUBPROTOCOL_PREFIX)
    ]
    return keys


def key_matches(expected: str, presented: Iterable[str]) -> bool:
    """Constant-time comparison of each presented key with the expected one."""
    want = expected.encode("utf-8")
    ok = False
    for key in presented:
        ok |= hmac.compare_digest(want, key.encode("utf-8", "surrogateescape"))
    return ok


def choose_subprotocol(offered: Sequence[str]) -> str | None:
    """The subprotocol to answer with: ``realtime`` if offered, else the first offered one.

    A browser that offered subprotocols fails the connection unless the server selects one of
    them, so a client sending only the key subprotocol gets that one back.
    """
    if not offered:
        return None
    if "realtime" in offered:
        return "realtime"
    plain = [p for p in offered if not p.startswith(KEY_SUBPROTOCOL_PREFIX)]
    return plain[0] if plain else offered[0]


def error_body(
    message: str, type_: str, code: str | None = None, param: str | None = None, **extra: Any
) -> str:
    """The OpenAI error shape: ``{"error": {"message", "type", "code", "param", **extra}}``."""
    return json.dumps(
        {"error": {"message": message, "type": type_, "code": code, "param": param, **extra}}
    )


def json_response(connection: ServerConnection, status: HTTPStatus, body: str) -> Response:
    """An HTTP answer with a JSON body, for ``process_request``."""
    response = connection.respond(status, body)
    del response.headers["Content-Type"]
    response.headers["Content-Type"] = "application/json"
    return response


JsonObject = dict[str, Any]
RouteHandler = Callable[[Request], Awaitable[tuple[HTTPStatus, JsonObject]]]
Admit = Callable[[ServerConnection, Request], Response | None]


@dataclass
class HandshakeGate:
    """The websockets ``process_request`` / ``select_subprotocol`` hooks of one server."""

    model_id: str
    api_key: str | None = None
    allowed_origins: tuple[str, ...] = ()
    health: Callable[[], JsonObject] = field(default=lambda: {})
    created: int = field(default_factory=lambda: int(time.time()))
    model_ids: Callable[[], Sequence[str]] | None = None
    """Every model served (``/v1/models``); None: just ``model_id``."""
    admit: Admit | None = None
    """``admit(connection, request)``: None lets a websocket open, or a refusing response."""
    routes: Mapping[str, RouteHandler] = field(default_factory=dict)

    # websockets hooks ----------------------------------------------------------------------

    def process_request(
        self, connection: ServerConnection, request: Request
    ) -> Response | Awaitable[Response] | None:
        """Answer plain HTTP and refused handshakes; return None to open the websocket."""
        parts = urlsplit(request.path)
        path = parts.path.rstrip("/") or "/"
        origin = request.headers.get("Origin")
        if not origin_allowed(origin, self.allowed_origins):
            return self._json(
                connection,
                HTTPStatus.FORBIDDEN,
                error_body(
                    f"Origin {origin} may not use this server. Allow it in desktop-rt's settings "
                    f"(server > allowed origins) if you trust that page.",
                    "invalid_request_error",
                    "origin_not_allowed",
                ),
            )
        if path == "/health":
            return self._json(
                connection, HTTPStatus.OK, json.dumps({"status": "ok", **self.health()})
            )
        if path not in (REALTIME_PATH, "/v1/models", "/models", *self.routes):
            return self._json(
                connection,
                HTTPStatus.NOT_FOUND,
                error_body(
                    f"No route {parts.path}. This server offers {REALTIME_PATH} (websocket), "
                    f"/v1/models, {''.join(p + ', ' for p in self.routes)}and /health.",
                    "invalid_request_error",
                    "not_found",
                ),
            )
        if not self.authorized(request.headers):
            return self._json(
                connection,
                HTTPStatus.UNAUTHORIZED,
                error_body(
                    "Missing or wrong API key. Send it as 'Authorization: Bearer <key>' "
                    "(or X-Api-Key, or the openai-insecure-api-key.<key> subprotocol).",
                    "invalid_request_error",
                    "invalid_api_key",
                ),
            )
        if path in self.routes:
            return self._answer(connection, self.routes[path](request))
        if path != REALTIME_PATH:
            return self._json(connection, HTTPStatus.OK, json.dumps(self.models_list()))
        if self.admit is not None:
            return self.admit(connection, request)
        return None

    def select_subprotocol(
        self, connection: ServerConnection, subprotocols: Sequence[Subprotocol]
    ) -> Subprotocol | None:
        chosen = choose_subprotocol(list(subprotocols))
        return Subprotocol(chosen) if chosen is not None else None

    # helpers -------------------------------------------------------------------------------

    def authorized(self, headers: Headers) -> bool:
        if self.api_key is None:
            return True
        offered = offered_subprotocols(headers.get_all("Sec-WebSocket-Protocol"))
        return key_matches(self.api_key, presented_keys(headers, offered))

    def models_list(self) -> JsonObject:
        ids = list(self.model_ids()) if self.model_ids is not None else [self.model_id]
        return {
            "object": "list",
            "data": [
                {"id": i, "object": "model", "created": self.created, "owned_by": "desktop-rt"}
                for i in ids
            ],
        }

    async def _answer(
        self, connection: ServerConnection, pending: Awaitable[tuple[HTTPStatus, JsonObject]]
    ) -> Response:
        status, body = await pending
        return self._json(connection, status, json.dumps(body))

    @staticmethod
    def requested_model(path: str) -> str | None:
        """The ``?model=`` of a request path, if any."""
        values = parse_qs(urlsplit(path).query).get("model")
        return values[0] if values else None

    @staticmethod
    def _json(connection: ServerConnection, status: HTTPStatus, body: str) -> Response:
        return json_response(connection, status, body)
