"""Space held on a real X server (Xvfb, XTest): one hold, with or without detectable auto-repeat,
and one hold while another window (of another app, or a dialog of ours) takes the keyboard."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from desktop_rt.ui.talk_key import LOST_MESSAGE
from tests.support.x_desktop import target_field, x_desktop, xdotool

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


class _FocusRig:
    """``tests.support.x11_focus_hold`` running on the desktop: read its lines, ask its report."""

    def __init__(self, display: str, scenario: str):
        env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.x11_focus_hold", scenario],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def expect(self, line: str, timeout: float = 30) -> None:
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        got = self.process.stdout.readline().strip() if ready else f"nothing in {timeout} s"
        assert got == line, got

    def report(self) -> dict:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write("report\n")
        self.process.stdin.flush()
        ready, _, _ = select.select([self.process.stdout], [], [], 30)
        assert ready, "no report in 30 s"
        return json.loads(self.process.stdout.readline())

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)


@pytest.fixture
def desk(tmp_path):
    with x_desktop(tmp_path) as display:
        yield display


def _hold_while_another_app_takes_focus(desk, tmp_path, rig, focus_back):
    """Space down, another app's window takes the keyboard, Space up there (or back in ours,
    once that window closed); the time of the release."""
    xdotool(desk, "keydown", "space")
    rig.expect("down")
    with target_field(desk, tmp_path / "field.txt"):  # another app's window takes the keyboard
        time.sleep(0.6)  # Space stays down meanwhile: the hold, not a wait for a result
        if not focus_back:
            xdotool(desk, "keyup", "space")
            released = time.monotonic()
            rig.expect("up")
            return released
    # the other window closed: the keyboard comes back (openbox) while Space is still down
    time.sleep(0.6)
    xdotool(desk, "keyup", "space")
    released = time.monotonic()
    rig.expect("up")
    return released


def _left_during(seen: dict, start: float, end: float) -> bool:
    """Whether the keyboard left the rig's window between ``start`` and ``end``."""
    return any(start < when < end and not ours for when, ours in seen["focus"])


@pytest.mark.parametrize("focus_back", [False, True], ids=["released_elsewhere", "focus_back"])
def test_a_hold_lasts_until_space_is_released_whichever_window_has_focus(
    desk, tmp_path, focus_back
):
    rig = _FocusRig(desk, "plain")
    try:
        rig.expect("ready")
        released = _hold_while_another_app_takes_focus(desk, tmp_path, rig, focus_back)
        seen = rig.report()
    finally:
        rig.close()
    holds = seen["holds"]
    assert [h["hold"] for h in holds] == ["down", "up"], seen  # one hold: the turn is not split
    assert _left_during(seen, holds[0]["time"], released), seen  # the scenario happened
    assert holds[1]["time"] >= released, seen  # it ended with the release, not with the focus
    assert holds[1]["active"] is focus_back, seen  # the release came where the focus was
    assert seen["messages"] == [], seen


def test_a_dialog_of_the_app_popping_up_mid_hold_neither_ends_it_nor_is_pressed(desk):
    rig = _FocusRig(desk, "dialog")
    try:
        rig.expect("ready")
        xdotool(desk, "keydown", "space")
        rig.expect("down")
        time.sleep(1.5)  # the dialog pops up 0.3 s into the hold; Space stays down
        xdotool(desk, "keyup", "space")
        released = time.monotonic()
        rig.expect("up")
        seen = rig.report()
    finally:
        rig.close()
    holds = seen["holds"]
    assert [h["hold"] for h in holds] == ["down", "up"], seen
    assert _left_during(seen, holds[0]["time"], released), seen
    assert holds[1]["time"] >= released and not holds[1]["active"], seen
    assert seen["clicks"] == 0 and seen["messages"] == [], seen


def test_without_the_key_state_a_lost_release_ends_the_hold_with_a_message(desk, tmp_path):
    rig = _FocusRig(desk, "no_reader")
    try:
        rig.expect("ready")
        xdotool(desk, "keydown", "space")
        rig.expect("down")
        with target_field(desk, tmp_path / "field.txt"):
            rig.expect("up")  # at the focus change: the release will not be seen
            xdotool(desk, "keyup", "space")
            released = time.monotonic()
        seen = rig.report()
    finally:
        rig.close()
    holds = seen["holds"]
    assert [h["hold"] for h in holds] == ["down", "up"], seen  # ended, not stuck
    assert holds[1]["time"] < released, seen  # at the focus change: the release was never seen
    assert seen["messages"] == [LOST_MESSAGE], seen
