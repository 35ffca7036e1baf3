"""The desktop-rt command as a user runs it: real process, real model, real files."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tests.support.clips import DATA, offline_text, read_clip, wer

CLI = [sys.executable, "-m", "desktop_rt.cli"]
WER_BOUND = 0.15  # against the model's own transcript of the same audio heard whole


def run_cli(*args, env=None):
    return subprocess.run(CLI + list(args), capture_output=True, text=True, timeout=300, env=env)


def cue_text(srt: str) -> str:
    """The words of an SRT file's cues, without their numbers and times."""
    lines = srt.splitlines()
    return " ".join(ln for ln in lines if ln.strip() and "-->" not in ln and not ln.isdigit())


def test_version():
    out = run_cli("--version")
    assert out.returncode == 0
    assert re.match(r"desktop-rt \d+\.\d+", out.stdout)


@pytest.mark.slow
def test_transcribe_writes_each_format(whisper_backend, tmp_path):
    out = run_cli("transcribe", str(DATA / "beckett.wav"), "--format", "json", "--no-live")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    offline = offline_text(whisper_backend, read_clip("beckett"))
    assert wer(offline, doc["text"]) <= WER_BOUND, doc["text"]
    assert all(s["end"] >= s["start"] for s in doc["segments"])

    srt = tmp_path / "out.srt"
    out = run_cli("transcribe", str(DATA / "ss-0880.wav"), "-o", str(srt), "--speed", "4")
    assert out.returncode == 0, out.stderr
    body = srt.read_text()
    assert body.startswith("1\n00:00:0") and "-->" in body
    offline = offline_text(whisper_backend, read_clip("ss-0880"))
    assert wer(offline, cue_text(body)) <= WER_BOUND, body


def test_transcribe_errors_are_clear(tmp_path):
    out = run_cli("transcribe", str(tmp_path / "missing.wav"))
    assert out.returncode == 1
    assert "does not exist" in out.stderr and "Traceback" not in out.stderr

    out = run_cli("transcribe", str(DATA / "beckett.wav"), "--model", str(tmp_path))
    assert out.returncode == 1
    assert "not a CTranslate2 Whisper model" in out.stderr

    out = run_cli("transcribe", str(DATA / "beckett.wav"), "--model", "no-such-model")
    assert out.returncode == 1
    assert "Unknown model 'no-such-model'" in out.stderr


def test_transcribe_help_documents_the_exit_status():
    out = run_cli("transcribe", "--help")
    assert out.returncode == 0
    assert "exit status:" in out.stdout and "3  partial:" in out.stdout
    assert "--speed" in out.stdout and "--quiet" in out.stdout


@pytest.mark.slow
def test_transcribe_a_truncated_file_exits_partial(whisper_backend, tmp_path):
    import numpy as np

    from desktop_rt.engine.audio.file_decode import AudioFileReader
    from tests.support.bad_audio import cut_mp3, write_mp3

    whole = tmp_path / "whole.mp3"
    write_mp3(whole, read_clip("beckett"))
    cut = cut_mp3(whole, tmp_path / "cut.mp3", 0.5, raising=True)
    out = run_cli("transcribe", str(cut), "--quiet")
    assert out.returncode == 3, out.stderr
    assert "warning: the file is truncated or damaged" in out.stderr
    assert "Traceback" not in out.stderr
    decoded = np.concatenate(list(AudioFileReader(cut).chunks()))  # as far as the file goes
    assert wer(offline_text(whisper_backend, decoded), out.stdout) <= WER_BOUND, out.stdout
