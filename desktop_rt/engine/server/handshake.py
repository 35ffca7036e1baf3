"""What the server decides before a websocket opens: host, origin, routes, API key, subprotocol.

Pure functions over header values, plus :class:`HandshakeGate`, the websockets server's
``process_request`` and ``select_subprotocol`` hooks. Plain HTTP (``/health``, ``/v1/models``,
the ``routes`` handlers) is answered here and never becomes a websocket. Order of the checks:
Host (one, naming this machine or a configured name, else 400/421: no DNS rebinding), origin (a
non-loopback browser page not allowed gets 403), route (404), API key (exactly one credential,
else 401; compared in constant time; ``/health`` needs none), then ``admit`` (429). The rules
are documented in docs/protocol.md ("Connecting").
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import re
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response
from websockets.server import ServerProtocol
from websockets.typing import Subprotocol

__all__ = [
    "REALTIME_PATH",
    "KEY_SUBPROTOCOL_PREFIX",
    "is_loopback_host",
    "is_loopback_origin",
    "host_name",
    "host_allowed",
    "origin_allowed",
    "offered_subprotocols",
    "presented_keys",
    "key_matches",
    "choose_subprotocol",
    "error_body",
    "json_rejection",
    "json_response",
    "HandshakeGate",
]

REALTIME_PATH = "/v1/realtime"
KEY_SUBPROTOCOL_PREFIX = "openai-insecure-api-key."
_LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "::1", "[::1]"}
_LOOPBACK_ORIGIN_HOSTS = {"localhost", "127.0.0.1", "::1"}  # urlsplit's hostname: lower, no []
_WILDCARD_HOSTS = {"", "0.0.0.0", "::", "[::]"}
_PORT = re.compile(r":[0-9]*")


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
    """A page served by this machine under one of the three loopback names: ``localhost``,
    ``127.0.0.1`` or ``[::1]`` (any port, http or https). Other 127.x.x.x addresses are not
    among them: a page there must be allowed like any other origin (docs/protocol.md)."""
    try:
        parts = urlsplit(origin.strip())
        hostname = parts.hostname
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and hostname in _LOOPBACK_ORIGIN_HOSTS


def host_name(value: str) -> str | None:
    """The host of a ``Host`` header value, lower case, without port, brackets or final dot
    (``"[::1]:8777"`` -> ``"::1"``); None when it is malformed."""
    value = value.strip().lower()
    if value.startswith("["):
        host, bracket, port = value[1:].partition("]")
        if not bracket:
            return None
    else:
        host, colon, digits = value.partition(":")
        port = colon + digits
    if port and not _PORT.fullmatch(port):
        return None
    return host.removesuffix(".") or None


def _ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def host_allowed(value: str, allowed: Iterable[str] = (), bound: str | None = None) -> bool:
    """A ``Host`` this server answers: loopback, a name the user allowed (any port), or the
    address the server is bound to; bound to every interface, any IP address (an address, unlike
    a name, cannot be rebound by DNS to this machine)."""
    host = host_name(value)
    if host is None:
        return False
    if is_loopback_host(host) or any(host_name(a) == host for a in allowed):
        return True
    if bound is None or is_loopback_host(bound):
        return False
    if bound.strip().lower() in _WILDCARD_HOSTS:
        return _ip_literal(host)
    return host == bound.strip().strip("[]").lower()


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


def json_rejection(protocol: ServerProtocol, status: HTTPStatus, body: str) -> Response:
    """An HTTP answer with a JSON body that ends the connection."""
    response = protocol.reject(status, body)
    del response.headers["Content-Type"]
    response.headers["Content-Type"] = "application/json"
    return response


def json_response(connection: ServerConnection, status: HTTPStatus, body: str) -> Response:
    """An HTTP answer with a JSON body, for ``process_request``."""
    return json_rejection(connection.protocol, status, body)


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
    allowed_hosts: tuple[str, ...] = ()
    """Host names besides loopback that requests may name (a LAN name, a reverse proxy's)."""
    bound_host: str | None = None
    """The address the server listens on; a non-loopback one is accepted as a Host too."""

    # websockets hooks ----------------------------------------------------------------------

    def process_request(
        self, connection: ServerConnection, request: Request
    ) -> Response | Awaitable[Response] | None:
        """Answer plain HTTP and refused handshakes; return None to open the websocket."""
        path = urlsplit(request.path).path.rstrip("/") or "/"
        refusal = self.refusal(request.headers, path)
        if refusal is not None:
            return self._json(connection, *refusal)
        if path == "/health":
            return self._json(
                connection, HTTPStatus.OK, json.dumps({"status": "ok", **self.health()})
            )
        if path in self.routes:
            return self._answer(connection, self.routes[path](request))
        if path != REALTIME_PATH:
            return self._json(connection, HTTPStatus.OK, json.dumps(self.models_list()))
        if self.admit is not None:
            return self.admit(connection, request)
        return None

    def refusal(self, headers: Headers, path: str) -> tuple[HTTPStatus, str] | None:
        """Why a request for ``path`` is refused (status, JSON body), in the module's order."""
        hosts, origins = headers.get_all("Host"), headers.get_all("Origin")
        if len(hosts) != 1 or len(origins) > 1:
            return HTTPStatus.BAD_REQUEST, error_body(
                f"Send one Host header and at most one Origin header (this request has "
                f"{len(hosts)} and {len(origins)}).",
                "invalid_request_error",
                "invalid_headers",
            )
        if not host_allowed(hosts[0], self.allowed_hosts, self.bound_host):
            return HTTPStatus.MISDIRECTED_REQUEST, error_body(
                f"Host {hosts[0][:100]!r} is not a name this server answers to: use localhost or "
                f"127.0.0.1, or add the name to the server's allowed hosts if you trust it.",
                "invalid_request_error",
                "host_not_allowed",
            )
        origin = origins[0] if origins else None
        if not origin_allowed(origin, self.allowed_origins):
            return HTTPStatus.FORBIDDEN, error_body(
                f"Origin {str(origin)[:100]!r} may not use this server. Allow it in desktop-rt's "
                f"settings (server > allowed origins) if you trust that page.",
                "invalid_request_error",
                "origin_not_allowed",
            )
        if path == "/health":
            return None
        if path not in (REALTIME_PATH, "/v1/models", "/models", *self.routes):
            return HTTPStatus.NOT_FOUND, error_body(
                f"No route {path[:200]}. This server offers {REALTIME_PATH} (websocket), "
                f"/v1/models, {''.join(p + ', ' for p in self.routes)}and /health.",
                "invalid_request_error",
                "not_found",
            )
        credentials = len(self.credentials(headers))
        if self.api_key is not None and credentials > 1:
            return HTTPStatus.UNAUTHORIZED, error_body(
                f"Send the API key once: this request carries {credentials} credentials "
                "(Authorization, X-Api-Key and openai-insecure-api-key.<key> subprotocols).",
                "invalid_request_error",
                "invalid_api_key",
            )
        if not self.authorized(headers):
            return HTTPStatus.UNAUTHORIZED, error_body(
                "Missing or wrong API key. Send it as 'Authorization: Bearer <key>' "
                "(or X-Api-Key, or the openai-insecure-api-key.<key> subprotocol).",
                "invalid_request_error",
                "invalid_api_key",
            )
        return None

    def select_subprotocol(
        self, connection: ServerConnection, subprotocols: Sequence[Subprotocol]
    ) -> Subprotocol | None:
        chosen = choose_subprotocol(list(subprotocols))
        return Subprotocol(chosen) if chosen is not None else None

    # helpers -------------------------------------------------------------------------------

    def credentials(self, headers: Headers) -> list[str]:
        """Every key the request presents, in any of the accepted forms."""
        offered = offered_subprotocols(headers.get_all("Sec-WebSocket-Protocol"))
        return presented_keys(headers, offered)

    def authorized(self, headers: Headers) -> bool:
        """No key is set, or the request presents exactly one credential and it matches."""
        if self.api_key is None:
            return True
        keys = self.credentials(headers)
        return len(keys) == 1 and key_matches(self.api_key, keys)

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
