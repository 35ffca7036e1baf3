"""The X11 clipboard in paste tests: the user's copy held by another application, and a read.

:func:`user_clipboard` runs ``tests/support/clipboard_owner.py`` (a Tk process that owns the
CLIPBOARD, as text or as an image only) while the block runs; :func:`clipboard_now` reads the
clipboard as yet another application would.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from Xlib import display

from desktop_rt.dictation.x11_selection import ClipboardContent, X11Clipboard

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def user_clipboard(x_display: str, kind: str, text: str) -> Iterator[subprocess.Popen[str]]:
    """Another application holding ``text`` on the clipboard (``kind``: "text" or "image")."""
    owner = subprocess.Popen(
        [sys.executable, "-m", "tests.support.clipboard_owner", kind, text],
        env={**os.environ, "DISPLAY": x_display},
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert owner.stdout is not None
    ready, _, _ = select.select([owner.stdout], [], [], 30)
    assert ready and owner.stdout.readline().strip() == "ready", "the clipboard owner did not start"
    try:
        yield owner
    finally:
        owner.terminate()
        owner.wait(10)


def clipboard_now(x_display: str) -> ClipboardContent:
    """What an application reading the clipboard now gets."""
    connection = display.Display(x_display)
    try:
        return X11Clipboard(connection).read(10)
    finally:
        connection.close()
