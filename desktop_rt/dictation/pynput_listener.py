"""What the pynput backends share: loading pynput, starting its key listener, key names.

:func:`load_keyboard` imports ``pynput.keyboard`` (its backend is the platform's: Windows hooks,
macOS Quartz event taps, X11 RECORD + XTest) or raises
:class:`~desktop_rt.dictation.errors.DictationError`. :func:`start_listener` starts a
``pynput.keyboard.Listener`` and checks that it runs, asking the :class:`Permission` first
(:data:`MACOS_PERMISSION`: macOS lets only trusted apps read and send keys; elsewhere
:data:`NO_PERMISSION`). :func:`key_name` turns a pynput key into the names
:mod:`~desktop_rt.dictation.shortcut` uses ("ctrl", "super", "space", "d"), or None.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from desktop_rt.dictation.errors import DictationError

__all__ = [
    "Permission",
    "NO_PERMISSION",
    "MACOS_PERMISSION",
    "load_keyboard",
    "start_listener",
    "key_name",
]

_READY_SECONDS = 10.0  # a listener that is not listening by then is not going to
_STEP_SECONDS = 0.05
_SETTLE_SECONDS = 0.1  # a listener refused by the system ends right after it was ready


@dataclass(frozen=True)
class Permission:
    """Whether the system lets this process read and send keys, and what to tell people when
    it does not (or when the listener stops at once, the usual sign of a refusal)."""

    granted: Callable[[], bool]
    message: str


def _always() -> bool:
    return True


def _application_services() -> Any:
    """macOS's ApplicationServices framework, through ctypes."""
    path = ctypes.util.find_library("ApplicationServices")
    if path is None:
        raise DictationError("Dictation could not find macOS's ApplicationServices framework.")
    framework = ctypes.CDLL(path)
    framework.AXIsProcessTrusted.restype = ctypes.c_bool
    return framework


def _macos_trusted() -> bool:
    """AXIsProcessTrusted: whether macOS lists this process under Accessibility."""
    return bool(_application_services().AXIsProcessTrusted())


NO_PERMISSION = Permission(
    _always, "Dictation could not listen to the keyboard: the system refused pynput's hook."
)
MACOS_PERMISSION = Permission(
    _macos_trusted,
    "macOS has not allowed desktop-rt to read the shortcut and type: open System Settings > "
    "Privacy & Security > Accessibility, and also Input Monitoring, and turn on desktop-rt (or "
    "the Terminal or Python that runs it). Then turn dictation off and on again in Settings.",
)


def load_keyboard() -> ModuleType:
    """``pynput.keyboard``; DictationError when pynput is missing or has no backend here."""
    try:
        import pynput.keyboard
    except ImportError as exc:  # not installed, or its backend cannot load (no display)
        raise DictationError(
            f"Dictation could not load pynput, which reads the shortcut and types: {exc}. "
            "Reinstall desktop-rt (scripts/install.sh)."
        ) from exc
    keyboard: ModuleType = pynput.keyboard  # Any to mypy: pynput ships no types
    return keyboard


def start_listener(listener: Any, permission: Permission) -> None:
    """Start ``listener`` (a ``pynput.keyboard.Listener``) once ``permission`` is granted;
    DictationError when it is not, or when the listener does not run."""
    if not permission.granted():
        raise DictationError(permission.message)
    listener.start()
    ready = threading.Thread(target=listener.wait, name="desktop-rt-pynput-ready", daemon=True)
    ready.start()
    for _step in range(int(_READY_SECONDS / _STEP_SECONDS)):
        ready.join(_STEP_SECONDS)  # pynput's wait() has no timeout; its thread may have died
        if not ready.is_alive() or not listener.is_alive():
            break
    try:
        listener.join(_SETTLE_SECONDS)  # re-raises what ended the listener's thread, if anything
    except Exception as exc:
        raise DictationError(f"{permission.message} ({exc})") from exc
    # Not stopped on failure: pynput's stop() waits for a listener that never became ready.
    if ready.is_alive() or not listener.is_alive():
        raise DictationError(permission.message)


_MODIFIER_NAMES = {"cmd": "super"}  # pynput's Cmd (macOS) / Windows key is the shortcut's super


def key_name(key: Any, keyboard: ModuleType) -> str | None:
    """The shortcut name of a pynput key: modifiers without their side ("ctrl_r" -> "ctrl",
    "cmd" -> "super"), named keys by name ("space", "f9", "page_up"), others by their
    character in lower case ("d"); None when it has none (a dead key, an unknown code)."""
    if isinstance(key, keyboard.Key):
        name: str = key.name
        base = name[:-2] if name.endswith(("_l", "_r")) else name
        return _MODIFIER_NAMES.get(base, base)
    if not isinstance(key, keyboard.KeyCode):
        return None
    char = key.char
    if char is not None and char.isprintable() and not char.isspace():
        return str(char).lower()
    vk = key.vk
    # With Ctrl held, Windows reports a control code as the character; its virtual key of a
    # letter or digit is the character's ASCII code (on X11 the keysym is, too).
    if isinstance(vk, int) and vk < 0x80 and chr(vk).isalnum():
        return chr(vk).lower()
    return None
