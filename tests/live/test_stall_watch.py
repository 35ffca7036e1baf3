"""The audio watchdog: silent once after the limit while open, back once blocks return."""

from __future__ import annotations

from desktop_rt.live.stall_watch import StallWatch


def test_silent_once_then_back_once():
    watch = StallWatch(limit=1.0)
    assert watch.check(100.0) is None  # not open yet: nothing to watch
    watch.opened(100.0)
    watch.arrived(100.5)
    assert watch.check(101.4) is None
    assert watch.check(101.6) == "silent" and watch.silent
    assert watch.check(105.0) is None  # said once
    watch.arrived(105.1)
    assert watch.check(105.2) == "back" and not watch.silent
    assert watch.check(105.3) is None


def test_a_closed_or_lost_source_is_not_silent():
    watch = StallWatch(limit=0.5)
    watch.opened(0.0)
    watch.closed()
    assert watch.check(10.0) is None
    watch.opened(10.0)  # reopened: the limit counts from the open
    assert watch.check(10.4) is None and watch.check(10.6) == "silent"
