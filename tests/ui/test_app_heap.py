"""The app's heap (desktop_rt/ui/app.py): once the model is ready, the collector leaves it alone."""

from __future__ import annotations

import gc

import pytest

from desktop_rt.ui.app import freeze_heap_when_ready
from desktop_rt.ui.bridge import ServerState


@pytest.fixture
def unfrozen():
    gc.unfreeze()
    yield
    gc.unfreeze()  # the rest of the test session collects as usual


def test_objects_alive_when_the_model_is_ready_are_not_walked_again(unfrozen):
    alive = [[] for _ in range(1000)]
    freeze_heap_when_ready(ServerState("starting", "whisper-base", message="Loading…"))
    assert gc.get_freeze_count() == 0
    freeze_heap_when_ready(ServerState("ready", "whisper-base"))
    assert gc.get_freeze_count() >= len(alive)
    walked = {id(obj) for generation in range(3) for obj in gc.get_objects(generation)}
    assert not walked & {id(obj) for obj in alive}
