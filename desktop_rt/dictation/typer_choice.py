"""Which typer puts dictated words in, from the session and the settings.

:func:`choose_typer` reads the session's environment: an X11 session gets XTest typing
(:class:`~desktop_rt.dictation.x11_typer.X11Typer`) or, with ``typing="paste"``, the clipboard
(:class:`~desktop_rt.dictation.x11_paster.X11Paster`); a Wayland session
(``XDG_SESSION_TYPE=wayland``, or ``WAYLAND_DISPLAY`` without ``DISPLAY``) gets
:func:`wayland_typer`: ``wtype`` or ``ydotool``, whichever is on ``PATH``, in the order that
suits the desktop (``XDG_CURRENT_DESKTOP``: GNOME and KDE offer no virtual keyboard to wtype, so
ydotool comes first there). On Windows and macOS (``platform``, ``sys.platform`` unless given)
the words are typed through pynput (:class:`~desktop_rt.dictation.pynput_typer.PynputTyper`;
macOS asks for the Accessibility permission). Paste mode is X11's; elsewhere the words are
typed. Nothing is started: the caller calls the typer's ``start``.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Mapping
from typing import Literal

from desktop_rt.dictation.errors import DictationError
from desktop_rt.dictation.settings import TypingMode
from desktop_rt.dictation.typer import Typer
from desktop_rt.dictation.wayland_typer import CommandTyper, WtypeTyper, YdotoolTyper

__all__ = ["SessionKind", "session_kind", "wayland_order", "wayland_typer", "choose_typer"]

SessionKind = Literal["x11", "wayland", "windows", "macos"]
ErrorCallback = Callable[[str], None]
_NO_VIRTUAL_KEYBOARD = ("gnome", "kde", "unity", "cinnamon", "budgie")
_DESKTOPS: dict[str, SessionKind] = {"win32": "windows", "darwin": "macos"}


def session_kind(env: Mapping[str, str], platform: str = sys.platform) -> SessionKind | None:
    """ "windows" or "macos" by ``platform``; else "wayland", "x11" or None (no display)."""
    desktop = _DESKTOPS.get(platform)
    if desktop is not None:
        return desktop
    if env.get("XDG_SESSION_TYPE") == "wayland" or (
        env.get("WAYLAND_DISPLAY") and not env.get("DISPLAY")
    ):
        return "wayland"
    return "x11" if env.get("DISPLAY") else None


def wayland_order(env: Mapping[str, str]) -> list[type[CommandTyper]]:
    """The Wayland typers to try, best first, for this desktop."""
    desktops = env.get("XDG_CURRENT_DESKTOP", "").lower().split(":")
    if any(name in desktops for name in _NO_VIRTUAL_KEYBOARD):
        return [YdotoolTyper, WtypeTyper]
    return [WtypeTyper, YdotoolTyper]


def wayland_typer(env: Mapping[str, str], on_error: ErrorCallback) -> CommandTyper:
    """The first of :func:`wayland_order` that is installed; DictationError naming what to
    install when none is."""
    order = wayland_order(env)
    path = env.get("PATH", os.defpath)
    for kind in order:
        if shutil.which(kind.program, path=path) is not None:
            return kind(env, on_error)
    first, second = order
    raise DictationError(
        "Dictation cannot type in this Wayland session: neither wtype nor ydotool is "
        f"installed. Install {first.program}: {first.hint} Or install {second.program}: "
        f"{second.hint}"
    )


def _x11_typer(typing: TypingMode, env: Mapping[str, str], on_error: ErrorCallback) -> Typer:
    from desktop_rt.dictation.x11_paster import X11Paster
    from desktop_rt.dictation.x11_typer import X11Typer

    makers: dict[str, Callable[[str | None, ErrorCallback], Typer]] = {
        "type": X11Typer,
        "paste": X11Paster,
    }
    return makers[typing](env.get("DISPLAY"), on_error)


def _wayland_typer(typing: TypingMode, env: Mapping[str, str], on_error: ErrorCallback) -> Typer:
    return wayland_typer(env, on_error)


def _windows_typer(typing: TypingMode, env: Mapping[str, str], on_error: ErrorCallback) -> Typer:
    from desktop_rt.dictation.pynput_typer import PynputTyper

    return PynputTyper(on_error)


def _macos_typer(typing: TypingMode, env: Mapping[str, str], on_error: ErrorCallback) -> Typer:
    from desktop_rt.dictation.pynput_listener import MACOS_PERMISSION
    from desktop_rt.dictation.pynput_typer import PynputTyper

    return PynputTyper(on_error, MACOS_PERMISSION)


_MAKERS: dict[SessionKind, Callable[[TypingMode, Mapping[str, str], ErrorCallback], Typer]] = {
    "x11": _x11_typer,
    "wayland": _wayland_typer,
    "windows": _windows_typer,
    "macos": _macos_typer,
}


def choose_typer(
    typing: TypingMode,
    env: Mapping[str, str],
    on_error: ErrorCallback,
    platform: str = sys.platform,
) -> Typer:
    """The typer for this session and ``typing`` (see the module docstring)."""
    kind = session_kind(env, platform)
    if kind is None:
        raise DictationError("Dictation cannot type: this session has no X or Wayland display.")
    return _MAKERS[kind](typing, env, on_error)
