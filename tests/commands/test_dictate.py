"""``desktop-rt dictate`` through :func:`desktop_rt.cli.main`: 0 when the app took the command,
1 and a message on stderr when no app listens; the verbs argparse accepts."""

from __future__ import annotations

import pytest

from desktop_rt.cli import build_parser, main
from desktop_rt.dictation.command_trigger import CommandTrigger
from desktop_rt.dictation.gesture import HOLD, START, HotkeyGesture
from tests.dictation.test_x11_hotkey import Actions


def test_the_command_reaches_a_listening_app(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    actions = Actions()
    listener = CommandTrigger(
        HotkeyGesture(HOLD, 0.05), actions, {"XDG_RUNTIME_DIR": str(tmp_path)}
    )
    listener.start()
    try:
        assert main(["dictate", "press"]) == 0
        assert actions.wait(1) == [START]
    finally:
        listener.stop()
    assert capsys.readouterr().err == ""


def test_without_an_app_it_exits_1_saying_why(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    assert main(["dictate", "toggle"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("desktop-rt: desktop-rt is not running with dictation on")
    assert str(tmp_path / "desktop-rt" / "dictation.sock") in err


def test_only_the_three_verbs_parse():
    parser = build_parser()
    for verb in ("press", "release", "toggle"):
        assert parser.parse_args(["dictate", verb]).verb == verb
    with pytest.raises(SystemExit):
        parser.parse_args(["dictate", "hold"])
