"""Whether dictation can work in this session, and a message for people when it cannot.

:func:`unavailable_reason` reads the platform and the session's environment (``DISPLAY``,
``WAYLAND_DISPLAY``, ``XDG_SESSION_TYPE``): dictation needs an X11 session; on Wayland, Windows
and macOS it returns why not (docs/design/dictation.md says what would work there).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Mapping

__all__ = ["unavailable_reason"]


def unavailable_reason(env: Mapping[str, str], platform: str = sys.platform) -> str | None:
    """None when the X11 shortcut and typing can work here; else what the user should know."""
    if not platform.startswith("linux"):
        return (
            "Dictation into other apps is not available on this system yet: it works in "
            "Linux X11 sessions."
        )
    if env.get("XDG_SESSION_TYPE") == "wayland" or (
        env.get("WAYLAND_DISPLAY") and not env.get("DISPLAY")
    ):
        return (
            "Dictation into other apps is not available on this session: Wayland lets no app "
            "read a global shortcut or type into other windows. Log in with an X11 (Xorg) "
            "session to use it."
        )
    if not env.get("DISPLAY"):
        return "Dictation into other apps is not available on this session: there is no X display."
    if importlib.util.find_spec("Xlib") is None:
        return "Dictation needs the python-xlib package: reinstall desktop-rt (scripts/install.sh)."
    return None
