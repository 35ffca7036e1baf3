"""``DESKTOP_RT_STALL_LOG`` on the real app (desktop_rt/ui/app.py): sampled, and quits cleanly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from desktop_rt.ui.stall_sampler import STALL_LOG_ENV
from tests.support.clips import DATA

pytestmark = pytest.mark.slow

READY = "ready to listen"


def test_the_app_samples_its_stalls_when_asked_and_reports_them_at_exit(
    default_model_dir, tmp_path
):
    log = tmp_path / "stalls.jsonl"
    env = dict(
        os.environ,
        QT_QPA_PLATFORM="offscreen",
        DESKTOP_RT_CONFIG_DIR=str(tmp_path / "config"),
        DESKTOP_RT_AUDIO_FILE=str(DATA / "ss-0870.wav"),
        HF_HUB_OFFLINE="1",
        PYTHONUNBUFFERED="1",
        **{STALL_LOG_ENV: str(log)},
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "desktop_rt.cli"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    deadline = time.monotonic() + 240
    assert proc.stderr is not None
    while time.monotonic() < deadline:  # a bounded read of the child's log
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        if READY in line:
            break
    proc.send_signal(signal.SIGTERM)
    _, rest = proc.communicate(timeout=120)
    text = "".join(lines) + rest
    assert proc.returncode == 0, text[-3000:]
    assert READY in text
    assert "sampling UI stalls over 50 ms into" in text
    if log.exists():  # stalls on a busy machine: each one a JSON line, and in the summary
        assert "UI stalls:" in text
