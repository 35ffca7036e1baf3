"""An X11 desktop (Xvfb + openbox) per module, and a focused text field in another process."""

from __future__ import annotations

import pytest

from tests.support.x_desktop import target_field, x_desktop


@pytest.fixture(scope="module")
def x_display(tmp_path_factory):
    with x_desktop(tmp_path_factory.mktemp("x")) as name:
        yield name


@pytest.fixture
def field(x_display, tmp_path):
    with target_field(x_display, tmp_path / "field.txt") as target:
        yield target
