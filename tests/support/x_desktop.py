"""A throwaway X11 desktop for tests: Xvfb on a free display with openbox, and xdotool.

:func:`x_desktop` starts both and yields the ``DISPLAY`` name; :func:`target_field` runs
another application with a focused text field (``tests/support/dictation_target.py``);
everything started is stopped. A missing tool fails the test (``scripts/install.sh --test``
installs them all).
"""

from __future__ import annotations

import os
import random
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

TOOLS = ("Xvfb", "openbox", "xdotool", "xprop")


def require_tools() -> None:
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"missing {', '.join(missing)}: run scripts/install.sh --test", pytrace=False)


def x_output(args: list[str], display: str) -> str:
    env = {**os.environ, "DISPLAY": display}
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=10)
    return done.stdout.strip() if done.returncode == 0 else ""


GEOMETRY = (1032, 776)  # unusual on purpose: a server answering with it is ours


def _start_xvfb(log_path: Path, *extra: str) -> tuple[subprocess.Popen[bytes], str]:
    """Xvfb on a random free display number, checked to be ours by its screen size.

    Not ``-displayfd``: it takes the lowest free number, and a low number may be served by an
    X server of another sandbox through the shared abstract socket namespace.
    """
    for _attempt in range(8):
        number = random.randrange(300, 3000)
        if Path(f"/tmp/.X{number}-lock").exists() or Path(f"/tmp/.X11-unix/X{number}").exists():
            continue
        name = f":{number}"
        screen = f"{GEOMETRY[0]}x{GEOMETRY[1]}x24"
        with log_path.open("wb") as log:
            xvfb = subprocess.Popen(
                ["Xvfb", name, "-screen", "0", screen, "-nolisten", "tcp", *extra],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        expected = f"{GEOMETRY[0]} {GEOMETRY[1]}"
        deadline = time.monotonic() + 30
        while xvfb.poll() is None and time.monotonic() < deadline:
            if x_output(["xdotool", "getdisplaygeometry"], name) == expected:
                return xvfb, name
            time.sleep(0.05)  # another process: nothing to wait on but polling
        _stop_text(xvfb)
    pytest.fail(f"Xvfb did not start: {log_path.read_text()[-2000:]}", pytrace=False)


def _start_openbox(name: str, log_path: Path) -> subprocess.Popen[bytes] | None:
    """openbox on ``name``, once it manages the screen (None if it did not within 30 s)."""
    env = {**os.environ, "DISPLAY": name}
    with log_path.open("wb") as log:
        openbox = subprocess.Popen(
            ["openbox", "--sm-disable"], env=env, stdout=log, stderr=subprocess.STDOUT
        )
    wm = ["xprop", "-root", "_NET_SUPPORTING_WM_CHECK"]
    deadline = time.monotonic() + 30
    while openbox.poll() is None and time.monotonic() < deadline:
        if "window id" in x_output(wm, name):
            return openbox
        time.sleep(0.05)  # another process: nothing to wait on but polling
    _stop_text(openbox)
    return None


@contextmanager
def x_desktop(logs: Path) -> Iterator[str]:
    """Xvfb (a free display number) and openbox; yields the display name, e.g. ``":1234"``.

    Tried three times: on a shared machine an X server can vanish under a starting client.
    """
    require_tools()
    for attempt in range(3):
        xvfb, name = _start_xvfb(logs / "xvfb.log")
        openbox = _start_openbox(name, logs / f"openbox-{attempt}.log")
        if openbox is not None:
            break
        _stop_text(xvfb)
    else:
        log = (logs / "openbox-2.log").read_text()[-2000:]
        pytest.fail(f"openbox did not start on a fresh Xvfb three times: {log}", pytrace=False)
    try:
        yield name
    finally:
        _stop_text(openbox)
        _stop_text(xvfb)


@contextmanager
def x_server(logs: Path, *extra: str) -> Iterator[str]:
    """Xvfb alone with ``extra`` server arguments (``"-extension", "RECORD"``); yields its name."""
    require_tools()
    xvfb, name = _start_xvfb(logs / "xvfb-bare.log", *extra)
    try:
        yield name
    finally:
        _stop_text(xvfb)


class TargetField:
    """The text field of ``tests/support/dictation_target.py``, running as another process."""

    def __init__(self, display: str, out: Path, times: Path | None = None):
        self.out = out
        env = {**os.environ, "DISPLAY": display}
        root = Path(__file__).resolve().parents[2]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.dictation_target", str(out)]
            + ([str(times)] if times is not None else []),
            env=env,
            cwd=root,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], 30)
        line = self.process.stdout.readline().strip() if ready else "no answer in 30 s"
        if line != "ready":
            _stop_text(self.process)
            pytest.fail(
                f"the target window did not start ({line!r}): it needs Tk (python3-tk, "
                "scripts/install.sh --test) and the display",
                pytrace=False,
            )

    def text(self) -> str:
        return self.out.read_text(encoding="utf-8") if self.out.exists() else ""

    def wait_text(self, expected: str, timeout: float = 20) -> str:
        """Poll the other process's field until it holds ``expected``; fail with what it holds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.text() != expected:
            time.sleep(0.05)
        text = self.text()
        assert text == expected, f"the field holds {text!r}, expected {expected!r}"
        return expected

    def close(self) -> None:
        _stop_text(self.process)


def _stop_text(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


@contextmanager
def target_field(display: str, out: Path, times: Path | None = None) -> Iterator[TargetField]:
    field = TargetField(display, out, times)
    try:
        yield field
    finally:
        field.close()


def xdotool(display: str, *args: str) -> None:
    env = {**os.environ, "DISPLAY": display}
    subprocess.run(["xdotool", *args], env=env, check=True, timeout=10)
