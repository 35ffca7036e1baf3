"""The shortcut's presses and releases -> start and stop dictating, hold or toggle.

:class:`HotkeyGesture` puts a trigger (:data:`HOLD`: dictate while the shortcut is held;
:data:`TOGGLE`: a tap starts, the next tap stops) over
:class:`~desktop_rt.live.talk_hold.TalkHold`, which tells a physical hold from X11 auto-repeat
by timing. Call order as for ``TalkHold``: ``press(now)``/``release(now)`` for every key event;
when ``release`` returns a deadline, call ``expire(now)`` at or after it; ``cancel()`` stops.
Each returns :data:`START`, :data:`STOP` or None. No I/O; times are seconds.
"""

from __future__ import annotations

import enum

from desktop_rt.dictation.settings import HOLD, TOGGLE, Trigger
from desktop_rt.live.talk_hold import TalkHold

__all__ = ["Trigger", "HOLD", "TOGGLE", "Action", "START", "STOP", "HotkeyGesture"]


class Action(enum.Enum):
    START = "start"
    STOP = "stop"


START, STOP = Action.START, Action.STOP


class HotkeyGesture:
    """See the module docstring. :attr:`on` is True between a START and its STOP."""

    def __init__(self, trigger: Trigger, repeat_gap: float):
        if trigger not in (HOLD, TOGGLE):
            raise ValueError(f"unknown trigger {trigger!r}")
        self.trigger = trigger
        self._hold = TalkHold(repeat_gap)
        self.on = False

    def press(self, now: float) -> Action | None:
        if not self._hold.press():
            return None  # an auto-repeat of a hold already seen
        if self.trigger == HOLD or not self.on:
            return self._set(True)
        return self._set(False)

    def release(self, now: float) -> float | None:
        return self._hold.release(now)

    def expire(self, now: float) -> Action | None:
        if self._hold.expire(now) and self.trigger == HOLD:
            return self._set(False)
        return None

    def cancel(self) -> Action | None:
        self._hold.cancel()
        return self._set(False) if self.on else None

    def _set(self, on: bool) -> Action | None:
        if on == self.on:
            return None
        self.on = on
        return START if on else STOP
