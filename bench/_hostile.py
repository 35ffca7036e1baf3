"""Hostile input for bench_reliability.py: websocket events that must each get an ``error`` event,
and damaged audio files for ``desktop-rt transcribe`` (``bad_files`` runs them through it).

``hostile_events(n, seed)`` yields ``(kind, frame)`` pairs, ``frame`` a text or binary websocket
frame; none of them is a valid event, so the server must answer each with one ``error`` event
and keep the session open. ``write_bad_files(folder)`` writes the damaged files and returns
``{name: path}``.
"""

from __future__ import annotations

import base64
import json
import os
import random
import struct
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import soundfile as sf

HUGE = (
    2 * 1024 * 1024
)  # characters in a "huge string" (the limits are far below; frames allow 32 MiB)
Frame = str | bytes


def _update(input_: dict) -> str:
    return json.dumps({"type": "session.update", "session": {"audio": {"input": input_}}})


def _malformed(r: random.Random) -> Frame:
    good = json.dumps({"type": "input_audio_buffer.append", "audio": "AAAA", "event_id": "x"})
    return r.choice(
        [good[: r.randrange(1, len(good) - 1)], "{", "}", "nul", "[1, 2", '{"type": }', "\x00" * 9]
    )


def _wrong_type(r: random.Random) -> Frame:
    return json.dumps(
        r.choice(
            [
                {"type": 5},
                [],
                None,
                42,
                "input_audio_buffer.commit",
                {"type": "session.update", "session": "transcription"},
                {"type": "session.update", "session": [1]},
                {"type": "input_audio_buffer.append", "audio": 123},
                {"type": "input_audio_buffer.append", "audio": ["AAAA"]},
                {"type": "input_audio_buffer.commit", "event_id": {"a": 1}},
                {"type": "session.update", "session": {"audio": {"input": {"turn_detection": 7}}}},
            ]
        )
    )


def _unknown(r: random.Random) -> Frame:
    kinds = ["response.create", "conversation.item.create", "foo.bar", "", "SESSION.UPDATE"]
    return json.dumps({"type": r.choice(kinds)} if r.random() < 0.8 else {"event_id": "no-type"})


def _bad_base64(r: random.Random) -> Frame:
    audio = r.choice(
        ["!!!not base64!!!", "AAA", "A", "====", "AAAA\x00AAAA", "é" * 8, "AAAA"]
    )  # AAAA: 3 bytes, not whole samples
    return json.dumps({"type": "input_audio_buffer.append", "audio": audio})


def _huge(r: random.Random) -> Frame:
    big = "x" * HUGE
    return r.choice(
        [
            _update({"transcription": {"prompt": big}}),
            _update({"transcription": {"language": big}}),
            _update({"transcription": {"model": big}}),
            json.dumps({"type": big}),
            json.dumps({"type": "input_audio_buffer.commit", "event_id": big}),
        ]
    )


def _wrong_rate(r: random.Random) -> Frame:
    rate = r.choice([0, -1, 1, 10**9, "24000", 24000.5, True, [24000]])
    return _update({"format": {"type": "audio/pcm", "rate": rate}})


def _bad_setting(r: random.Random) -> Frame:
    return r.choice(
        [
            _update({"transcription": {"language": "xx"}}),
            _update({"transcription": {"language": "zz-Qqqq-99"}}),
            '{"type": "session.update", "session": {"audio": {"input": {"transcription": '
            '{"prompt": "a\\ud800b"}}}}}',
            _update({"format": {"type": "audio/flac"}}),
            _update({"turn_detection": {"type": "semantic_vad_x"}}),
        ]
    )


def _out_of_order(r: random.Random) -> Frame:
    return json.dumps({"type": "input_audio_buffer.commit"})  # nothing appended: commit_empty


def _binary(r: random.Random) -> Frame:
    return r.choice(
        [
            bytes(r.randrange(256) for _ in range(r.randrange(1, 64))),
            json.dumps({"type": "input_audio_buffer.clear"}).encode(),
            b"\xff\xfe\x00",
        ]
    )


KINDS: dict[str, Callable[[random.Random], Frame]] = {
    "malformed_json": _malformed,
    "wrong_types": _wrong_type,
    "unknown_event": _unknown,
    "bad_base64": _bad_base64,
    "huge_string": _huge,
    "wrong_rate": _wrong_rate,
    "bad_setting": _bad_setting,
    "out_of_order_commit": _out_of_order,
    "binary_frame": _binary,
}
WEIGHTS = {"huge_string": 0.2}  # relative to 1 for the others: 2 MiB frames are slow to build


def hostile_events(n: int, seed: int) -> Iterator[tuple[str, Frame]]:
    r = random.Random(seed)
    names = list(KINDS)
    weights = [WEIGHTS.get(name, 1.0) for name in names]
    for _ in range(n):
        kind = r.choices(names, weights)[0]
        yield kind, KINDS[kind](r)


# ---- damaged audio files ----------------------------------------------------------------------


def _wav_float(path: Path, audio: np.ndarray) -> Path:
    sf.write(str(path), audio.astype(np.float32), 16_000, subtype="FLOAT")
    return path


def _truncated(path: Path, audio: np.ndarray, fmt: str, keep: float = 0.5) -> Path:
    sf.write(str(path), audio, 16_000, format=fmt)
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])
    return path


def _with(audio: np.ndarray, where: np.ndarray, value: float) -> np.ndarray:
    out = audio.copy()
    out[where] = value
    return out


