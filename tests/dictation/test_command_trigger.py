"""The Wayland trigger's socket, end to end: ``desktop-rt dictate`` run as a real subprocess
against a real listener, hold and toggle; and what people meet when it cannot work: the app not
running, no runtime folder, a socket left by a dead app, a second instance, an unknown verb."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_rt.dictation.command_trigger import CommandTrigger, send_command, socket_path
from desktop_rt.dictation.errors import DictationError
from desktop_rt.dictation.gesture import HOLD, START, STOP, TOGGLE, HotkeyGesture
from tests.dictation.test_x11_hotkey import Actions

ROOT = Path(__file__).resolve().parents[2]
GAP = 0.05


def dictate(env: dict[str, str], verb: str) -> subprocess.CompletedProcess[str]:
    """``desktop-rt dictate VERB`` as the compositor would run it: a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "desktop_rt.cli", "dictate", verb],
        env={**os.environ, **env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    return {"XDG_RUNTIME_DIR": str(runtime)}


@pytest.fixture
def trigger(env):
    started: list[CommandTrigger] = []

    def make(trigger=HOLD) -> tuple[CommandTrigger, Actions]:
        actions = Actions()
        listener = CommandTrigger(HotkeyGesture(trigger, GAP), actions, env)
        listener.start()
        started.append(listener)
        return listener, actions

    yield make
    for listener in started:
        listener.stop()


def test_toggle_from_the_command_starts_then_stops(env, trigger):
    _listener, actions = trigger()
    done = dictate(env, "toggle")
    assert (done.returncode, done.stderr) == (0, "")
    assert actions.wait(1) == [START]
    assert dictate(env, "toggle").returncode == 0
    assert actions.wait(2) == [START, STOP]


def test_press_and_release_hold_and_a_repeated_press_continues(env, trigger):
    _listener, actions = trigger(HOLD)
    assert dictate(env, "press").returncode == 0
    assert actions.wait(1) == [START]
    assert dictate(env, "press").returncode == 0  # the compositor repeating the bound key
    assert dictate(env, "release").returncode == 0
    assert actions.wait(2) == [START, STOP]
    assert actions.seen == [START, STOP]


def test_in_toggle_mode_a_tap_starts_and_the_next_stops(env, trigger):
    _listener, actions = trigger(TOGGLE)
    for verb in ("press", "release"):
        assert dictate(env, verb).returncode == 0
    assert actions.wait(1) == [START]
    for verb in ("press", "release"):
        assert dictate(env, verb).returncode == 0
    assert actions.wait(2) == [START, STOP]


def test_the_socket_and_its_folder_are_private(env, trigger):
    folder = Path(env["XDG_RUNTIME_DIR"]) / "desktop-rt"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)  # left open by someone: the app closes it
    listener, _actions = trigger()
    assert listener.path == socket_path(env) == folder / "dictation.sock"
    assert stat.S_ISSOCK(listener.path.stat().st_mode)
    assert stat.S_IMODE(listener.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_when_the_app_is_not_running_the_command_says_so(env):
    done = dictate(env, "toggle")
    assert done.returncode == 1
    assert "not running with dictation on" in done.stderr
    assert "Settings > Dictation into other apps" in done.stderr


def test_without_a_runtime_folder_the_command_says_what_is_missing():
    done = dictate({"XDG_RUNTIME_DIR": ""}, "press")
    assert done.returncode == 1 and "XDG_RUNTIME_DIR" in done.stderr


def test_a_stopped_app_removes_its_socket_and_the_command_then_fails(env, trigger):
    listener, actions = trigger()
    assert dictate(env, "press").returncode == 0
    assert actions.wait(1) == [START]
    listener.stop()  # a hold in progress ends
    assert actions.seen == [START, STOP]
    assert not listener.path.exists()
    assert dictate(env, "release").returncode == 1


def test_a_socket_left_by_a_dead_app_is_replaced(env, trigger):
    path = socket_path(env)
    path.parent.mkdir(mode=0o700)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as dead:
        dead.bind(str(path))  # bound, then gone without removing it: nobody listens
    assert path.exists()
    _listener, actions = trigger()
    assert dictate(env, "toggle").returncode == 0
    assert actions.wait(1) == [START]


def test_a_second_instance_gets_a_clear_error_and_the_first_keeps_working(env, trigger):
    _first, actions = trigger()
    second = CommandTrigger(HotkeyGesture(HOLD, GAP), Actions(), env)
    with pytest.raises(DictationError, match="Another desktop-rt already listens"):
        second.start()
    second.stop()  # nothing to stop; the first's socket stays
    assert dictate(env, "toggle").returncode == 0
    assert actions.wait(1) == [START]


def test_an_unknown_verb_is_refused_with_the_ones_that_exist(env, trigger):
    _listener, actions = trigger()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(10)
        client.connect(str(socket_path(env)))
        client.sendall(b"shout\n")
        reply = client.makefile("rb").readline().decode()
    assert reply.startswith("error: unknown command 'shout'") and "toggle" in reply
    with pytest.raises(DictationError, match="Unknown dictation command"):
        send_command("shout", env)
    done = dictate(env, "shout")
    assert done.returncode == 2 and "invalid choice" in done.stderr
    assert actions.seen == []


def test_something_else_in_the_sockets_place_is_reported_not_removed(env):
    path = socket_path(env)
    path.mkdir(parents=True)  # a folder where the socket goes
    listener = CommandTrigger(HotkeyGesture(HOLD, GAP), Actions(), env)
    with pytest.raises(DictationError, match="could not replace"):
        listener.start()
    listener.stop()
    assert path.is_dir()
