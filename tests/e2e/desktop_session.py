"""A throwaway desktop for end-to-end tests: Xvfb + openbox, and a virtual microphone.

The microphone is a PulseAudio null sink: what is played into it (``paplay``) at real-time pace
comes out of its monitor, which the app opens through PortAudio and the ALSA ``pulse`` plugin,
its real capture path. Everything started here is stopped here; a missing tool fails the test
(``scripts/install.sh --test`` installs them all).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.x_desktop import x_desktop

TOOLS = ("Xvfb", "openbox", "xdotool", "xprop", "pulseaudio", "pactl", "paplay")
SINK = "e2e_mic"


def require_tools() -> None:
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"missing {', '.join(missing)}: run scripts/install.sh --test", pytrace=False)


def wait_for(what: str, check: Callable[[], object], timeout: float) -> object:
    """Poll ``check`` (another process's state: nothing to wait on) until truthy, or fail."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}", pytrace=False)


def output(args: list[str], env: dict[str, str]) -> str:
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=10)
    return done.stdout.strip() if done.returncode == 0 else ""


@contextmanager
def started(args: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("wb") as sink:
        process = subprocess.Popen(args, env=env, stdout=sink, stderr=subprocess.STDOUT)
        try:
            yield process
        finally:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(5)


@contextmanager
def desktop(tmp: Path) -> Iterator[dict[str, str]]:
    """An environment whose DISPLAY has a window manager and whose default source is virtual.

    The X side is :func:`tests.support.x_desktop.x_desktop`: a random free display checked to
    be ours, and openbox retried on a fresh Xvfb, so two runs at once do not share a server.
    """
    require_tools()
    runtime = tmp / "runtime"
    runtime.mkdir(mode=0o700)
    script = tmp / "mic.pa"
    script.write_text(
        "load-module module-native-protocol-unix auth-anonymous=1\n"
        f"load-module module-null-sink sink_name={SINK} rate=16000 channels=1\n"
        f"set-default-source {SINK}.monitor\nset-default-sink {SINK}\n"
    )
    pulse = ["pulseaudio", "-n", "-F", str(script), "--daemonize=no", "--exit-idle-time=-1"]
    with x_desktop(tmp) as display:
        env = {
            **os.environ,
            "DISPLAY": display,
            "QT_QPA_PLATFORM": "xcb",
            "XDG_RUNTIME_DIR": str(runtime),
            "PULSE_SERVER": f"unix:{runtime}/pulse/native",
            "HOME": str(tmp),
        }
        with started(pulse + ["--log-target=stderr"], env, tmp / "pulse.log"):
            wait_for("pulseaudio", lambda: SINK in output(["pactl", "list", "short"], env), 60)
            probe = "import sounddevice as s; print([d['name'] for d in s.query_devices()])"
            if "'pulse'" not in output([sys.executable, "-c", probe], env):
                pytest.fail("PortAudio has no 'pulse' device: install libasound2-plugins")
            yield env
