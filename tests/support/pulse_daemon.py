"""A real PulseAudio daemon for the tests of system-audio capture, and a player for it.

:func:`pulse_daemon` starts one user daemon per test process (a private runtime dir,
``--exit-idle-time=-1``, anonymous auth) with a 48 kHz stereo null sink as the default output,
like a sound card, and points this process at it (``PULSE_SERVER``): soundcard connects once, at
its import, so one daemon serves every test of the process. :func:`play` writes an eval clip
into a sink at real-time pace with ``paplay`` (:func:`play_as`: as a named application);
:func:`from_speech` trims what a capture heard before the sound. A daemon that cannot start fails
the test.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from tests.support.clips import DATA

SPEAKERS = "speakers"
_TOOLS = ("pulseaudio", "pactl", "paplay")


@dataclass(frozen=True)
class PulseDaemon:
    runtime: Path
    env: dict[str, str]
    log: Path

    def pactl(self, *args: str) -> str:
        done = subprocess.run(
            ["pactl", *args], env=self.env, capture_output=True, text=True, timeout=10
        )
        if done.returncode != 0:
            pytest.fail(f"pactl {' '.join(args)} failed: {done.stderr.strip()}", pytrace=False)
        return done.stdout.strip()

    def add_sink(self, name: str, rate: int = 48000, channels: int = 2) -> str:
        """Load another null sink (an output) named ``name``; returns its module index."""
        return self.pactl(
            "load-module",
            "module-null-sink",
            f"sink_name={name}",
            f"rate={rate}",
            f"channels={channels}",
            f"sink_properties=device.description={name}",
        )


_daemon: PulseDaemon | None = None


def pulse_daemon() -> PulseDaemon:
    """The test process's PulseAudio daemon, started on first use (fails the test if it cannot)."""
    global _daemon
    if _daemon is not None:
        return _daemon
    missing = [tool for tool in _TOOLS if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"missing {', '.join(missing)}: run scripts/install.sh --test", pytrace=False)
    home = Path(tempfile.mkdtemp(prefix="drt-pulse-"))
    runtime = home / "runtime"
    runtime.mkdir(mode=0o700)
    socket = runtime / "pulse" / "native"
    env = {
        **os.environ,
        "XDG_RUNTIME_DIR": str(runtime),
        "PULSE_SERVER": f"unix:{socket}",
        "HOME": str(home),
    }
    script = home / "default.pa"
    script.write_text(
        "load-module module-native-protocol-unix auth-anonymous=1\n"
        f"load-module module-null-sink sink_name={SPEAKERS} rate=48000 channels=2 "
        f"sink_properties=device.description=Speakers\nset-default-sink {SPEAKERS}\n"
    )
    log = home / "pulse.log"
    args = ["pulseaudio", "-n", "-F", str(script), "--daemonize=no", "--exit-idle-time=-1"]
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [*args, "--log-target=stderr"], env=env, stdout=sink, stderr=subprocess.STDOUT
        )
    atexit.register(_stop, process, home)
    deadline = time.monotonic() + 20
    while not socket.exists() or SPEAKERS not in _sinks(env):
        if process.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"PulseAudio did not start: {log.read_text()[-2000:]}", pytrace=False)
        time.sleep(0.1)  # another process's state: nothing to wait on
    os.environ["PULSE_SERVER"] = env["PULSE_SERVER"]  # soundcard connects here at import
    _daemon = PulseDaemon(runtime, env, log)
    return _daemon


def _sinks(env: dict[str, str]) -> str:
    done = subprocess.run(["pactl", "list", "short", "sinks"], env=env, capture_output=True)
    return done.stdout.decode() if done.returncode == 0 else ""


def _stop(process: subprocess.Popen[bytes], home: Path) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
    shutil.rmtree(home, ignore_errors=True)


def play(daemon: PulseDaemon, clip: str | Path, sink: str = SPEAKERS) -> subprocess.Popen[bytes]:
    """Start ``paplay`` writing ``clip`` (an eval clip name or a wav path) into ``sink``."""
    path = clip if isinstance(clip, Path) else DATA / f"{clip}.wav"
    return subprocess.Popen(
        ["paplay", f"--device={sink}", str(path)],
        env=daemon.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def play_as(daemon: PulseDaemon, clip: str | Path, application: str) -> subprocess.Popen[bytes]:
    """Start ``paplay`` writing ``clip`` into the default output as the application ``application``.

    At 50 ms latency, as call and media apps play: paplay's default 2 s buffer is rendered into
    the sink at once, before a monitor of the new stream could attach."""
    path = clip if isinstance(clip, Path) else DATA / f"{clip}.wav"
    return subprocess.Popen(
        ["paplay", "--latency-msec=50", f"--property=application.name={application}", str(path)],
        env=daemon.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def from_speech(audio: np.ndarray) -> np.ndarray:
    """``audio`` from 0.1 s before its first sound: the same start for a clip and its capture."""
    first = int(np.argmax(np.abs(audio) > 0.01))
    return audio[max(0, first - 1600) :]
