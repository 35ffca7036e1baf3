"""Hold-to-talk from key presses and releases, with auto-repeat ignored by timing.

A held key repeats as release/press pairs on X11, and whether a toolkit marks them as
auto-repeat depends on when it reads them. :class:`TalkHold` trusts only the clock: a release
starts a grace period of :attr:`~TalkHold.repeat_gap` seconds; a press within it continues the
hold, else :meth:`~TalkHold.expire` ends it. Call order: ``press()``/``release(now)`` for
every key event; when ``release`` returns a deadline, call ``expire(now)`` at or after it (a
press seen before that call continues the hold); ``cancel()`` ends a hold at once (the window
lost focus). No Qt; times are seconds.
"""

from __future__ import annotations

import enum

__all__ = ["HoldState", "TalkHold", "repeat_gap_for", "REPEAT_MARGIN_SECONDS"]

REPEAT_MARGIN_SECONDS = 0.12
"""Slack on top of one repeat period: a busy Python thread delays the paired press this much."""


def repeat_gap_for(rate_hz: float) -> float:
    """The grace period after a release for a keyboard repeating ``rate_hz`` times a second."""
    period = 1.0 / rate_hz if rate_hz > 0 else 0.05
    return min(0.4, max(0.1, period + REPEAT_MARGIN_SECONDS))


class HoldState(enum.Enum):
    IDLE = "idle"
    HELD = "held"
    RELEASING = "releasing"  # released, waiting to see whether a repeat press follows


class TalkHold:
    """See the module docstring. ``press`` returns True when a hold starts (start recording);
    ``expire`` and ``cancel`` return True when a hold ends (stop recording)."""

    def __init__(self, repeat_gap: float):
        if repeat_gap <= 0:
            raise ValueError("repeat_gap must be positive")
        self.repeat_gap = repeat_gap
        self.state = HoldState.IDLE
        self._deadline = 0.0

    @property
    def held(self) -> bool:
        """A hold is on (including the grace period after a release)."""
        return self.state is not HoldState.IDLE

    @property
    def deadline(self) -> float | None:
        return self._deadline if self.state is HoldState.RELEASING else None

    def press(self) -> bool:
        if self.state is HoldState.IDLE:
            self.state = HoldState.HELD
            return True
        # An auto-repeat press (or a new press before expire() ended the hold): the hold goes on.
        self.state = HoldState.HELD
        return False

    def release(self, now: float) -> float | None:
        """Returns the time at which to call :meth:`expire` (None: nothing to wait for)."""
        if self.state is HoldState.IDLE:
            return None
        if self.state is HoldState.HELD:
            self.state = HoldState.RELEASING
            self._deadline = now + self.repeat_gap
        return self._deadline

    def expire(self, now: float) -> bool:
        if self.state is HoldState.RELEASING and now >= self._deadline:
            self.state = HoldState.IDLE
            return True
        return False

    def cancel(self) -> bool:
        was_held = self.held
        self.state = HoldState.IDLE
        return was_held
