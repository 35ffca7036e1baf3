"""Space held on a real X server (Xvfb, XTest): one hold, with or without detectable auto-repeat."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # Xvfb and libXtst come with scripts/install.sh --test

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def x_display():
    for number in range(140, 160):
        if not Path(f"/tmp/.X11-unix/X{number}").exists():
            break
    server = subprocess.Popen(
        ["Xvfb", f":{number}", "-screen", "0", "640x480x24"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    socket = Path(f"/tmp/.X11-unix/X{number}")
    deadline = time.monotonic() + 10
    while not socket.exists() and time.monotonic() < deadline and server.poll() is None:
        time.sleep(0.05)  # a separate process, not the Qt loop: nothing to wait on but its socket
    if not socket.exists():
        server.kill()
        pytest.fail(f"Xvfb did not start (found: {shutil.which('Xvfb')})")
    yield f":{number}"
    server.terminate()
    server.wait(10)


@pytest.mark.parametrize("detectable", ["off", "on"])
def test_a_held_space_on_x11_is_one_hold(x_display, detectable):
    env = {**os.environ, "DISPLAY": x_display, "QT_QPA_PLATFORM": "xcb"}
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.x11_hold", detectable],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["holds"] == ["down", "up"], seen
    if detectable == "on" and seen["detectable"]:
        assert seen["release"] == 1 and seen["press"] > 10  # repeats, and no false releases
    else:
        assert seen["release"] == seen["press"] > 10  # the repeats came as release/press pairs
