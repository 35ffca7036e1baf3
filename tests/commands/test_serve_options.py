"""``desktop-rt serve --cpu-budget / --max-sessions``: parsed, checked, and refused with a message."""

from __future__ import annotations

import pytest

from desktop_rt.cli import build_parser


def test_the_budget_and_session_limit_default_and_parse():
    args = build_parser().parse_args(["serve"])
    assert args.cpu_budget == 0.8 and args.max_sessions is None
    args = build_parser().parse_args(["serve", "--cpu-budget", "0.5", "--max-sessions", "12"])
    assert args.cpu_budget == 0.5 and args.max_sessions == 12


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--cpu-budget", "0", "above 0 and at most 1, not '0'"),
        ("--cpu-budget", "1.5", "at most 1, not '1.5'"),
        ("--cpu-budget", "lots", "not 'lots'"),
        ("--max-sessions", "-3", "0 or more, not '-3'"),
    ],
)
def test_a_bad_value_exits_2_naming_it(capsys, option, value, message):
    with pytest.raises(SystemExit) as caught:
        build_parser().parse_args(["serve", option, value])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert option in err and message in err
