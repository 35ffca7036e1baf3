"""Wall-clock timestamps as ISO 8601 strings with an explicit UTC offset."""

from __future__ import annotations

from datetime import datetime, timezone

__all__ = ["now_iso"]


def now_iso(*, utc: bool = False, timespec: str = "seconds") -> str:
    """Now, as ISO 8601 with its offset: local time (what a user reads) or UTC (``utc=True``)."""
    now = datetime.now(timezone.utc)
    return (now if utc else now.astimezone()).isoformat(timespec=timespec)
