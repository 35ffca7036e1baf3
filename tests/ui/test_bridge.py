"""The engine-to-Qt bridge (desktop_rt/ui/bridge.py): level readings coalesce while one waits."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import QCoreApplication

from desktop_rt.engine.audio.sources import OPEN, SourceStatus
from desktop_rt.live.capture import LevelReading
from desktop_rt.live.transcript_recorder import CaptionTurn
from desktop_rt.ui.bridge import EngineBridge


@pytest.fixture
def bridge(qtbot):
    return EngineBridge()


def _from_a_thread(*values: object, bridge: EngineBridge) -> None:
    thread = threading.Thread(target=lambda: [bridge.publish(v) for v in values])
    thread.start()
    thread.join(10)


def test_readings_published_while_one_waits_arrive_as_one(bridge, qtbot):
    got: list[LevelReading] = []
    bridge.level.connect(got.append)
    readings = [LevelReading(-40.0 + i, 0.1 if i != 7 else 0.9, float(i)) for i in range(20)]
    readings[12] = LevelReading(-3.0, None, 12.0)  # the loudest, no speech measured
    with qtbot.waitSignal(bridge.level, timeout=5_000):
        _from_a_thread(*readings, bridge=bridge)  # the UI thread is not running meanwhile
    QCoreApplication.processEvents()  # anything else queued would arrive now: nothing is
    assert got == [LevelReading(-3.0, 0.9, 19.0)]  # loudest level, likeliest speech, last clock
    assert bridge.published["LevelReading"] == 20 and bridge.levels_delivered == 1
    with qtbot.waitSignal(bridge.level, timeout=5_000):
        _from_a_thread(LevelReading(-30.0, None, 20.0), bridge=bridge)
    assert got[-1] == LevelReading(-30.0, None, 20.0) and bridge.levels_delivered == 2


def test_other_values_are_not_coalesced(bridge, qtbot):
    turns: list[CaptionTurn] = []
    statuses: list[SourceStatus] = []
    bridge.caption.connect(turns.append)
    bridge.mic_status.connect(statuses.append)
    values = [CaptionTurn("item_1", 0, f"word {i}") for i in range(5)]
    with qtbot.waitSignal(bridge.mic_status, timeout=5_000):
        _from_a_thread(*values, SourceStatus(OPEN, "mic"), bridge=bridge)
    assert turns == values and len(statuses) == 1
    assert bridge.published == {"CaptionTurn": 5, "SourceStatus": 1}


def test_a_reading_published_on_the_ui_thread_arrives_at_once(bridge):
    got: list[LevelReading] = []
    bridge.level.connect(got.append)
    bridge.publish(LevelReading(-20.0, 0.5, 1.0))
    assert got == [LevelReading(-20.0, 0.5, 1.0)]


def test_a_value_it_does_not_carry_is_an_error(bridge):
    with pytest.raises(TypeError, match="does not carry int"):
        bridge.publish(42)
