"""The REST endpoint's pure parts: the multipart parser, the form fields, the answer formats."""

from __future__ import annotations

import json

import pytest

from desktop_rt.core_types import Word
from desktop_rt.engine.server.rest_formats import render, sse
from desktop_rt.engine.server.rest_multipart import MultipartError, MultipartParser, boundary_of
from desktop_rt.engine.server.rest_params import RestError, TranscriptionParams

BOUNDARY = b"----desktop-rt-boundary"


def form(*parts: tuple[str, bytes, str | None]) -> bytes:
    out = b""
    for name, value, filename in parts:
        disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
        out += b"--" + BOUNDARY + b"\r\nContent-Disposition: " + disposition.encode() + b"\r\n"
        if filename:
            out += b"Content-Type: audio/wav\r\n"
        out += b"\r\n" + value + b"\r\n"
    return out + b"--" + BOUNDARY + b"--\r\n"


AUDIO = bytes(range(256)) * 40 + b"\r\n--" + BOUNDARY[:-1] + b"\r\n"  # a near-delimiter inside


@pytest.mark.parametrize("piece", [1, 7, 1000, 1 << 20])
def test_multipart_in_any_pieces(tmp_path, piece):
    body = form(
        ("model", b"whisper-1", None),
        ("timestamp_granularities[]", b"word", None),
        ("file", AUDIO, "a.wav"),
        ("timestamp_granularities[]", b"segment", None),
    )
    parser = MultipartParser(BOUNDARY, tmp_path)
    for start in range(0, len(body), piece):
        parser.feed(body[start : start + piece])
    parser.finish()
    assert parser.fields == {
        "model": ["whisper-1"],
        "timestamp_granularities[]": ["word", "segment"],
    }
    assert parser.file is not None and parser.file.filename == "a.wav"
    assert parser.file.path.read_bytes() == AUDIO and parser.file.size == len(AUDIO)


@pytest.mark.parametrize(
    "body",
    [
        b"no boundary here",
        form(("file", AUDIO, "a.wav"))[:-30],  # cut before the closing delimiter
        b"--" + BOUNDARY + b"\r\nX-Nothing\r\n\r\nvalue\r\n--" + BOUNDARY + b"--",
        form(("file", b"1", "a.wav"), ("file", b"2", "b.wav")),
        form(("audio", b"1", "a.wav")),
        form(("prompt", b"\xff\xfe", None)),
    ],
)
def test_malformed_multipart(tmp_path, body):
    parser = MultipartParser(BOUNDARY, tmp_path)
    with pytest.raises(MultipartError):
        parser.feed(body)
        parser.finish()
    parser.close()


def test_boundary_of():
    assert boundary_of('multipart/form-data; boundary="abc"') == b"abc"
    for bad in (None, "application/json", "multipart/form-data"):
        with pytest.raises(MultipartError):
            boundary_of(bad)


def test_params_defaults_and_values():
    assert TranscriptionParams.from_fields({}) == TranscriptionParams()
    params = TranscriptionParams.from_fields(
        {
            "model": ["whisper-1"],
            "language": ["EN"],
            "prompt": ["Dashwood"],
            "temperature": ["0.2"],
            "response_format": ["verbose_json"],
            "timestamp_granularities[]": ["word"],
            "stream": ["false"],
        }
    )
    assert params == TranscriptionParams(
        "whisper-1", "en", "Dashwood", 0.2, "verbose_json", False, True
    )


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"language": ["english!"]}, "language"),
        ({"temperature": ["hot"]}, "temperature"),
        ({"stream": ["maybe"]}, "stream"),
        ({"model": ["a", "b"]}, "model"),
        ({"timestamp_granularities[]": ["char"]}, "timestamp_granularities"),
        ({"chunking_strategy": ['{"type": "server_vad"}']}, "chunking_strategy"),
    ],
)
def test_params_refused(fields, param):
    with pytest.raises(RestError) as caught:
        TranscriptionParams.from_fields(fields)
    assert caught.value.status == 400 and caught.value.param == param


WORDS = [Word(" Hello", 0.0, 0.4, 0.9), Word(" world.", 0.5, 1.0, 0.8)]


def test_render_formats():
    body, kind = render(WORDS, "json", language="en", seconds=1.2)
    assert json.loads(body) == {"text": "Hello world.", "usage": {"type": "duration", "seconds": 2}}
    assert kind == "application/json"
    assert render(WORDS, "text", language="en", seconds=1.2)[0] == b"Hello world.\n"
    assert render(WORDS, "srt", language="en", seconds=1.2)[0].startswith(b"1\n00:00:00,000 --> ")
    assert render(WORDS, "vtt", language="en", seconds=1.2)[0].startswith(b"WEBVTT")
    verbose = json.loads(render(WORDS, "verbose_json", language="en", seconds=1.2)[0])
    assert verbose["language"] == "english" and "words" not in verbose
    assert [s["text"] for s in verbose["segments"]] == [" Hello world."]
    with_words = json.loads(
        render(WORDS, "verbose_json", language="xx", seconds=1.2, with_words=True)[0]
    )
    assert with_words["language"] == "xx"
    assert with_words["words"] == [
        {"word": "Hello", "start": 0.0, "end": 0.4},
        {"word": "world.", "start": 0.5, "end": 1.0},
    ]


def test_sse_frame():
    frame = sse({"type": "transcript.text.delta", "delta": "é"})
    assert frame == 'data: {"type": "transcript.text.delta", "delta": "é"}\n\n'.encode()
