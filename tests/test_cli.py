"""The desktop-rt command as a user runs it: real process, real model, real files."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tests.support.clips import DATA

CLI = [sys.executable, "-m", "desktop_rt.cli"]


def run_cli(*args, env=None):
    return subprocess.run(CLI + list(args), capture_output=True, text=True, timeout=300, env=env)


def test_version():
    out = run_cli("--version")
    assert out.returncode == 0
    assert re.match(r"desktop-rt \d+\.\d+", out.stdout)


@pytest.mark.slow
def test_transcribe_writes_each_format(default_model_dir, tmp_path):
    out = run_cli("transcribe", str(DATA / "beckett.wav"), "--format", "json", "--no-live")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    text = doc["text"].lower()
    assert "fail" in text and "try again" in text
    assert all(s["end"] >= s["start"] for s in doc["segments"])

    srt = tmp_path / "out.srt"
    out = run_cli("transcribe", str(DATA / "ss-0880.wav"), "-o", str(srt), "--speed", "4")
    assert out.returncode == 0, out.stderr
    body = srt.read_text()
    assert body.startswith("1\n00:00:0") and "-->" in body and "young man" in body.lower()


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
def test_transcribe_a_truncated_file_exits_partial(default_model_dir, tmp_path):
    from tests.support.bad_audio import cut_mp3, write_mp3
    from tests.support.clips import read_clip

    whole = tmp_path / "whole.mp3"
    write_mp3(whole, read_clip("beckett"))
    cut = cut_mp3(whole, tmp_path / "cut.mp3", 0.5, raising=True)
    out = run_cli("transcribe", str(cut), "--quiet")
    assert out.returncode == 3, out.stderr
    assert "warning: the file is truncated or damaged" in out.stderr
    assert "Traceback" not in out.stderr and "ever tried" in out.stdout.lower()
