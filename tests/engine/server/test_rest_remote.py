"""Where a REST request for a proxied model goes (the end-to-end path is in
tests/engine/models/test_remote.py, against a real second server)."""

from __future__ import annotations

from desktop_rt.engine.models.proxy import UpstreamTarget
from desktop_rt.engine.server.rest_remote import rest_url

PATH = "/v1/audio/transcriptions"


def test_the_rest_url_follows_the_realtime_url():
    target = UpstreamTarget("wss://gpu.lan:8777/v1/realtime?intent=transcription&model=big")
    assert rest_url(target, PATH) == ("https://gpu.lan:8777/v1/audio/transcriptions", "big")
    plain = UpstreamTarget("ws://127.0.0.1:9/v1/realtime?model=m")
    assert rest_url(plain, "/v1/audio/translations") == (
        "http://127.0.0.1:9/v1/audio/translations",
        "m",
    )
    prefixed = UpstreamTarget("wss://proxy.example/openai/v1/realtime?model=x")
    assert rest_url(prefixed, PATH)[0] == "https://proxy.example/openai/v1/audio/transcriptions"


def test_the_form_is_sent_again_as_it_came_with_the_upstreams_model(tmp_path):
    from desktop_rt.engine.server.rest_multipart import MultipartParser, UploadedFile
    from desktop_rt.engine.server.rest_remote import RestForward

    audio = tmp_path / "upload"
    audio.write_bytes(b"RIFF\x00\r\n--not-a-boundary\x01" * 100)
    upload = UploadedFile('my "talk".wav', "audio/wav", audio, audio.stat().st_size)
    fields = {"model": ["whisper-1"], "timestamp_granularities[]": ["word", "segment"]}
    target = UpstreamTarget("ws://h:1/v1/realtime?model=big")
    head, tail = RestForward(target, PATH, fields, upload)._form("big", "b0undary")
    (tmp_path / "parsed").mkdir()
    parser = MultipartParser(b"b0undary", tmp_path / "parsed")
    parser.feed(head + audio.read_bytes() + tail)
    parser.finish()
    parser.close()
    assert parser.fields == {"model": ["big"], "timestamp_granularities[]": ["word", "segment"]}
    assert parser.file is not None and parser.file.filename == "my 'talk'.wav"
    assert parser.file.path.read_bytes() == audio.read_bytes()
