"""A throwaway Wayland desktop for tests: headless Sway with one focused terminal that records.

:func:`sway_field` starts ``sway`` on the headless wlroots backend (no GPU, no input devices)
in a fresh runtime folder, with ``foot`` running ``cat`` into a file (the terminal in
non-canonical mode, so every key typed reaches the file at once), and yields a
:class:`WaylandField`: the session's environment (``WAYLAND_DISPLAY``, ``XDG_RUNTIME_DIR``) and
what the terminal received. Sway refuses to run as root, so under root it runs as ``nobody``
(``setpriv``). A missing tool fails the test (``scripts/install.sh --test`` installs them).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

TOOLS = ("sway", "foot", "wtype", "setpriv")
START_SECONDS = 60.0


class WaylandField:
    """The terminal's received text, and the environment a client of the session needs."""

    def __init__(self, folder: Path, env: dict[str, str]):
        self.folder = folder
        self.env = env
        self.out = folder / "typed.txt"

    def text(self) -> str:
        return self.out.read_text(encoding="utf-8") if self.out.exists() else ""

    def wait_text(self, expected: str, timeout: float = 20) -> str:
        """Poll the terminal's file until it holds ``expected``; fail with what it holds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.text() != expected:
            time.sleep(0.05)  # another process writes it: nothing to wait on but polling
        text = self.text()
        assert text == expected, f"the terminal got {text!r}, expected {expected!r}"
        return expected


def _as_user() -> list[str]:
    if os.geteuid() != 0:
        return []
    return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


def _sway_env(folder: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(folder),
        "XDG_RUNTIME_DIR": str(folder),
        "WLR_BACKENDS": "headless",
        "WLR_LIBINPUT_NO_DEVICES": "1",
        "WLR_RENDERER": "pixman",
        "LANG": "C.UTF-8",
    }


def _socket(folder: Path) -> str | None:
    names = [p.name for p in folder.glob("wayland-*") if not p.name.endswith(".lock")]
    return names[0] if names else None


@contextmanager
def sway_field() -> Iterator[WaylandField]:
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"missing {', '.join(missing)}: run scripts/install.sh --test", pytrace=False)
    folder = Path(tempfile.mkdtemp(prefix="desktop-rt-sway-"))
    if os.geteuid() == 0:
        shutil.chown(folder, "nobody", "nogroup")
    os.chmod(folder, 0o700)
    ready, out = folder / "ready", folder / "typed.txt"
    script = f"stty -icanon -echo; : > {ready}; exec cat > {out}"
    (folder / "sway.cfg").write_text(f"exec foot -e sh -c '{script}'\n", encoding="utf-8")
    log = (folder / "sway.log").open("wb")
    sway = subprocess.Popen(
        [*_as_user(), "sway", "-c", str(folder / "sway.cfg")],
        env=_sway_env(folder),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + START_SECONDS
        while not (ready.exists() and _socket(folder)) and sway.poll() is None:
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)  # another process: nothing to wait on but polling
        name = _socket(folder)
        if not ready.exists() or name is None:
            tail = (folder / "sway.log").read_text(errors="replace")[-2000:]
            pytest.fail(f"headless sway with foot did not start: {tail}", pytrace=False)
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "WAYLAND_DISPLAY": name,
            "XDG_RUNTIME_DIR": str(folder),
            "XDG_SESSION_TYPE": "wayland",
            "XDG_CURRENT_DESKTOP": "sway",
        }
        yield WaylandField(folder, env)
    finally:
        sway.terminate()
        try:
            sway.wait(10)
        except subprocess.TimeoutExpired:
            sway.kill()
            sway.wait(5)
        log.close()
        shutil.rmtree(folder, ignore_errors=True)
