"""Shared fixtures: an isolated data dir and the real embedded model; which tests are slow.

A test that uses the real model (through these fixtures or ``make_app``) is marked ``slow``
here, so ``pytest -m "not slow"`` is the fast loop; CI runs everything. Property tests run with
no per-example deadline and no data-generation speed check: both are timings, which a slower
or busier machine can miss while what the test checks holds.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "any-machine", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("any-machine")


@pytest.fixture(scope="session", autouse=True)
def isolated_dirs(tmp_path_factory):
    """Point data and config dirs at temp folders so tests never touch a user's files."""
    root = tmp_path_factory.mktemp("desktop-rt")
    os.environ["DESKTOP_RT_DATA_DIR"] = str(root / "data")
    os.environ["DESKTOP_RT_CONFIG_DIR"] = str(root / "config")
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    return root


@pytest.fixture(scope="session")
def default_model_dir(isolated_dirs) -> Path:
    from desktop_rt.engine.models.embedded import ensure_default_model

    return ensure_default_model()


@pytest.fixture(scope="session")
def whisper_backend(default_model_dir):
    from desktop_rt.engine.asr.whisper import WhisperBackend

    backend = WhisperBackend(default_model_dir)
    yield backend
    backend.close()


REAL_MODEL_FIXTURES = frozenset({"whisper_backend", "default_model_dir", "make_app"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that loads the real model as slow (explicit marks stay as they are)."""
    for item in items:
        if REAL_MODEL_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
