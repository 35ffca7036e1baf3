"""Whether dictation can work in this session, and a message for people when it cannot.

:func:`unavailable_reason` reads the platform and the session's environment (``DISPLAY``,
``WAYLAND_DISPLAY``, ``XDG_SESSION_TYPE``, ``PATH``): an X11 session needs python-xlib; a
Wayland session needs ``wtype`` or ``ydotool`` on ``PATH`` to type (the shortcut is bound in the
compositor to ``desktop-rt dictate``); Windows and macOS need pynput (macOS's permission is
asked when dictation starts); other systems are told it works on those.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from collections.abc import Callable, Mapping

from desktop_rt.dictation.typer_choice import SessionKind, session_kind, wayland_order

__all__ = ["unavailable_reason"]

_SYSTEMS = ("linux", "win32", "darwin")


def unavailable_reason(env: Mapping[str, str], platform: str = sys.platform) -> str | None:
    """None when a trigger and a typer can work here; else what the user should know."""
    if not platform.startswith(_SYSTEMS):
        return (
            "Dictation into other apps is not available on this system yet: it works on "
            "Windows, macOS and in Linux X11 and Wayland sessions."
        )
    kind = session_kind(env, platform)
    if kind is None:
        return "Dictation into other apps is not available on this session: there is no X display."
    return _REASONS[kind](env)


def _x11_reason(env: Mapping[str, str]) -> str | None:
    if importlib.util.find_spec("Xlib") is None:
        return "Dictation needs the python-xlib package: reinstall desktop-rt (scripts/install.sh)."
    return None


def _pynput_reason(env: Mapping[str, str]) -> str | None:
    if importlib.util.find_spec("pynput") is None:
        return "Dictation needs the pynput package: reinstall desktop-rt (scripts/install.sh)."
    return None


def _wayland_reason(env: Mapping[str, str]) -> str | None:
    order = wayland_order(env)
    path = env.get("PATH", os.defpath)
    if any(shutil.which(kind.program, path=path) for kind in order):
        return None
    first, second = order
    return (
        "Dictation into other apps is not available on this Wayland session yet: it types "
        f"through wtype or ydotool, and neither is installed. Install {first.program}: "
        f"{first.hint} Or install {second.program}: {second.hint}"
    )


_REASONS: dict[SessionKind, Callable[[Mapping[str, str]], str | None]] = {
    "x11": _x11_reason,
    "wayland": _wayland_reason,
    "windows": _pynput_reason,
    "macos": _pynput_reason,
}
