"""Where desktop-rt keeps its files (platformdirs), with environment overrides.

``DESKTOP_RT_DATA_DIR`` and ``DESKTOP_RT_CONFIG_DIR`` replace the platform defaults; tests and
portable installs use them. Nothing here creates directories until a caller asks for one.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

__all__ = ["APP_NAME", "data_dir", "config_dir", "models_dir"]

APP_NAME = "desktop-rt"


def data_dir() -> Path:
    override = os.environ.get("DESKTOP_RT_DATA_DIR")
    return (
        Path(override) if override else Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
    )


def config_dir() -> Path:
    override = os.environ.get("DESKTOP_RT_CONFIG_DIR")
    return (
        Path(override)
        if override
        else Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))
    )


def models_dir() -> Path:
    return data_dir() / "models"
