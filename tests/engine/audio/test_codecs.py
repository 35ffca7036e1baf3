"""Audio decoding: wire formats, streaming resampling, files of any rate and channel count."""

from __future__ import annotations

import base64

import av
import numpy as np
import pytest

from desktop_rt.engine.audio.codecs import (
    PCMA,
    PCMU,
    AudioFormat,
    StreamResampler,
    WireDecoder,
    decode_base64_audio,
    float_to_pcm16,
    level_dbfs,
    pcm16_to_float,
)
from desktop_rt.engine.audio.file_decode import load_audio_file
from desktop_rt.errors import AudioDecodeError
from tests.support.clips import read_clip


def test_pcm16_round_trip_and_odd_length():
    x = np.array([0.0, 0.5, -0.5, -1.0], dtype=np.float32)
    assert np.allclose(pcm16_to_float(float_to_pcm16(x)), x, atol=1e-4)
    with pytest.raises(AudioDecodeError, match="even number of bytes"):
        pcm16_to_float(b"\x00\x01\x02")


def test_strict_base64():
    assert decode_base64_audio(base64.b64encode(b"abcd").decode()) == b"abcd"
    for bad in ["not base64!", "abc", 5]:
        with pytest.raises(AudioDecodeError):
            decode_base64_audio(bad)


def test_g711_known_codes():
    # ITU-T G.711: mu-law 0xFF and A-law 0xD5 are zero; the extremes are +-32124 / +-32256.
    mu = WireDecoder(AudioFormat(PCMU, 16000)).decode(bytes([0xFF, 0x7F, 0x00, 0x80]))
    assert np.allclose(mu * 32768, [0, 0, -32124, 32124])
    a = WireDecoder(AudioFormat(PCMA, 16000)).decode(bytes([0xD5, 0x55, 0x2A, 0xAA]))
    assert np.allclose(a * 32768, [8, -8, -32256, 32256])


def test_streaming_resampler_keeps_length_and_content():
    sine = np.sin(2 * np.pi * 440 * np.arange(24000) / 24000).astype(np.float32)
    r = StreamResampler(24000)
    out = np.concatenate(
        [r.process(sine[i : i + 480]) for i in range(0, len(sine), 480)]
        + [r.process(np.zeros(0, np.float32), last=True)]
    )
    assert abs(len(out) - 16000) <= 2
    # Still a 440 Hz tone: the dominant FFT bin of one second is 440.
    spectrum = np.abs(np.fft.rfft(out[:16000]))
    assert abs(int(np.argmax(spectrum)) - 440) <= 1


def test_wire_decoder_rejects_unknown_format():
    with pytest.raises(AudioDecodeError, match="unsupported audio format"):
        WireDecoder(AudioFormat("audio/opus", 48000))


def test_files_of_any_rate_and_channels(tmp_path):
    mono = read_clip("beckett")
    path = tmp_path / "stereo44k.mp3"
    with av.open(str(path), "w") as out:
        stream = out.add_stream("mp3", rate=44100, layout="stereo")
        resampler = av.AudioResampler(format="fltp", layout="stereo", rate=44100)
        frame = av.AudioFrame.from_ndarray(
            np.stack([mono, mono]).astype(np.float32), format="fltp", layout="stereo"
        )
        frame.sample_rate = 16000
        for f in resampler.resample(frame):
            for packet in stream.encode(f):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    loaded = load_audio_file(path)
    assert loaded.dtype == np.float32 and loaded.ndim == 1
    assert abs(len(loaded) / 16000 - len(mono) / 16000) < 0.1


def test_unreadable_files_are_named(tmp_path):
    with pytest.raises(AudioDecodeError, match="does not exist"):
        load_audio_file(tmp_path / "nope.wav")
    junk = tmp_path / "junk.wav"
    junk.write_bytes(b"RIFF1234WAVEjunk" * 10)
    with pytest.raises(AudioDecodeError, match="could not read audio"):
        load_audio_file(junk)


def test_level_dbfs():
    assert level_dbfs(np.zeros(100, np.float32)) == -120.0
    assert level_dbfs(np.ones(100, np.float32)) == pytest.approx(0.0)
    assert level_dbfs(np.full(100, 0.1, np.float32)) == pytest.approx(-20.0)
