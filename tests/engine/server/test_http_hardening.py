"""The server's HTTP edge under hostile requests, over raw sockets on loopback.

One credential per request, Host names this machine (no DNS rebinding), methods, versions and
header floods get JSON answers, a damaged activity database is rotated, an abandoned handshake
is one INFO line. A silent backend stands in for the model: nothing here transcribes.
"""

from __future__ import annotations

import base64
import logging
import os
import socket

import pytest

from desktop_rt.engine.asr.backend import BackendTraits
from desktop_rt.engine.server.server import RealtimeServer, ServerConfig
from tests.support.polling import wait_until
from tests.support.rt_client import get_request, raw_http

KEY = "sk-hardening"
AUTH = f"Authorization: Bearer {KEY}"
UPGRADE = (
    "Upgrade: websocket",
    "Connection: Upgrade",
    f"Sec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}",
    "Sec-WebSocket-Version: 13",
)


class SilentBackend:
    """An AsrBackend that hears nothing."""

    name = "silent"
    traits = BackendTraits()
    detected_language = None

    def transcribe(self, audio, *, prompt=None, language=None, prefix=None):
        return []

    def close(self) -> None:
        pass


def start(tmp_path, **config) -> RealtimeServer:
    config.setdefault("activity_path", tmp_path / "activity.sqlite3")
    server = RealtimeServer(ServerConfig(port=0, **config), SilentBackend())
    server.start()
    return server


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = start(tmp_path_factory.mktemp("hardening"), api_key=KEY, allowed_hosts=("notes.lan",))
    yield srv
    srv.stop()


def get(server: RealtimeServer, path: str, *headers: str, host: str | None = None):
    return raw_http(server.port, get_request(path, host or f"127.0.0.1:{server.port}", *headers))


def assert_json_error(reply, status: int, code: str | None = None) -> dict:
    assert reply.status == status, (reply.status, reply.body[:300])
    assert reply.headers["content-type"] == "application/json"
    error = reply.json()["error"]
    assert error["message"] and (code is None or error["code"] == code), error
    return error


# ---- exactly one credential ------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        (f"X-Api-Key: {KEY}", f"X-Api-Key: {KEY}"),
        ("X-Api-Key: wrong", f"X-Api-Key: {KEY}"),
        tuple(f"X-Api-Key: guess-{i}" for i in range(100)) + (f"X-Api-Key: {KEY}",),
        (AUTH, f"X-Api-Key: {KEY}"),
        (AUTH, f"Authorization: {KEY}"),
        (
            f"Sec-WebSocket-Protocol: realtime, openai-insecure-api-key.{KEY}, openai-insecure-api-key.x",
        ),
        (AUTH, f"Sec-WebSocket-Protocol: openai-insecure-api-key.{KEY}"),
    ],
    ids=[
        "two-same",
        "wrong-then-right",
        "101-headers",
        "bearer+x-api-key",
        "two-auth",
        "two-sub",
        "bearer+sub",
    ],
)
@pytest.mark.parametrize("path", ["/v1/models", "/v1/activity", "/v1/realtime"])
def test_more_than_one_credential_is_refused(server, headers, path):
    extra = UPGRADE if path == "/v1/realtime" else ()
    error = assert_json_error(get(server, path, *headers, *extra), 401, "invalid_api_key")
    assert "once" in error["message"]


def test_one_credential_in_any_form_passes(server):
    for header in (
        AUTH,
        f"X-Api-Key: {KEY}",
        f"Sec-WebSocket-Protocol: openai-insecure-api-key.{KEY}",
    ):
        assert get(server, "/v1/models", header).status == 200
    assert get(server, "/v1/realtime", AUTH, *UPGRADE).status == 101


# ---- the Host header -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        "evil.example:{port}",
        "localhost.evil.example:{port}",
        "127.0.0.1.nip.io",
        "0.0.0.0:{port}",
        "[::2]:{port}",
        "localhost:x",
    ],
)
@pytest.mark.parametrize("path", ["/health", "/v1/models", "/v1/activity", "/v1/realtime"])
def test_a_host_that_is_not_this_machine_is_refused(server, host, path):
    extra = UPGRADE if path == "/v1/realtime" else ()
    reply = get(server, path, AUTH, *extra, host=host.format(port=server.port))
    assert_json_error(reply, 421, "host_not_allowed")


