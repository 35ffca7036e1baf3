"""A throwaway desktop for end-to-end tests: Xvfb + openbox, and a virtual microphone.

The microphone is a PulseAudio null sink: what is played into it (``paplay``) at real-time pace
comes out of its monitor, which the app opens through PortAudio and the ALSA ``pulse`` plugin,
its real capture path. :func:`running_app` starts ``desktop-rt gui`` there on its own settings
and data (faulthandler on, so a crash leaves its stacks in the log), yields once its window is
up and its microphone delivers audio (on a loaded machine the stream's first block can come
seconds after it was opened, and what is played into the sink before that is never captured),
and fails at once, with the log, if the app exits before that;
:func:`quit_app` quits it as logout does and asserts a clean exit. Everything started here is
stopped here; a missing tool fails the test (``scripts/install.sh --test`` installs them all).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest

from tests.support.x_desktop import x_desktop

TOOLS = ("Xvfb", "openbox", "xdotool", "xprop", "pulseaudio", "pactl", "paplay")
SINK = "e2e_mic"


def require_tools() -> None:
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"missing {', '.join(missing)}: run scripts/install.sh --test", pytrace=False)


T = TypeVar("T")


def wait_for(what: str, check: Callable[[], T], timeout: float) -> T:
    """Poll ``check`` (another process's state: nothing to wait on) until truthy, or fail."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    pytest.fail(f"timed out after {timeout:.0f} s waiting for {what} ({load()})", pytrace=False)


def load() -> str:
    """The machine's load, for failure messages: real-time tests starve on an overloaded one."""
    one, five, fifteen = os.getloadavg()
    cores = os.cpu_count() or 1
    return f"load average {one:.1f} {five:.1f} {fifteen:.1f} on {cores} cores"


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


@dataclass(frozen=True)
class RunningApp:
    """``desktop-rt gui`` on the desktop: its process, environment, window id and log."""

    process: subprocess.Popen[bytes]
    env: dict[str, str]
    window: str
    log: Path
    history: Path

    def log_tail(self) -> str:
        return f"{load()}\n" + self.log.read_text(errors="replace")[-3000:]


def _until_exit(app: subprocess.Popen[bytes], log: Path, check: Callable[[], T]) -> Callable[[], T]:
    """``check``, but a failed test with the app's log as soon as the app has exited."""

    def checked() -> T:
        if app.poll() is not None:
            tail = log.read_text(errors="replace")[-3000:]
            pytest.fail(f"the app exited ({app.returncode}) early:\n{tail}", pytrace=False)
        return check()

    return checked


@contextmanager
def running_app(tmp: Path, mode: str) -> Iterator[RunningApp]:
    """The app in ``mode`` ("push_to_talk", "hands_free") reading the virtual microphone."""
    (tmp / "config").mkdir()
    settings = {
        "version": 3,
        "audio": {"mode": mode, "input_device": "pulse"},
        "transcription": {"language": "en"},
        "server": {"port": 0},
    }
    (tmp / "config" / "settings.json").write_text(json.dumps(settings))
    with desktop(tmp) as env:
        env = {
            **env,
            "DESKTOP_RT_DATA_DIR": str(tmp / "data"),
            "DESKTOP_RT_CONFIG_DIR": str(tmp / "config"),
            "PYTHONFAULTHANDLER": "1",  # a crash writes every thread's stack to the log
        }
        log = tmp / "app.log"
        gui = [sys.executable, "-m", "desktop_rt.cli", "gui"]
        with started(gui, env, log) as app:
            find = ["xdotool", "search", "--onlyvisible", "--name", "live captions$"]
            shown = _until_exit(app, log, lambda: output(find, env).split()[:1])
            window = wait_for("the window", shown, 60)[0]
            reading = _until_exit(
                app, log, lambda: output(["pactl", "list", "short", "source-outputs"], env)
            )
            wait_for("the app to open the microphone", reading, 120)
            flowing = _until_exit(
                app, log, lambda: "first audio" in log.read_text(errors="replace")
            )
            wait_for("the app's microphone to deliver audio", flowing, 120)
            yield RunningApp(app, env, window, log, tmp / "data" / "history.sqlite3")


def wait_while_running(app: RunningApp, what: str, check: Callable[[], T], timeout: float) -> T:
    """:func:`wait_for`, failing at once (with the log) if the app exits meanwhile."""
    return wait_for(what, _until_exit(app.process, app.log, check), timeout)


def wait_while_progressing(
    app: RunningApp,
    done: Callable[[], bool],
    progress: Callable[[], object],
    stall: float,
) -> bool:
    """Wait for ``done`` for as long as ``progress()`` keeps changing; whether it came.

    False once ``progress()`` has not changed for ``stall`` seconds (stuck, or nothing left to
    do); fails the test if the app exits. For waits on the engine: on a loaded machine it runs
    behind real time (it is niced below other work), and how far behind is for bench/; the
    test then says what was lost (:func:`audio_accounting`) before what is missing.
    """
    check = _until_exit(app.process, app.log, done)
    last, since = progress(), time.monotonic()
    while not check():
        now = progress()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since > stall:
            return False
        time.sleep(0.5)  # another process's state: nothing to wait on but polling
    return True


CAPTURED = re.compile(r"capture from .* stopped: ([0-9.]+) s captured")


def audio_accounting(app: RunningApp) -> tuple[float, float]:
    """Seconds the capture took in, and seconds the window's sessions accepted, once it quit.

    The first from the capture's stop line in the log, the second from the activity log's
    ``audio_seconds`` (audio a session received; what it dropped is not counted). Hands-free
    every captured block goes to the session, so they differ by what the session dropped: a
    microphone cannot wait, and audio beyond the engine's backlog bound is dropped.
    """
    captured = sum(float(m) for m in CAPTURED.findall(app.log.read_text(errors="replace")))
    activity = app.history.with_name("activity.sqlite3")
    with sqlite3.connect(f"file:{activity}?mode=ro", uri=True, timeout=5) as conn:
        query = "SELECT COALESCE(SUM(audio_seconds), 0) FROM activity WHERE client = 'local'"
        taken = float(conn.execute(query).fetchone()[0])
    return captured, taken


def quit_app(app: RunningApp) -> None:
    """SIGTERM, as logout sends: the app must save, stop and exit 0 within a minute."""
    app.process.send_signal(signal.SIGTERM)
    assert app.process.wait(60) == 0, app.log_tail()
