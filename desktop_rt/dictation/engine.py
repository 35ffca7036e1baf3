"""Dictation without Qt: the global shortcut, the typing queue and the typer wired together.

:class:`DictationEngine` follows :class:`~desktop_rt.config.DictationSettings`. Call order:
:meth:`~DictationEngine.start` (raises :class:`~desktop_rt.dictation.errors.DictationError`
with a message for people: no display, a bad or taken shortcut, no typing tool); then, from one
thread (the window's), :meth:`~DictationEngine.began` and :meth:`~DictationEngine.ended` when the
caller acted on a START or STOP it got from ``on_action`` (which runs on the shortcut's
thread), :meth:`~DictationEngine.caption` for every caption update of the live session, and
:meth:`~DictationEngine.cancel_claim` when a turn starts that is not dictation; finally
:meth:`~DictationEngine.stop`. The committed words of dictated turns are typed in order, once,
by the typer :func:`~desktop_rt.dictation.typer_choice.choose_typer` picks (``settings.typing``:
key presses, or the clipboard). What starts and stops dictation is the trigger
:func:`~desktop_rt.dictation.trigger_choice.choose_trigger` picks: the X11 shortcut, or on
Wayland the ``desktop-rt dictate`` command the user binds in the compositor, or on Windows and
macOS pynput's (``platform``: ``sys.platform`` unless given).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping

from desktop_rt.dictation.errors import DictationError
from desktop_rt.dictation.gesture import Action, HotkeyGesture
from desktop_rt.dictation.settings import DictationSettings
from desktop_rt.dictation.support import unavailable_reason
from desktop_rt.dictation.trigger_choice import choose_trigger
from desktop_rt.dictation.typer_choice import choose_typer
from desktop_rt.dictation.typing_queue import TypingQueue
from desktop_rt.live.transcript_recorder import CaptionTurn

__all__ = ["DictationEngine", "REPEAT_GRACE_SECONDS"]

REPEAT_GRACE_SECONDS = 0.05
"""How long a release waits for an auto-repeat press. The hotkey drops the release/press pairs
X sends together, so this only catches a pair split between two reads (docs/design/dictation.md)."""


class DictationEngine:
    """See the module docstring."""

    def __init__(
        self,
        settings: DictationSettings,
        *,
        on_action: Callable[[Action], None],
        on_error: Callable[[str], None],
        env: Mapping[str, str] | None = None,
        platform: str = sys.platform,
    ):
        self.settings = settings
        self._on_action = on_action
        self._on_error = on_error
        self._env = os.environ if env is None else env
        self._platform = platform
        self.queue = TypingQueue(settings.at_turn_end)
        self._typed: list[str] = []
        self._stoppers: list[Callable[[], None]] = []
        self._type: Callable[[str], None] = lambda text: None
        self._wait_idle: Callable[[float], bool] = lambda timeout: True
        self._stopped = False

    @property
    def typed_text(self) -> str:
        """Everything handed to the typer so far, in order."""
        return "".join(self._typed)

    @property
    def preview(self) -> str:
        return self.queue.tentative

    def start(self) -> None:
        """Start the trigger and connect the typer; raises DictationError."""
        reason = unavailable_reason(self._env, self._platform)
        if reason is not None:
            raise DictationError(reason)
        gesture = HotkeyGesture(self.settings.trigger, REPEAT_GRACE_SECONDS)
        trigger = choose_trigger(
            self.settings, self._env, gesture, self._report_action, self._platform
        )
        typer = choose_typer(self.settings.typing, self._env, self._report_error, self._platform)
        typer.start()
        try:
            trigger.start()
        except DictationError:
            typer.stop()
            raise
        self._stoppers = [trigger.stop, typer.stop]
        self._type, self._wait_idle = typer.type_text, typer.wait_idle

    def began(self) -> None:
        self.queue.begin()

    def ended(self) -> None:
        self.queue.release()

    def cancel_claim(self) -> None:
        self.queue.cancel()

    def caption(self, turn: CaptionTurn) -> None:
        text = self.queue.update(turn)
        if text:
            self._typed.append(text)
            self._type(text)

    def wait_typed(self, timeout: float) -> bool:
        """True once everything handed to the typer was typed (blocks: not for the UI thread)."""
        return self._wait_idle(timeout)

    def stop(self) -> None:
        """Release the shortcut and stop typing (blocks briefly: call it off the UI thread).
        Nothing is reported to ``on_action`` or ``on_error`` from the moment this is called."""
        self._stopped = True
        stoppers, self._stoppers = self._stoppers, []
        for stop in stoppers:
            stop()

    def _report_action(self, action: Action) -> None:
        if not self._stopped:
            self._on_action(action)

    def _report_error(self, message: str) -> None:
        if not self._stopped:
            self._on_error(message)
