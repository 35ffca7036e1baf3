"""The dictation trigger where no app may grab a key (Wayland): commands on a per-user socket.

The user binds a key in the compositor to ``desktop-rt dictate press|release|toggle``; that
command (:func:`send_command`) connects to ``$XDG_RUNTIME_DIR/desktop-rt/dictation.sock``,
sends one line (the verb) and reads one line back (``ok``, or ``error: why``).
:class:`CommandTrigger` listens there on a thread of its own (folder 0700, socket 0600) and feeds
the verbs to the same :class:`~desktop_rt.dictation.gesture.HotkeyGesture` the X11 hotkey
feeds: ``press`` and ``release`` as key events (a repeated ``press`` continues a hold);
``toggle`` flips dictation on or off whatever the trigger setting. Each START or STOP goes to
``on_action`` on the trigger's thread. :meth:`~CommandTrigger.start` replaces a socket left by a
dead app and raises :class:`~desktop_rt.dictation.errors.DictationError` when another instance
listens; :meth:`~CommandTrigger.stop` ends the thread (a hold in progress stops) and removes
the socket.
"""

from __future__ import annotations

import os
import select
import socket
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from desktop_rt.dictation.errors import DictationError
from desktop_rt.dictation.gesture import Action, HotkeyGesture

__all__ = ["VERBS", "CommandTrigger", "socket_path", "send_command"]

VERBS = ("press", "release", "toggle")
_MAX_LINE = 64
_CLIENT_SECONDS = 5.0
_OFF = (
    "desktop-rt is not running with dictation on: open desktop-rt and turn on Settings > "
    "Dictation into other apps"
)


def socket_path(env: Mapping[str, str]) -> Path:
    """Where the running app listens: under the session's ``XDG_RUNTIME_DIR``."""
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if not runtime or not os.path.isabs(runtime):
        raise DictationError(
            "Dictation commands need XDG_RUNTIME_DIR (the session's private folder), and it is "
            "not set: run desktop-rt from your desktop session."
        )
    return Path(runtime) / "desktop-rt" / "dictation.sock"


def send_command(verb: str, env: Mapping[str, str]) -> None:
    """Hand ``verb`` to the running app; DictationError saying why not (not running, refused)."""
    if verb not in VERBS:
        raise DictationError(f"Unknown dictation command {verb!r}: use {', '.join(VERBS)}.")
    path = socket_path(env)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(_CLIENT_SECONDS)
        try:
            client.connect(str(path))
            client.sendall(f"{verb}\n".encode("ascii"))
            reply = client.makefile("rb").readline(_MAX_LINE).decode("utf-8", "replace").strip()
        except (FileNotFoundError, ConnectionRefusedError):
            raise DictationError(f"{_OFF} (nothing listens at {path}).") from None
        except OSError as exc:
            raise DictationError(f"Dictation command {verb!r} failed: {exc}.") from exc
    if reply != "ok":
        said = reply.removeprefix("error: ") or "it closed the connection"
        raise DictationError(f"desktop-rt refused the dictation command {verb!r}: {said}.")


def _is_listening(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


class CommandTrigger:
    """See the module docstring."""

    def __init__(
        self,
        gesture: HotkeyGesture,
        on_action: Callable[[Action], None],
        env: Mapping[str, str],
    ):
        self.path = socket_path(env)
        self._gesture = gesture
        self._on_action = on_action
        self._server: socket.socket | None = None
        self._inode = 0
        self._wake_r, self._wake_w = -1, -1
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._deadline: float | None = None

    def start(self) -> None:
        self._server = self._listen()
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(
            target=self._run, name="desktop-rt-dictation-commands", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            os.write(self._wake_w, b"x")
            self._thread.join(10)
            self._thread = None
            os.close(self._wake_r)
            os.close(self._wake_w)
        if self._server is not None:
            self._server.close()
            self._server = None
            try:
                if self.path.stat().st_ino == self._inode:  # still ours, not a newer app's
                    self.path.unlink()
            except FileNotFoundError:
                pass

    def _listen(self) -> socket.socket:
        folder = self.path.parent
        try:
            folder.mkdir(mode=0o700, parents=False, exist_ok=True)
            os.chmod(folder, 0o700)
        except OSError as exc:
            raise DictationError(f"Dictation could not make its folder {folder}: {exc}.") from exc
        if self.path.exists() or self.path.is_symlink():
            if _is_listening(self.path):
                raise DictationError(
                    "Another desktop-rt already listens for dictation commands "
                    f"({self.path}): close it, or turn dictation off there."
                )
            try:
                self.path.unlink()  # left by an app that died
            except OSError as exc:
                raise DictationError(
                    f"Dictation could not replace {self.path} ({exc}): remove it and try again."
                ) from exc
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            server.bind(str(self.path))
            os.chmod(self.path, 0o600)
            server.listen(8)
        except OSError as exc:
            server.close()
            raise DictationError(f"Dictation could not listen at {self.path}: {exc}.") from exc
        self._inode = self.path.stat().st_ino
        return server

    def _run(self) -> None:
        assert self._server is not None
        server = self._server.fileno()
        while not self._stop.is_set():
            wait = None if self._deadline is None else max(0.0, self._deadline - time.monotonic())
            ready, _, _ = select.select([server, self._wake_r], [], [], wait)
            if server in ready and not self._stop.is_set():
                self._serve_one()
            if self._deadline is not None and time.monotonic() >= self._deadline:
                self._deadline = None
                self._act(self._gesture.expire(time.monotonic()))
        self._act(self._gesture.cancel())

    def _serve_one(self) -> None:
        assert self._server is not None
        try:
            conn, _ = self._server.accept()
        except OSError:
            return
        with conn:
            conn.settimeout(_CLIENT_SECONDS)
            try:
                line = conn.makefile("rb").readline(_MAX_LINE).decode("ascii", "replace").strip()
                conn.sendall(self._reply(line).encode("utf-8"))
            except OSError:
                return  # the client went away: it reports that itself

    def _reply(self, verb: str) -> str:
        handlers = {"press": self._press, "release": self._release, "toggle": self._toggle}
        handler = handlers.get(verb)
        if handler is None:
            return f"error: unknown command {verb[:20]!r} (use {', '.join(VERBS)})\n"
        handler(time.monotonic())
        return "ok\n"

    def _press(self, now: float) -> None:
        self._act(self._gesture.press(now))

    def _release(self, now: float) -> None:
        self._deadline = self._gesture.release(now)

    def _toggle(self, now: float) -> None:
        """A direct flip: on -> STOP; off -> START (any half-finished hold is dropped first)."""
        self._deadline = None
        stop = self._gesture.cancel()
        self._act(stop if stop is not None else self._gesture.press(now))

    def _act(self, action: Action | None) -> None:
        if action is not None:
            self._on_action(action)
