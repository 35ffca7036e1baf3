"""The app's GIL switch interval (desktop_rt/ui/app.py): set as asked, left alone when None."""

from __future__ import annotations

import sys

import pytest

from desktop_rt.ui.app import SWITCH_INTERVAL, set_switch_interval


@pytest.fixture
def interval():
    before = sys.getswitchinterval()
    yield before
    sys.setswitchinterval(before)  # the rest of the test session as it was


def test_a_switch_interval_is_set_for_the_whole_process(interval):
    set_switch_interval(0.001)
    assert sys.getswitchinterval() == pytest.approx(0.001)


def test_none_leaves_pythons_own(interval):
    set_switch_interval(None)
    assert sys.getswitchinterval() == interval


def test_the_app_sets_what_it_ships(interval):
    set_switch_interval()
    expected = interval if SWITCH_INTERVAL is None else SWITCH_INTERVAL
    assert sys.getswitchinterval() == pytest.approx(expected)
