"""kill -9 of the desktop app (``desktop-rt gui``) mid-transcription, for bench_reliability.py.

``app_kills(root, rounds, speech)``: a fresh HOME, config and data folder under ``root``; a
PulseAudio null sink whose monitor is the default source (the app opens it through PortAudio's
``pulse`` device, its real microphone path, as tests/e2e/desktop_session.py does), into which
``speech`` is played at real-time pace, over and over. Settings: hands-free, English, and the
caption page shared on a free port, so this script reads the window's captions as a viewer
would: the committed words the app has shown. Each round starts the app on the same files
(``QT_QPA_PLATFORM=offscreen``), waits until it has shown a number of committed words drawn
for the round (1 to 6: a loaded machine transcribes slowly), and sends SIGKILL at once (half
the rounds: right after a caption, the moment its words are still on their way to the history)
or after a drawn 0-5 s. After each kill the history must pass ``PRAGMA
integrity_check`` and hold every committed word shown before the kill, line by line (the
caption line's id is the turn's ``item_id``). After the last kill the app starts once more and
is closed with SIGTERM.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import soundfile as sf
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

SINK = "bench_mic"
TOKEN = "bench-app-kills-viewer-token"
WAIT = 240.0  # seconds for anything a loaded machine has to do (start, open the mic, words)


def wait_for(what: str, check: Callable[[], object], timeout: float = WAIT) -> object:
    """Poll another process's state (nothing to wait on) until ``check`` is truthy."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(0.1)
    raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")


def output(args: list[str], env: dict[str, str]) -> str:
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=10)
    return done.stdout.strip() if done.returncode == 0 else ""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def virtual_microphone(root: Path) -> Iterator[dict[str, str]]:
    """A private PulseAudio daemon whose default source is a null sink's monitor; the env that
    points clients at it."""
    runtime = root / "runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    script = root / "mic.pa"
    script.write_text(
        "load-module module-native-protocol-unix auth-anonymous=1\n"
        f"load-module module-null-sink sink_name={SINK} rate=16000 channels=1\n"
        f"set-default-source {SINK}.monitor\nset-default-sink {SINK}\n"
    )
    env = {
        **os.environ,
        "XDG_RUNTIME_DIR": str(runtime),
        "PULSE_SERVER": f"unix:{runtime}/pulse/native",
        "HOME": str(root / "home"),
    }
    args = ["pulseaudio", "-n", "-F", str(script), "--daemonize=no", "--exit-idle-time=-1"]
    with (root / "pulse.log").open("wb") as log:
        pulse = subprocess.Popen(args + ["--log-target=stderr"], env=env, stderr=log)
    try:
        wait_for("pulseaudio", lambda: SINK in output(["pactl", "list", "short"], env), 60)
        yield env
    finally:
        pulse.terminate()
        pulse.wait(15)


class CaptionViewer:
    """The shared caption feed, read on a thread: the committed text of every line shown."""

    def __init__(self, port: int) -> None:
        self.url = f"ws://127.0.0.1:{port}/captions/feed?token={TOKEN}"
        self.committed: dict[str, str] = {}
        self.open_lines: set[str] = set()  # lines not final yet: a turn being transcribed
        self.connected = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)
        self._thread.start()

    def words(self) -> int:
        return sum(len(text.split()) for text in list(self.committed.values()))

    def close(self) -> None:
        self._stop.set()
        self._thread.join(30)

    def _apply(self, line: dict) -> None:
        self.committed[line["id"]] = line.get("committed", "")
        if line.get("final"):
            self.open_lines.discard(line["id"])
        else:
            self.open_lines.add(line["id"])

    async def _run(self) -> None:
        while not self._stop.is_set():
            try:
                async with connect(self.url, open_timeout=5) as ws:
                    self.connected.set()
                    while not self._stop.is_set():
                        with contextlib.suppress(TimeoutError):
                            frame = json.loads(await asyncio.wait_for(ws.recv(), 0.2))
                            for line in frame.get("lines", [frame.get("line")]):
                                if line:
                                    self._apply(line)
            except (OSError, TimeoutError, InvalidHandshake, ConnectionClosed):  # not up, or died
                if self.connected.is_set():
                    return
                await asyncio.sleep(0.2)


def history_text(db: Path) -> dict[str, str]:
    """The text of each turn of the newest session, by item id (read-only)."""
    if not db.exists():
        return {}
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)) as con:
        rows = con.execute(
            "SELECT item_id, text FROM turns WHERE session_id = (SELECT max(id) FROM sessions)"
        ).fetchall()
    return dict(rows)


def word_count(texts: dict[str, str]) -> int:
    return sum(len(text.split()) for text in texts.values())


