"""What starts and stops dictation, from the session: a key grab on X11, commands on Wayland.

:func:`choose_trigger` reads the session's environment
(:func:`~desktop_rt.dictation.typer_choice.session_kind`): an X11 session gets
:class:`~desktop_rt.dictation.x11_hotkey.X11Hotkey` on the settings' shortcut (a bad shortcut
raises :class:`~desktop_rt.dictation.errors.DictationError` here, before anything is grabbed);
a Wayland session, where no app may read a key another has focus for, gets
:class:`~desktop_rt.dictation.command_trigger.CommandTrigger`, driven by the
``desktop-rt dictate`` command the user binds in the compositor. On Windows and macOS
(``platform``, ``sys.platform`` unless given) pynput's key listener follows the shortcut
(:class:`~desktop_rt.dictation.pynput_hotkey.PynputHotkey`; macOS asks for the Accessibility
and Input Monitoring permissions). All feed ``gesture`` and report to ``on_action`` on a thread
of their own; nothing is started here.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Protocol

from desktop_rt.dictation.errors import DictationError
from desktop_rt.dictation.gesture import Action, HotkeyGesture
from desktop_rt.dictation.settings import DictationSettings
from desktop_rt.dictation.typer_choice import SessionKind, session_kind

__all__ = ["DictationTrigger", "choose_trigger"]

ActionCallback = Callable[[Action], None]


class DictationTrigger(Protocol):
    """``start`` (raises DictationError with a message for people), then ``stop``."""

    def start(self) -> None: ...

    def stop(self) -> None: ...


def _x11_hotkey(
    settings: DictationSettings,
    env: Mapping[str, str],
    gesture: HotkeyGesture,
    on_action: ActionCallback,
) -> DictationTrigger:
    from desktop_rt.dictation.shortcut import parse_shortcut
    from desktop_rt.dictation.x11_hotkey import X11Hotkey

    shortcut = parse_shortcut(settings.shortcut)
    return X11Hotkey(shortcut, gesture, on_action, env.get("DISPLAY"))


def _command_trigger(
    settings: DictationSettings,
    env: Mapping[str, str],
    gesture: HotkeyGesture,
    on_action: ActionCallback,
) -> DictationTrigger:
    from desktop_rt.dictation.command_trigger import CommandTrigger

    return CommandTrigger(gesture, on_action, env)


def _windows_hotkey(
    settings: DictationSettings,
    env: Mapping[str, str],
    gesture: HotkeyGesture,
    on_action: ActionCallback,
) -> DictationTrigger:
    from desktop_rt.dictation.pynput_hotkey import PynputHotkey
    from desktop_rt.dictation.shortcut import parse_shortcut

    return PynputHotkey(parse_shortcut(settings.shortcut), gesture, on_action)


def _macos_hotkey(
    settings: DictationSettings,
    env: Mapping[str, str],
    gesture: HotkeyGesture,
    on_action: ActionCallback,
) -> DictationTrigger:
    from desktop_rt.dictation.pynput_hotkey import PynputHotkey
    from desktop_rt.dictation.pynput_listener import MACOS_PERMISSION
    from desktop_rt.dictation.shortcut import parse_shortcut

    shortcut = parse_shortcut(settings.shortcut)
    return PynputHotkey(shortcut, gesture, on_action, MACOS_PERMISSION)


_MAKERS: dict[
    SessionKind,
    Callable[
        [DictationSettings, Mapping[str, str], HotkeyGesture, ActionCallback], DictationTrigger
    ],
] = {
    "x11": _x11_hotkey,
    "wayland": _command_trigger,
    "windows": _windows_hotkey,
    "macos": _macos_hotkey,
}


def choose_trigger(
    settings: DictationSettings,
    env: Mapping[str, str],
    gesture: HotkeyGesture,
    on_action: ActionCallback,
    platform: str = sys.platform,
) -> DictationTrigger:
    """The trigger for this session (see the module docstring)."""
    kind = session_kind(env, platform)
    if kind is None:
        raise DictationError("Dictation cannot start: this session has no X or Wayland display.")
    return _MAKERS[kind](settings, env, gesture, on_action)
