"""Text the history view shows: export format names, turn times, session labels, error messages."""

from __future__ import annotations

import logging

from desktop_rt.errors import DesktopRtError
from desktop_rt.history.store import SessionRow

__all__ = ["DESCRIPTIONS", "FORMAT_NAMES", "clock", "session_label", "error_message"]

log = logging.getLogger("desktop_rt.ui.widgets.history_view")

DESCRIPTIONS = {
    "search": ("Search sessions", "Shows the sessions whose title or text has this."),
    "sessions": ("Saved sessions", "Saved sessions, newest first."),
    "turns": (
        "Turns",
        "The turns of the selected session, with their start times. Double-click a turn or "
        "press F2 to correct it.",
    ),
    "rename_button": ("Rename session", "Gives the selected session a title."),
    "delete_button": ("Delete session", "Deletes the selected session and its text."),
    "copy_turn_button": ("Copy turn", "Copies the selected turns' text."),
    "copy_all_button": ("Copy all", "Copies the whole text of the session."),
    "export_button": ("Export", "Saves the session as text or subtitles."),
}
"""The history view's widgets (attribute names): their accessible names and descriptions."""

FORMAT_NAMES = {
    "txt": "Plain text",
    "srt": "SubRip subtitles",
    "vtt": "WebVTT subtitles",
    "json": "JSON with word times",
    "md": "Markdown",
}


def clock(seconds: float) -> str:
    seconds = int(max(0.0, seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


def session_label(row: SessionRow) -> str:
    when = row.started_at[:16].replace("T", " ")
    title = row.title or when
    preview = " ".join(row.preview.split())
    preview = preview if len(preview) <= 48 else preview[:47].rstrip() + "…"
    turns = f"{row.turn_count} turn{'s' if row.turn_count != 1 else ''}"
    return f"{title}\n{when} · {turns}\n{preview}" if row.title else f"{title} · {turns}\n{preview}"


def error_message(exc: Exception) -> str:
    if isinstance(exc, DesktopRtError):
        return str(exc)
    log.error("history job failed", exc_info=exc)
    return f"The history could not be read or written: {exc}"
