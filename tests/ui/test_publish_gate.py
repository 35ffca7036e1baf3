"""The publish gate: values reach the bridge until the gate closes, then none, from any thread."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import Qt

from desktop_rt.ui.bridge import EngineBridge, StoreProblem
from desktop_rt.ui.publish_gate import PublishGate


def test_values_reach_the_bridge_until_the_gate_closes(qtbot):
    bridge = EngineBridge()
    gate = PublishGate(bridge.publish)
    seen: list[str] = []
    bridge.store_problem.connect(seen.append, Qt.ConnectionType.DirectConnection)
    with qtbot.waitSignal(bridge.store_problem):
        gate(StoreProblem("before"))
    assert gate.open
    gate.close()
    worker = threading.Thread(target=gate, args=(StoreProblem("after, from a thread"),))
    worker.start()
    worker.join()
    gate(StoreProblem("after"))
    assert not gate.open
    assert seen == ["before"]


def test_close_waits_for_a_publish_under_way():
    entered, release = threading.Event(), threading.Event()
    published: list[object] = []

    def slow_publish(value: object) -> None:
        entered.set()
        release.wait()
        published.append(value)

    gate = PublishGate(slow_publish)
    worker = threading.Thread(target=gate, args=("value",))
    worker.start()
    entered.wait()
    closer = threading.Thread(target=gate.close)
    closer.start()
    assert gate.open  # the close waits for the publish under way
    release.set()
    closer.join()
    worker.join()
    assert published == ["value"] and not gate.open


def test_a_value_the_bridge_does_not_carry_still_raises_to_the_publisher():
    gate = PublishGate(EngineBridge().publish)
    with pytest.raises(TypeError, match="does not carry"):
        gate(object())
