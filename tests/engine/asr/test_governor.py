"""ComputeGovernor: the budget over any window, spacing, fair shares, and its settings."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_rt.engine.asr.governor import (
    ComputeGovernor,
    GovernorConfig,
    PassCost,
    busy_within,
)
from tests.support.slow_machine import max_busy


def test_a_fresh_governor_lets_a_pass_start_now():
    assert ComputeGovernor().ready_at("a", 5.0) == 5.0


def test_a_pass_is_followed_by_a_pause_in_proportion_to_its_cost():
    governor = ComputeGovernor(GovernorConfig(budget=0.8))
    governor.record("a", 0.0, PassCost(wall=1.0, cpu=1.0, audio_seconds=2.0))
    # 1 s busy needs 0.25 s idle to stay at 0.8
    assert governor.ready_at("a", 1.0) == pytest.approx(1.25)
    assert governor.ready_at("a", 2.0) == 2.0


def test_the_budget_counts_cpu_not_the_time_the_thread_waited_for_a_core():
    """A pass of 1 s wall whose thread had a core for 0.5 s of it (the server and other
    sessions' work took the rest) used 0.5 s of the budget: spread at 0.8 from its start that
    is 0.625 s, so the next pass needs no pause; its stream's usage and its next estimate are
    0.5 s; the summary still reports wall time. It used to wait 0.25 s, as for 1 s of CPU."""
    governor = ComputeGovernor(GovernorConfig(budget=0.8))
    governor.record("a", 0.0, PassCost(wall=1.0, cpu=0.5, audio_seconds=2.0))
    assert governor.ready_at("a", 1.0) == pytest.approx(1.0)
    assert governor.usage("a", 1.0) == pytest.approx(0.5)
    assert governor.estimate("a") == pytest.approx(0.5)
    assert governor.summary(1.0).busy_fraction == pytest.approx(0.1)
    assert governor.summary(1.0).wall_per_pass == pytest.approx(1.0)
    governor.record("a", 1.0, PassCost(wall=1.0, cpu=0.9))  # 0.9 / 0.8: 0.125 s past its end
    assert governor.ready_at("a", 2.0) == pytest.approx(2.125)


def test_a_pass_with_no_cpu_measured_counts_its_wall_time_and_cpu_never_counts_over_it():
    assert PassCost(wall=0.4, cpu=0.0).busy == pytest.approx(0.4)
    assert PassCost(wall=0.4, cpu=0.7).busy == pytest.approx(0.4)  # CT2's other threads
    full = ComputeGovernor(GovernorConfig(budget=0.5, window_seconds=10.0))
    for start in (0.0, 2.0, 4.0, 6.0, 8.0):  # 1 s passes, each 1 s of CPU: 5 s, the budget
        full.record("a", start, PassCost(1.0, 1.0))
    half = ComputeGovernor(GovernorConfig(budget=0.5, window_seconds=10.0))
    for start in (0.0, 2.0, 4.0, 6.0, 8.0):  # the same passes with half a core each: 2.5 s
        half.record("a", start, PassCost(1.0, 0.5))
    assert full.ready_at("a", 9.0) > 9.0 + 0.5
    assert half.ready_at("a", 9.0) == pytest.approx(9.0)


def test_a_full_window_waits_until_enough_of_it_has_slid_out():
    governor = ComputeGovernor(GovernorConfig(budget=0.5, window_seconds=10.0))
    for start in (0.0, 1.0, 2.0, 3.0, 4.0):  # back to back: 5 s busy, the whole budget
        governor.record("a", start, PassCost(1.0, 1.0))
    # the next 1 s pass fits once 0 s..1 s has left the window it ends
    at = governor.ready_at("a", 5.0)
    assert at == pytest.approx(10.0)
    assert busy_within([(0, 5), (at, at + 1)], at + 1 - 10, at + 1) <= 5


def test_one_budget_means_no_spacing():
    governor = ComputeGovernor(GovernorConfig(budget=1.0))
    governor.record("a", 0.0, PassCost(3.0, 3.0))
    assert governor.ready_at("a", 3.0) == 3.0


def test_a_stream_over_its_share_waits_while_a_light_one_goes_now():
    governor = ComputeGovernor(GovernorConfig(budget=0.8, window_seconds=10.0))
    for start in (0.0, 1.7, 3.4, 5.1, 6.8):  # the heavy stream used 6.5 s of the last 10
        governor.record("heavy", start, PassCost(1.3, 1.3))
    governor.record("light", 8.2, PassCost(0.5, 0.5))
    now, active = 9.0, {"heavy", "light"}
    # the budget has room for either, but the heavy one must leave room for the light one's
    # next pass: it waits until 0.5 s of its own use has left the window
    assert governor.ready_at("light", now, active) == pytest.approx(now)
    assert governor.ready_at("heavy", now, active) == pytest.approx(9.5)
    assert governor.ready_at("heavy", now, {"heavy"}) == pytest.approx(now)
    assert governor.usage("heavy", now) == pytest.approx(6.5)
    assert governor.usage("light", now) == pytest.approx(0.5)


def test_under_its_equal_share_a_stream_may_start_a_pass_that_ends_over_it():
    governor = ComputeGovernor(GovernorConfig(budget=0.8, window_seconds=10.0))
    for start in (0.0, 3.0, 6.0):  # two streams taking turns, 1.2 s passes: 3.6 s each
        governor.record("a", start, PassCost(1.2, 1.2))
        governor.record("b", start + 1.5, PassCost(1.2, 1.2))
    # the budget has room at 9.2; "a" used 3.2 s of the window its pass would end, under its
    # 4 s share, so it goes then (it used to wait until its use plus the pass fitted: 9.6)
    assert governor.ready_at("a", 9.0, {"a", "b"}) == pytest.approx(9.2)


def test_a_flood_yields_to_a_stream_keeping_up_and_passes_once_per_window():
    governor = ComputeGovernor(GovernorConfig(budget=0.8, window_seconds=10.0, flood_share=0.1))
    governor.record("flood", 0.0, PassCost(1.0, 1.0))
    governor.record("steady", 2.0, PassCost(0.3, 0.3))
    active = {"flood", "steady"}
    # far behind (a flood) beside a stream keeping up: its next pass once its last left the window
    assert governor.ready_at("flood", 3.0, active, behind={"flood"}) == pytest.approx(10.0)
    assert governor.ready_at("steady", 3.0, active, behind={"flood"}) == pytest.approx(3.0)
    # not a flood, or alone: the usual shares
    assert governor.ready_at("flood", 3.0, active) == pytest.approx(3.0)
    assert governor.ready_at("flood", 3.0, {"flood"}, behind={"flood"}) == pytest.approx(3.0)


def test_a_flood_beside_a_stream_keeping_up_takes_no_more_than_its_flood_share():
    governor = ComputeGovernor(GovernorConfig(budget=0.8, window_seconds=10.0, flood_share=0.05))
    governor.record("flood", 0.0, PassCost(2.0, 2.0))
    governor.record("steady", 2.0, PassCost(0.5, 0.5))
    active = {"flood", "steady"}
    # 2 s passes at 5% of the time: one each 40 s, not one per 10 s window
    assert governor.ready_at("flood", 12.0, active, behind={"flood"}) == pytest.approx(40.0)
    assert governor.ready_at("flood", 12.0, {"flood"}, behind={"flood"}) == pytest.approx(12.0)


def test_room_for_a_flood_is_held_only_once_its_pass_is_due():
    def steady_ready(flood_started: float) -> float:
        config = GovernorConfig(budget=0.8, window_seconds=10.0, flood_share=0.05)
        governor = ComputeGovernor(config)
        governor.record("flood", flood_started, PassCost(2.0, 2.0))  # next due 40 s later
        for start in (32.0, 33.5, 35.0, 36.5):  # 6 s of the window before 40 s
            governor.record("steady", start, PassCost(1.5, 1.5))
        return governor.ready_at("steady", 40.0, {"flood", "steady"}, behind={"flood"})

    # the flood's pass is not due before 65 s: the steady stream may use the whole budget
    assert steady_ready(25.0) == pytest.approx(40.0)
    # it is due at 40 s: the steady stream leaves room for it (2 s), and waits until its pass
    # of 32 s has left the window its next one would end in
    assert steady_ready(0.0) == pytest.approx(42.0)


@pytest.mark.parametrize("share", [0.0, -0.1, 1.5])
def test_a_flood_share_outside_its_range_is_refused_with_the_value(share):
    with pytest.raises(ValueError, match=rf"flood share must be in \(0, 1\], not {share}"):
        GovernorConfig(flood_share=share)


def test_a_flood_share_above_the_budget_is_held_to_the_budget():
    governor = ComputeGovernor(GovernorConfig(budget=0.1, window_seconds=10.0, flood_share=0.5))
    governor.record("flood", 0.0, PassCost(2.0, 2.0))
    governor.record("steady", 2.0, PassCost(0.1, 0.1))
    assert governor.ready_at("flood", 12.0, {"flood", "steady"}, {"flood"}) == pytest.approx(20.0)


def test_alone_a_stream_may_use_the_whole_budget():
    governor = ComputeGovernor(GovernorConfig(budget=0.8, window_seconds=10.0))
    start = 0.0
    for _ in range(5):
        governor.record("heavy", start, PassCost(1.0, 1.0))
        start += 1.25
    assert governor.ready_at("heavy", start, {"heavy"}) == pytest.approx(start)


def test_with_more_streams_than_the_budget_has_passes_each_still_gets_one_per_window():
    governor = ComputeGovernor(GovernorConfig(budget=0.8, window_seconds=10.0))
    streams = [f"s{i}" for i in range(100)]
    governor.record("s0", 0.0, PassCost(0.5, 0.5))
    for key in streams[1:]:
        governor.record(key, -50.0, PassCost(0.5, 0.5))  # known costs, long ago
    active = set(streams)
    assert governor.ready_at("s1", 1.0, active) == pytest.approx(1.0)  # never used: goes now
    assert governor.ready_at("s0", 1.0, active) == pytest.approx(10.0)  # its pass left the window


def test_a_closed_stream_no_longer_holds_room():
    governor = ComputeGovernor(GovernorConfig(budget=0.8, window_seconds=10.0))
    governor.record("a", 0.0, PassCost(2.0, 2.0))
    assert governor.estimate("a") == 2.0
    governor.forget("a")
    governor.record("b", 3.0, PassCost(0.5, 0.5))
    assert governor.estimate("a") == 2.0  # an unknown stream: the costliest recent pass
    assert governor.estimate("b") == 0.5


def test_the_summary_reports_cost_per_pass_and_per_audio_second():
    governor = ComputeGovernor(GovernorConfig(window_seconds=10.0))
    governor.record("a", 0.0, PassCost(0.5, 0.4, audio_seconds=1.0))
    governor.record("a", 1.0, PassCost(1.5, 1.2, audio_seconds=3.0))
    summary = governor.summary(5.0)
    assert summary.passes == 2
    assert summary.busy_fraction == pytest.approx(0.2)
    assert summary.wall_per_pass == pytest.approx(1.0)
    assert summary.cpu_per_pass == pytest.approx(0.8)
    assert summary.wall_per_audio_second == pytest.approx(0.5)
    assert governor.summary(100.0).passes == 0


@pytest.mark.parametrize(("budget", "window"), [(0.0, 10.0), (1.5, 10.0), (-0.1, 10.0), (0.8, 0.0)])
def test_a_budget_outside_its_range_is_refused_with_the_value(budget, window):
    with pytest.raises(ValueError, match="budget"):
        GovernorConfig(budget=budget, window_seconds=window)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    costs=st.lists(st.floats(min_value=0.01, max_value=2.0), min_size=1, max_size=4, unique=True),
    budget=st.floats(min_value=0.2, max_value=1.0),
    turns=st.lists(st.integers(min_value=0, max_value=3), min_size=1, max_size=80),
    gaps=st.lists(st.floats(min_value=0.0, max_value=2.0), min_size=1, max_size=10),
)
def test_passes_started_when_ready_stay_within_the_budget_over_any_window(
    costs, budget, turns, gaps
):
    """Streams whose passes cost what they cost before (the estimate) never exceed it."""
    governor = ComputeGovernor(GovernorConfig(budget=budget, window_seconds=10.0))
    for key, cost in enumerate(costs):  # each stream's cost is known from a pass long ago
        governor.record(key, -100.0, PassCost(cost, cost))
    now, spans = 0.0, []
    for n, k in enumerate(turns):
        key = k % len(costs)
        active = {i for i in range(len(costs))}
        now = governor.ready_at(key, now + gaps[n % len(gaps)], active)
        cost = costs[key]
        governor.record(key, now, PassCost(cost, cost))
        spans.append((now, now + cost))
        now += cost
    assert max_busy(spans, 10.0) <= budget * 10.0 + 1e-6


def test_a_decode_counts_against_the_budget_and_its_own_stream_but_in_no_pass_estimate():
    """A whole-turn decode (1.5 s) beside passes of 0.3 s: stream "a"'s next pass is still
    reckoned at 0.3 s, and so is a new stream's first (it used to take the decode as its
    estimate, and wait for it to leave the window); the decode is "a"'s use, not "b"'s."""
    governor = ComputeGovernor(GovernorConfig(budget=0.8, window_seconds=10.0))
    governor.record("a", 0.0, PassCost(0.3, 0.3))
    governor.record("a", 0.3, PassCost(1.5, 1.5), decode=True)
    assert governor.estimate("a") == pytest.approx(0.3)
    assert governor.typical("a") == pytest.approx(0.3)
    assert governor.estimate("new") == pytest.approx(0.3)
    assert governor.usage("a", 2.0) == pytest.approx(1.8)
    assert governor.usage("new", 2.0) == 0.0
    assert governor.summary(2.0).busy_fraction == pytest.approx(0.18)


def test_a_stream_whose_only_turn_was_a_decode_has_no_estimate_of_its_own():
    governor = ComputeGovernor(GovernorConfig(budget=0.8, window_seconds=10.0))
    governor.record("b", 0.0, PassCost(0.4, 0.4))
    governor.record("a", 1.0, PassCost(2.0, 2.0), decode=True)
    assert governor.estimate("a") == pytest.approx(0.4)  # any stream's passes, not the decode


def test_the_pause_after_a_flush_and_its_decode_counts_both():
    """A flush's pass and the decode right after it are one busy run (as when the decode ran
    inside the flush's turn); a pass and a decode apart are spaced by the decode alone."""
    governor = ComputeGovernor(GovernorConfig(budget=0.8, window_seconds=10.0))
    governor.record("a", 0.0, PassCost(0.4, 0.4))
    governor.record("a", 0.4, PassCost(0.6, 0.6), decode=True)
    assert governor.ready_at("a", 1.0) == pytest.approx(1.0 + 1.0 * 0.25)
    apart = ComputeGovernor(GovernorConfig(budget=0.8, window_seconds=10.0))
    apart.record("a", 0.0, PassCost(0.4, 0.4))
    apart.record("b", 2.0, PassCost(0.6, 0.6), decode=True)
    assert apart.ready_at("a", 2.6) == pytest.approx(2.6 + 0.6 * 0.25)


def test_a_decode_between_passes_leaves_the_spacing_after_a_pass_as_it_was():
    governor = ComputeGovernor(GovernorConfig(budget=0.8, window_seconds=10.0))
    governor.record("a", 0.0, PassCost(0.4, 0.4), decode=True)
    governor.record("b", 0.4, PassCost(0.4, 0.4))  # a pass right after a decode: its own run
    assert governor.ready_at("b", 0.8) == pytest.approx(0.8 + 0.4 * 0.25)
