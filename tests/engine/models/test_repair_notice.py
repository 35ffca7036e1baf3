"""Repair notices reach every listener until it stops watching; a failing listener is skipped."""

from __future__ import annotations

import logging

from desktop_rt.engine.models.repair_notice import RepairNotice, tell_repair, watch_repairs


def test_listeners_hear_notices_until_they_stop_watching(caplog):
    heard: list[RepairNotice] = []

    def broken(_notice: RepairNotice) -> None:
        raise RuntimeError("a listener that fails")

    stop_broken = watch_repairs(broken)
    stop = watch_repairs(heard.append)
    try:
        with caplog.at_level(logging.ERROR):
            tell_repair(RepairNotice(False, "under way"))
        tell_repair(RepairNotice(True, "done"))
    finally:
        stop_broken()
        stop()
    tell_repair(RepairNotice(True, "after"))
    assert heard == [RepairNotice(False, "under way"), RepairNotice(True, "done")]
    assert any("repair listener failed" in r.getMessage() for r in caplog.records)
    stop()  # a second stop does nothing
