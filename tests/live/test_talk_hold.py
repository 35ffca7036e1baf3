"""The hold-to-talk state machine: auto-repeat pairs are one hold, judged by time alone."""

from __future__ import annotations

import pytest

from desktop_rt.live.talk_hold import HoldState, TalkHold, repeat_gap_for


def test_a_release_then_a_press_within_the_gap_is_one_hold():
    hold = TalkHold(repeat_gap=0.15)
    assert hold.press() is True  # recording starts on the press
    now = 0.5
    for _ in range(50):  # X11 auto-repeat: release/press pairs every 33 ms
        deadline = hold.release(now)
        assert deadline == pytest.approx(now + 0.15)
        assert hold.expire(now + 0.001) is False
        assert hold.press() is False
        now += 0.033
    assert hold.state is HoldState.HELD
    deadline = hold.release(now)
    assert deadline is not None
    assert hold.expire(deadline - 0.01) is False and hold.held
    assert hold.expire(deadline) is True and not hold.held


def test_a_late_expire_call_still_lets_a_press_seen_first_continue_the_hold():
    hold = TalkHold(repeat_gap=0.1)
    hold.press()
    hold.release(1.0)
    assert hold.press() is False  # seen before expire() ran, even if after the deadline
    assert hold.expire(5.0) is False and hold.state is HoldState.HELD


def test_cancel_ends_a_hold_and_presses_while_idle_start_one():
    hold = TalkHold(repeat_gap=0.1)
    assert hold.release(0.0) is None and hold.cancel() is False
    hold.press()
    assert hold.cancel() is True and hold.state is HoldState.IDLE
    assert hold.press() is True


@pytest.mark.parametrize(("rate", "gap"), [(30.0, 1 / 30 + 0.12), (25.0, 0.16), (2.0, 0.4)])
def test_the_grace_period_is_one_repeat_period_plus_a_margin(rate, gap):
    assert repeat_gap_for(rate) == pytest.approx(gap)
    assert repeat_gap_for(0.0) > 0.1
    with pytest.raises(ValueError):
        TalkHold(0.0)
