"""Handshake rules as pure functions: loopback, origins, the four key forms, subprotocols."""

from __future__ import annotations

import pytest
from websockets.datastructures import Headers

from desktop_rt.engine.server.handshake import (
    HandshakeGate,
    choose_subprotocol,
    host_allowed,
    host_name,
    is_loopback_host,
    key_matches,
    offered_subprotocols,
    origin_allowed,
    presented_keys,
)


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]", "LOCALHOST"]
)
def test_loopback_hosts(host):
    assert is_loopback_host(host)


@pytest.mark.parametrize(
    "host", ["0.0.0.0", "192.168.1.4", "::", "example.com", "127.0.0.1.evil.com", "", None]
)
def test_public_hosts(host):
    assert not is_loopback_host(host)


@pytest.mark.parametrize(
    "origin, allowed",
    [
        (None, True),
        ("http://localhost:5173", True),
        ("https://127.0.0.1", True),
        ("http://[::1]:8080", True),
        ("HTTP://LOCALHOST:5173", True),
        # Only the three loopback names of docs/protocol.md, not the rest of 127/8 (bug 6).
        ("http://127.0.0.2", False),
        ("https://127.1.2.3:8443", False),
        ("http://127.000.000.001", False),
        ("https://notes.example", True),
        ("https://Notes.Example/", True),
        ("https://evil.example", False),
        ("http://localhost.evil.example", False),
        ("null", False),
        ("file://", False),
        ("http://localhost:notaport", False),
        ("ws://localhost", False),
    ],
)
def test_origins(origin, allowed):
    assert origin_allowed(origin, ("https://notes.example",)) is allowed


def test_the_four_key_forms():
    offered = offered_subprotocols(
        ["realtime, openai-insecure-api-key.k4", "openai-beta.realtime-v1"]
    )
    assert offered == ["realtime", "openai-insecure-api-key.k4", "openai-beta.realtime-v1"]
    headers = Headers(
        [("Authorization", "Bearer k1"), ("Authorization", "k2"), ("X-Api-Key", "k3")]
    )
    assert presented_keys(headers, offered) == ["k1", "k2", "k3", "k4"]
    for key in ("k1", "k2", "k3", "k4"):
        assert key_matches(key, presented_keys(headers, offered))
    assert not key_matches("k5", presented_keys(headers, offered))
    assert not key_matches("k1", [])
    assert not key_matches("k1", ["ключ", "k1\udcff"])  # non-ASCII and lone surrogates never raise


@pytest.mark.parametrize(
    "value, name",
    [
        ("localhost:8777", "localhost"),
        ("LOCALHOST.", "localhost"),
        ("[::1]:8777", "::1"),
        ("[::1]", "::1"),
        ("127.0.0.1:", "127.0.0.1"),
        ("Notes.LAN:80", "notes.lan"),
        ("::1", None),
        ("[::1", None),
        ("localhost:x", None),
        ("localhost:1:2", None),
        ("", None),
        (":8777", None),
    ],
)
def test_host_names(value, name):
    assert host_name(value) == name


@pytest.mark.parametrize(
    "value, allowed, bound, ok",
    [
        ("localhost:8777", (), "127.0.0.1", True),
        ("127.0.0.9", (), "127.0.0.1", True),
        ("evil.example:8777", (), "127.0.0.1", False),
        ("notes.lan:8777", ("notes.lan",), "127.0.0.1", True),
        ("notes.lan", ("Notes.LAN:9000",), None, True),
        ("192.168.1.4:8777", (), "127.0.0.1", False),
        ("192.168.1.4:8777", (), "192.168.1.4", True),
        ("192.168.1.5:8777", (), "192.168.1.4", False),
        ("[fe80::1]:8777", (), "fe80::1", True),
        ("10.0.0.7:8777", (), "0.0.0.0", True),
        ("[fe80::2]:8777", (), "::", True),
        ("evil.example:8777", (), "0.0.0.0", False),
        ("box.lan:8777", (), "box.lan", True),
    ],
)
def test_hosts_allowed(value, allowed, bound, ok):
    assert host_allowed(value, allowed, bound) is ok


def test_gate_authorizes_only_a_matching_key():
    gate = HandshakeGate(model_id="whisper-base", api_key="secret")
    assert gate.authorized(Headers([("Authorization", "Bearer secret")]))
    assert gate.authorized(
        Headers([("Sec-WebSocket-Protocol", "realtime, openai-insecure-api-key.secret")])
    )
    assert not gate.authorized(Headers([("Authorization", "Bearer secre")]))
    assert not gate.authorized(Headers())
    assert not gate.authorized(Headers([("X-Api-Key", "secret"), ("X-Api-Key", "secret")]))
    assert not gate.authorized(
        Headers([("Authorization", "Bearer secret"), ("X-Api-Key", "secret")])
    )
    assert HandshakeGate(model_id="m").authorized(Headers())


@pytest.mark.parametrize(
    "offered, chosen",
    [
        ([], None),
        (["realtime", "openai-insecure-api-key.k"], "realtime"),
        (["openai-insecure-api-key.k", "openai-beta.realtime-v1"], "openai-beta.realtime-v1"),
        (["openai-insecure-api-key.k"], "openai-insecure-api-key.k"),
    ],
)
def test_subprotocol_choice_is_always_one_offered(offered, chosen):
    assert choose_subprotocol(offered) == chosen


def test_requested_model():
    assert (
        HandshakeGate.requested_model("/v1/realtime?intent=transcription&model=whisper-base")
        == "whisper-base"
    )
    assert HandshakeGate.requested_model("/v1/realtime?intent=transcription") is None
