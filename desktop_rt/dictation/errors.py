"""The one error type of dictation: what went wrong and what the user can do about it."""

from __future__ import annotations

from desktop_rt.errors import DesktopRtError

__all__ = ["DictationError"]


class DictationError(DesktopRtError):
    """Dictation cannot start or type (no X11 session, a taken or unknown shortcut)."""
