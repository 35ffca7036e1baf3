"""The shortcut's gesture: hold to talk or tap to toggle, with X11 auto-repeat ignored."""

from __future__ import annotations

import pytest

from desktop_rt.dictation.gesture import HOLD, START, STOP, TOGGLE, HotkeyGesture

GAP = 0.2


def repeats(gesture: HotkeyGesture, start: float, seconds: float, period: float = 0.04) -> list:
    """Auto-repeat as X11 sends it: release/press pairs every ``period`` seconds."""
    actions, now = [], start
    while now < start + seconds:
        gesture.release(now)
        actions.append(gesture.expire(now + 0.001))
        actions.append(gesture.press(now + 0.001))
        now += period
    return [a for a in actions if a is not None]


def test_hold_starts_on_press_and_stops_once_the_grace_period_passed():
    gesture = HotkeyGesture(HOLD, GAP)
    assert gesture.press(0.0) is START
    assert repeats(gesture, 0.5, 2.0) == []  # auto-repeat neither stops nor restarts
    deadline = gesture.release(3.0)
    assert deadline == pytest.approx(3.0 + GAP)
    assert gesture.expire(3.1) is None and gesture.on
    assert gesture.expire(deadline) is STOP and not gesture.on


def test_toggle_starts_on_one_tap_and_stops_on_the_next():
    gesture = HotkeyGesture(TOGGLE, GAP)
    assert gesture.press(0.0) is START
    gesture.release(0.1)
    assert gesture.expire(0.1 + GAP) is None and gesture.on  # still dictating after the tap
    assert gesture.press(5.0) is STOP
    assert repeats(gesture, 5.1, 1.0) == []  # holding the second tap changes nothing
    gesture.release(6.5)
    assert gesture.expire(7.0) is None and not gesture.on


def test_a_press_within_the_grace_period_continues_the_hold():
    gesture = HotkeyGesture(HOLD, GAP)
    gesture.press(0.0)
    gesture.release(1.0)
    assert gesture.press(1.05) is None  # a repeat or a quick re-press: the same hold
    assert gesture.expire(1.0 + GAP) is None and gesture.on


@pytest.mark.parametrize("trigger", [HOLD, TOGGLE])
def test_cancel_stops_only_what_was_started(trigger):
    gesture = HotkeyGesture(trigger, GAP)
    assert gesture.cancel() is None
    gesture.press(0.0)
    assert gesture.cancel() is STOP and not gesture.on
    assert gesture.cancel() is None


def test_a_bad_trigger_or_gap_is_refused():
    with pytest.raises(ValueError, match="trigger"):
        HotkeyGesture("double-tap", GAP)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="repeat_gap"):
        HotkeyGesture(HOLD, 0.0)