@pytest.mark.parametrize(
    "host",
    [
        "localhost:{port}",
        "LOCALHOST",
        "127.0.0.1:{port}",
        "127.0.0.1",
        "[::1]:{port}",
        "localhost.",
        "notes.lan:{port}",
        "Notes.LAN",
    ],
)
def test_loopback_and_configured_hosts_are_served(server, host):
    reply = get(server, "/v1/models", AUTH, host=host.format(port=server.port))
    assert reply.status == 200 and reply.json()["object"] == "list"


def test_no_host_or_two_hosts_is_a_bad_request(server):
    assert_json_error(raw_http(server.port, get_request("/health", None)), 400, "invalid_headers")
    two = get_request("/health", "127.0.0.1", "Host: evil.example")
    assert_json_error(raw_http(server.port, two), 400, "invalid_headers")
    two_origins = get_request(
        "/health", "127.0.0.1", "Origin: http://localhost", "Origin: http://x"
    )
    assert_json_error(raw_http(server.port, two_origins), 400, "invalid_headers")


# ---- requests websockets cannot take ---------------------------------------------------------


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "OPTIONS", "HEAD", "PATCH"])
def test_methods_other_than_get_get_405(server, method):
    request = f"{method} /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{{}}"
    reply = raw_http(server.port, request.encode())
    assert_json_error(reply, 405, "method_not_allowed")
    assert reply.headers["allow"] == "GET"


@pytest.mark.parametrize("version", ["HTTP/1.0", "HTTP/2.0", "HTTP/0.9"])
def test_http_versions_other_than_1_1_get_400(server, version):
    reply = raw_http(server.port, f"GET /health {version}\r\nHost: 127.0.0.1\r\n\r\n".encode())
    assert_json_error(reply, 400, "http_version_not_supported")


def test_300_headers_get_431_and_a_long_request_line_414(server):
    flood = [f"X-Filler-{i}: {i}" for i in range(300)]
    assert_json_error(get(server, "/health", *flood), 431, "headers_too_large")
    assert_json_error(get(server, "/health?" + "a" * 9000), 414, "uri_too_long")


def test_a_body_and_garbage_get_400(server):
    body = get_request("/health", "127.0.0.1", "Content-Length: 3")[:-2] + b"\r\nabc"
    assert_json_error(raw_http(server.port, body), 400, "invalid_request")
    assert_json_error(raw_http(server.port, b"\x16\x03\x01\x02\x00\x01\x00\r\n\r\n"), 400)
    assert get(server, "/health").status == 200  # and the server goes on


# ---- a damaged activity database -------------------------------------------------------------


def test_a_damaged_activity_database_answers_503_and_is_rotated(tmp_path):
    path = tmp_path / "activity.sqlite3"
    garbage = os.urandom(8192)
    path.write_bytes(garbage)
    server = start(tmp_path, activity_path=path)
    try:
        error = assert_json_error(get(server, "/v1/activity"), 503, "activity_unavailable")
        assert error["type"] == "server_error" and "moved" in error["message"]
        (damaged,) = tmp_path.glob("activity.damaged-*.sqlite3")
        assert damaged.read_bytes() == garbage and damaged.name in error["message"]
        reply = get(server, "/v1/activity")
        assert reply.status == 200 and reply.json() == {"object": "list", "data": []}
    finally:
        server.stop()
    assert path.exists() and path.read_bytes()[:16] == b"SQLite format 3\x00"


# ---- abandoned handshakes --------------------------------------------------------------------


def _abandon(port: int, sent: bytes) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        if sent:
            sock.sendall(sent)


def test_an_abandoned_handshake_is_one_info_line(server, caplog):
    caplog.set_level(logging.INFO)
    partial = get_request("/v1/realtime", "127.0.0.1", AUTH)[:30]
    sent = [b"", partial, b"GET /v1/realtime HTTP/1.1\r\nHost: 127.0.0.1\r\n"]
    for data in sent:
        _abandon(server.port, data)

    def failed_handshakes() -> list[logging.LogRecord]:
        return [r for r in caplog.records if "handshake with" in r.getMessage()]

    wait_until(lambda: len(failed_handshakes()) >= len(sent), timeout=10)
    failed = failed_handshakes()
    assert len(failed) == len(sent), [r.getMessage() for r in caplog.records]
    assert all(r.levelno == logging.INFO and r.exc_info is None for r in failed)
    assert all("\n" not in r.getMessage() for r in failed)
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert not loud, [(r.name, r.getMessage()) for r in loud]
