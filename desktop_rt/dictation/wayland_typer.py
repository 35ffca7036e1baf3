"""Typing into the focused Wayland window through a command-line tool, from a thread of its own.

Wayland lets no client send keys to another, so two tools do it from outside:

- :class:`WtypeTyper`: ``wtype`` speaks the compositor's virtual-keyboard protocol
  (``zwp_virtual_keyboard_v1``: Sway, Hyprland and other wlroots compositors) and types any
  Unicode text, uploading a keymap for the characters it needs; it is given the text on its
  standard input (``wtype -s 100 -``: the short sleep lets clients take the new keymap before
  the first key, which they otherwise drop), read as UTF-8 whatever the user's locale.
- :class:`YdotoolTyper`: ``ydotool type`` writes key events to ``/dev/uinput`` (any compositor,
  GNOME and KDE included); it needs write access to ``/dev/uinput`` (and, from version 1.0, its
  ``ydotoold`` service). It types the keys of a US layout, so ASCII text only. The text is
  handed over in a private temporary file (``--file``), never on the command line.

Both follow the :class:`~desktop_rt.dictation.typer.Typer` protocol: :meth:`~CommandTyper.start`
raises :class:`~desktop_rt.dictation.errors.DictationError` when the tool is not on ``PATH``;
a run that fails (no compositor support, no uinput) reports the tool's own message to
``on_error``, with what to do about it. ``env`` is the session's environment the tool runs in
(``WAYLAND_DISPLAY``, ``XDG_RUNTIME_DIR``, ``PATH``).
"""

from __future__ import annotations

import abc
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Mapping

from desktop_rt.dictation.errors import DictationError
from desktop_rt.dictation.text_queue import TextQueue

__all__ = ["CommandTyper", "WtypeTyper", "YdotoolTyper"]

_SECONDS_PER_CHAR = 0.05  # a generous bound on one run (ydotool's default key delay is 12 ms)


class CommandTyper(abc.ABC):
    """Text typed by running :attr:`program` once per queued piece (subclasses say how)."""

    program = ""
    hint = ""
    """What to do when a run fails, for people."""

    def __init__(
        self, env: Mapping[str, str] | None = None, on_error: Callable[[str], None] | None = None
    ):
        self._env = dict(os.environ if env is None else env)
        self._on_error = on_error or (lambda message: None)
        self._texts = TextQueue()
        self._thread: threading.Thread | None = None
        self.path = ""

    def start(self) -> None:
        path = shutil.which(self.program, path=self._env.get("PATH", os.defpath))
        if path is None:
            raise DictationError(
                f"Dictation needs the {self.program} program to type in this Wayland session, "
                f"and it is not installed: {self.hint}"
            )
        self.path = path
        self._thread = threading.Thread(target=self._run, name="desktop-rt-typer", daemon=True)
        self._thread.start()

    def type_text(self, text: str) -> None:
        self._texts.put(text)

    def wait_idle(self, timeout: float) -> bool:
        return self._texts.wait_idle(timeout)

    def stop(self) -> None:
        self._texts.close()
        if self._thread is not None:
            self._thread.join(30)
            self._thread = None

    @abc.abstractmethod
    def run_tool(self, text: str) -> subprocess.CompletedProcess[bytes]:
        """One run of the tool typing ``text``."""

    def _timeout(self, text: str) -> float:
        return 10 + _SECONDS_PER_CHAR * len(text)

    def _run(self) -> None:
        for text in self._texts.texts():
            try:
                done = self.run_tool(text)
                if done.returncode != 0:
                    self._failed(done.stderr.decode("utf-8", "replace"))
            except (OSError, subprocess.TimeoutExpired) as exc:
                self._failed(str(exc))
            finally:
                self._texts.done()

    def _failed(self, output: str) -> None:
        lines = [line.strip() for line in output.splitlines() if line.strip()]
        said = lines[-1] if lines else "no message"
        self._on_error(f"Dictation could not type with {self.program} ({said}). {self.hint}")


class WtypeTyper(CommandTyper):
    """``wtype``: the compositor's virtual keyboard (see the module docstring)."""

    program = "wtype"
    hint = (
        "wtype works on Sway, Hyprland and other wlroots desktops (apt install wtype); on "
        "GNOME or KDE use ydotool."
    )
    settle_ms = 100

    def run_tool(self, text: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [self.path, "-s", str(self.settle_ms), "-"],
            input=text.encode("utf-8"),
            capture_output=True,
            env={**self._env, "LC_ALL": "C.UTF-8"},  # it decodes its input by the locale
            timeout=self._timeout(text),
            check=False,
        )


class YdotoolTyper(CommandTyper):
    """``ydotool``: key events through ``/dev/uinput`` (see the module docstring)."""

    program = "ydotool"
    hint = (
        "ydotool needs write access to /dev/uinput and, from version 1.0, its ydotoold service "
        "running (apt install ydotool; systemctl --user enable --now ydotoold where packaged)."
    )

    def run_tool(self, text: str) -> subprocess.CompletedProcess[bytes]:
        with tempfile.NamedTemporaryFile("wb", prefix="desktop-rt-dictation-") as file:
            file.write(text.encode("utf-8"))
            file.flush()
            return subprocess.run(
                [self.path, "type", "--file", file.name],
                capture_output=True,
                env=self._env,
                timeout=self._timeout(text),
                check=False,
            )