def _huge_header(path: Path, audio: np.ndarray) -> Path:
    sf.write(str(path), audio, 16_000, subtype="PCM_16")
    data = bytearray(path.read_bytes())
    at = data.find(b"data")
    data[at + 4 : at + 8] = struct.pack("<I", 0xFFFFFFF0)  # claims 4 GB of samples
    data[4:8] = struct.pack("<I", 0xFFFFFFF8)
    path.write_bytes(bytes(data))
    return path


def _corrupt_middle(path: Path, audio: np.ndarray) -> Path:
    sf.write(str(path), audio, 16_000, format="FLAC")
    data = bytearray(path.read_bytes())
    mid = len(data) // 2
    data[mid : mid + 4096] = bytes(random.Random(3).randrange(256) for _ in range(4096))
    path.write_bytes(bytes(data))
    return path


def _zero_rate(path: Path, audio: np.ndarray) -> Path:
    sf.write(str(path), audio, 16_000, subtype="PCM_16")
    data = bytearray(path.read_bytes())
    data[24:28] = struct.pack("<I", 0)  # fmt chunk: sample rate 0
    path.write_bytes(bytes(data))
    return path


def write_bad_files(folder: Path, speech: np.ndarray) -> dict[str, Path]:
    """Twenty damaged files made from ``speech`` (float32 mono 16 kHz, a few seconds)."""
    n = len(speech)
    r = np.random.default_rng(19)
    some = r.choice(n, n // 100, replace=False)
    f = folder
    files = {
        "one NaN sample": _wav_float(f / "nan1.wav", _with(speech, np.array([n // 2]), np.nan)),
        "1% NaN": _wav_float(f / "nan1pct.wav", _with(speech, some, np.nan)),
        "1% +Inf": _wav_float(f / "inf1pct.wav", _with(speech, some, np.inf)),
        "one -Inf sample": _wav_float(f / "neginf.wav", _with(speech, np.array([n // 3]), -np.inf)),
        "all NaN": _wav_float(f / "allnan.wav", np.full(n, np.nan)),
        "int16-scaled floats": _wav_float(f / "scaled.wav", speech * 32768),
        "floats at 1e30": _wav_float(f / "huge.wav", speech * 1e30),
        "truncated WAV": _truncated(f / "trunc.wav", speech, "WAV"),
        "truncated FLAC": _truncated(f / "trunc.flac", speech, "FLAC"),
        "truncated MP3": _truncated(f / "trunc.mp3", speech, "MP3"),
        "truncated OGG": _truncated(f / "trunc.ogg", speech, "OGG"),
        "WAV cut inside its header": _truncated(f / "hdr.wav", speech, "WAV", 20 / (2 * n + 44)),
        "FLAC with 4 KiB of garbage inside": _corrupt_middle(f / "garbage.flac", speech),
        "WAV header claiming 4 GB": _huge_header(f / "bighdr.wav", speech),
        "WAV with sample rate 0": _zero_rate(f / "rate0.wav", speech),
        "zero-length WAV (header, no samples)": _wav_float(f / "zero.wav", speech[:0]),
        "empty file": _write(f / "empty.wav", b""),
        "text named .wav": _write(f / "text.wav", b"this is not audio\n" * 100),
        "random bytes named .mp3": _write(f / "random.mp3", r.bytes(50_000)),
        "PNG named .flac": _write(f / "image.flac", b"\x89PNG\r\n\x1a\n" + r.bytes(4000)),
    }
    return files


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def speech_b64(clip: np.ndarray, seconds: float) -> str:
    """The first ``seconds`` of ``clip`` (16 kHz) as base64 PCM16 at 24 kHz, the default format."""
    import soxr

    audio = soxr.resample(clip[: int(seconds * 16_000)], 16_000, 24_000)
    return base64.b64encode((np.clip(audio, -1, 1) * 32767).astype("<i2").tobytes()).decode()


# ---- damaged files through the CLI ---------------------------------------------------------------------------


def one_file(name: str, path: Path, config_dir: Path) -> dict:
    env = {**os.environ, "DESKTOP_RT_CONFIG_DIR": str(config_dir), "HF_HUB_OFFLINE": "1"}
    cmd = [
        sys.executable,
        "-m",
        "desktop_rt.cli",
        "transcribe",
        str(path),
        "-q",
        "--language",
        "en",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    message = [ln for ln in done.stderr.splitlines() if ln.strip()]
    return {
        "file": name,
        "exit": done.returncode,
        "words": len(done.stdout.split()),
        "traceback": "Traceback" in done.stderr,
        "message": " | ".join(message[-2:])[:300],
    }


def bad_files(config_dir: Path, speech: np.ndarray) -> dict:
    """Each of ``write_bad_files`` through ``desktop-rt transcribe``: exit, words, message."""
    with tempfile.TemporaryDirectory() as tmp:
        files = write_bad_files(Path(tmp), speech)
        rows = []
        for name, path in files.items():
            rows.append(one_file(name, path, config_dir))
            print(f"  {name}: exit {rows[-1]['exit']}, {rows[-1]['words']} words", file=sys.stderr)
    return {
        "files": rows,
        "tracebacks": sum(r["traceback"] for r in rows),
        "exit0_empty": sum(r["exit"] == 0 and r["words"] == 0 for r in rows),
        "exit_codes": {
            str(c): sum(r["exit"] == c for r in rows) for c in sorted({r["exit"] for r in rows})
        },
    }