def integrity(db: Path) -> str:
    with contextlib.closing(sqlite3.connect(str(db), timeout=30)) as con:
        return str(con.execute("PRAGMA integrity_check").fetchone()[0])


def write_settings(config: Path, share_port: int) -> None:
    config.mkdir(parents=True, exist_ok=True)
    settings = {
        "version": 3,
        "audio": {"mode": "hands_free", "input_device": "pulse"},
        "transcription": {"language": "en"},
        "server": {"port": 0},
        "share": {"enabled": True, "port": share_port, "token": TOKEN},
    }
    (config / "settings.json").write_text(json.dumps(settings))


def start_app(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as sink:
        return subprocess.Popen(
            [sys.executable, "-m", "desktop_rt.cli", "gui"],
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )


def mic_open(env: dict[str, str]) -> bool:
    return bool(output(["pactl", "list", "short", "source-outputs"], env))


def one_round(
    env: dict[str, str], root: Path, port: int, wav: Path, target: int, delay: float
) -> dict:
    """Start the app, play speech into its microphone, kill it ``delay`` s after ``target``
    committed words are shown."""
    db = root / "data" / "history.sqlite3"
    app = start_app(env, root / "app.log")
    started = time.monotonic()
    wait_for("the app to open the microphone", lambda: mic_open(env) or app.poll() is not None)
    if app.poll() is not None:
        tail = (root / "app.log").read_text(errors="replace")[-3000:]
        raise RuntimeError(f"the app exited with {app.returncode} before listening:\n{tail}")
    viewer = CaptionViewer(port)
    player = subprocess.Popen(
        ["sh", "-c", f"while paplay --device={SINK} {wav}; do :; done"],
        env=env,
        start_new_session=True,
    )
    try:
        viewer.connected.wait(60)
        wait_for(f"{target} committed words shown", lambda: viewer.words() >= target, 600)
        time.sleep(delay)
        written = word_count(history_text(db))
        shown = dict(viewer.committed)
        mid = bool(viewer.open_lines)
        os.kill(app.pid, signal.SIGKILL)
        app.wait(30)
    finally:
        os.killpg(player.pid, signal.SIGKILL)
        player.wait(10)
        viewer.close()
    saved = history_text(db)
    short = {
        item: (text, saved.get(item, ""))
        for item, text in shown.items()
        if len(text.split()) > len(saved.get(item, "").split())
    }
    return {
        "seconds_alive": round(time.monotonic() - started, 1),
        "shown_words": word_count(shown),
        "written_words_seen_before_kill": written,
        "history_words_newest_session": word_count(saved),
        "lost_words": sum(len(a.split()) - len(b.split()) for a, b in short.values()),
        "lines_short": list(short.values()),  # (shown, saved) of each line the history lacks
        "target": target,
        "delay": round(delay, 1),
        "mid_turn": mid,
        "integrity": integrity(db),
    }


def app_kills(root: Path, rounds: int, speech: np.ndarray, seed: int = 19) -> dict:
    """``rounds`` kill -9s of the app on one set of fresh folders under ``root`` (see module)."""
    wav = root / "speech.wav"
    sf.write(wav, speech, 16000)
    port = free_port()
    write_settings(root / "config", port)
    (root / "home").mkdir(exist_ok=True)
    draw = random.Random(seed)
    results = []
    with virtual_microphone(root) as pulse_env:
        env = {
            **pulse_env,
            "QT_QPA_PLATFORM": "offscreen",
            "DESKTOP_RT_CONFIG_DIR": str(root / "config"),
            "DESKTOP_RT_DATA_DIR": str(root / "data"),
            "HF_HUB_OFFLINE": "1",
        }
        for n in range(rounds):
            delay = draw.uniform(0, 5) if n % 2 else 0.0
            results.append(one_round(env, root, port, wav, draw.randint(1, 6), delay))
            print(f"  app kill {n + 1}: {results[-1]}", file=sys.stderr)
        last = start_app(env, root / "app.log")
        wait_for("the app to open the microphone after the last kill", lambda: mic_open(env))
        viewer = CaptionViewer(port)  # up: its caption page is served
        viewer.connected.wait(60)
        viewer.close()
        last.send_signal(signal.SIGTERM)
        restart_exit = last.wait(120)
    return {
        "kills": rounds,
        "mid_turn": sum(r["mid_turn"] for r in results),
        "all_integrity_ok": all(r["integrity"] == "ok" for r in results),
        "shown_words": sum(r["shown_words"] for r in results),
        "lost_words": sum(r["lost_words"] for r in results),
        "lost_in_rounds_killed_at_once": sum(r["lost_words"] for r in results if not r["delay"]),
        "restart_after_last_exit": restart_exit,
        "rounds": results,
    }
