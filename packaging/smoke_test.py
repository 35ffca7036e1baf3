"""Smoke test of the built double-click app (the frozen one-folder bundle).

    python packaging/smoke_test.py [BUNDLE_DIR] [--tarball FILE] [--json REPORT.json]

BUNDLE_DIR defaults to dist/desktop-rt. Steps, each of which must pass:

1. ``desktop-rt --version`` prints the version of pyproject.toml;
2. the default command (the GUI) starts headless (``QT_QPA_PLATFORM=offscreen``) with fresh
   ``DESKTOP_RT_DATA_DIR`` / ``DESKTOP_RT_CONFIG_DIR`` folders (so the embedded model is
   assembled as on a user's first start) and its embedded server answers ``GET /health`` with
   the model ready (and the version, where /health reports one);
3. a realtime client transcribes tests/data/ss-0880.wav through ``/v1/realtime``: 24 kHz PCM16
   in base64 ``input_audio_buffer.append`` events, ``commit``, then ``committed`` and
   ``...transcription.completed``, whose transcript must match the reference (WER <= 0.25);
4. SIGTERM makes the app quit cleanly: it is still running when the signal is sent, exits with
   code 0 within 60 s, and its log holds no Python traceback;
5. a second start (model already in place) reaches ``/health`` again and quits on SIGTERM too.

It reports the bundle size (and the tarball's, if given), the first and later start-up times
(process start until ``/health`` reports the model ready), and the transcript.
Exit status 0 when everything passed. Needs ``websockets`` and ``numpy`` (the dev venv has
both); ``soxr`` is used for resampling when present.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import wave
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import tomllib

ROOT = Path(__file__).resolve().parent.parent
CLIP = ROOT / "tests" / "data" / "ss-0880.wav"
MAX_WER = 0.25
START_TIMEOUT = 300.0  # the first start assembles the model (150 MB) and loads it, on a busy CI box
EVENT_TIMEOUT = 120.0
EXIT_TIMEOUT = 60.0


class SmokeFailure(AssertionError):
    pass


@dataclass
class Report:
    bundle: str
    version: str = ""
    bundle_bytes: int = 0
    bundle_files: int = 0
    tarball_bytes: int | None = None
    first_start_s: float | None = None
    second_start_s: float | None = None
    version_s: float | None = None
    transcript: str = ""
    reference: str = ""
    wer: float | None = None
    transcribe_s: float | None = None
    exit_codes: list[int] = field(default_factory=list)
    signal_logged: list[bool] = field(default_factory=list)
    shutdown_s: list[float] = field(default_factory=list)
    ok: bool = False
    error: str = ""

    def summary(self) -> str:
        mb = lambda n: f"{n / 1e6:.0f} MB"  # noqa: E731
        lines = [
            f"bundle      {self.bundle}: {mb(self.bundle_bytes)} in {self.bundle_files} files"
            + (f"; tarball {mb(self.tarball_bytes)}" if self.tarball_bytes else ""),
            f"version     {self.version} ({self.version_s:.2f} s for --version)"
            if self.version_s
            else "",
            f"first start {self.first_start_s:.1f} s to a ready model on /health (assembles + loads it)"
            if self.first_start_s
            else "",
            f"next start  {self.second_start_s:.1f} s to a ready model on /health"
            if self.second_start_s
            else "",
            f"transcript  {self.transcript!r} (WER {self.wer:.2f}, {self.transcribe_s:.1f} s)"
            if self.wer is not None
            else "",
            f"exit        codes {self.exit_codes} after SIGTERM, in {', '.join(f'{s:.1f} s' for s in self.shutdown_s)}"
            if self.exit_codes
            else "",
            "SMOKE TEST PASSED" if self.ok else f"SMOKE TEST FAILED: {self.error}",
        ]
        return "\n".join(line for line in lines if line)


# --- helpers ------------------------------------------------------------------------------------


def check(condition: bool, message: str) -> None:
    if not condition:
        raise SmokeFailure(message)


def tree_size(folder: Path) -> tuple[int, int]:
    total = files = 0
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            total += path.stat().st_size
            files += 1
    return total, files


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def normalize(text: str) -> list[str]:
    return re.sub(r"[^\w' ]+", " ", text.lower()).split()


def word_error_rate(reference: str, hypothesis: str) -> float:
    ref, hyp = normalize(reference), normalize(hypothesis)
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, row[0] = row[0], i
        for j, h in enumerate(hyp, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (r != h))
    return row[-1] / max(len(ref), 1)


def pcm16_24k_chunks(path: Path, chunk_s: float = 0.1) -> list[str]:
    """The clip as 24 kHz mono PCM16, in base64 chunks of ``chunk_s`` (as a microphone client sends)."""
    with wave.open(str(path)) as w:
        check(w.getsampwidth() == 2, f"{path}: expected 16-bit PCM")
        rate, channels = w.getframerate(), w.getnchannels()
        audio = (
            np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / 32768.0
        )
    if channels > 1:
        audio = audio.reshape(-1, channels).mean(axis=1)
    if rate != 24_000:
        try:
            import soxr

            audio = soxr.resample(audio, rate, 24_000, quality="HQ")
        except ImportError:
            n = int(round(len(audio) * 24_000 / rate))
            audio = np.interp(np.arange(n) * rate / 24_000, np.arange(len(audio)), audio).astype(
                np.float32
            )
    pcm = (np.clip(audio, -1.0, 1.0) * 32767.0).astype("<i2").tobytes()
    step = int(24_000 * chunk_s) * 2
    return [base64.b64encode(pcm[i : i + step]).decode("ascii") for i in range(0, len(pcm), step)]


class App:
    """One run of the frozen GUI, headless, its output in a log file."""

    def __init__(self, exe: Path, env: dict[str, str], log_path: Path):
        self.log_path = log_path
        self._log = open(log_path, "ab")  # noqa: SIM115 - open for the process's life, closed in close()
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [str(exe)],
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )

    def log_text(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")

    def wait_health(self, port: int, timeout: float) -> tuple[float, dict]:
        """Seconds from process start until ``/health`` answers 200, status ok, every model ready."""
        deadline = self.started + timeout
        url = f"http://127.0.0.1:{port}/health"
        body: dict = {}
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SmokeFailure(
                    f"the app exited with code {self.proc.returncode} before /health answered"
                )
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    body = json.loads(response.read())
            except (urllib.error.URLError, ConnectionError, OSError, ValueError):
                time.sleep(0.05)
                continue
            check(body.get("status") == "ok", f"/health said {body}")
            if all(m.get("state") == "ready" for m in body.get("models", [])):
                return time.monotonic() - self.started, body
            time.sleep(0.05)
        raise SmokeFailure(
            f"/health did not report a ready model within {timeout:.0f} s (last: {body})"
        )

    def terminate(self) -> tuple[int, float]:
        """SIGTERM; returns (exit code, seconds to exit). Kills the group if it does not exit."""
        early = self.proc.poll()
        check(early is None, f"the app exited by itself (code {early}) before it was sent SIGTERM")
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.kill()
            raise SmokeFailure(
                f"the app did not exit within {EXIT_TIMEOUT:.0f} s of SIGTERM"
            ) from None
        return code, time.monotonic() - t0

    def kill(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def close(self) -> None:
        self.kill()
        self._log.close()


def transcribe(port: int, clip: Path) -> tuple[str, list[str]]:
    """Send ``clip`` over /v1/realtime; return the completed transcript and the event types seen."""
    from websockets.sync.client import connect

    seen: list[str] = []

    def until(ws, kind: str) -> dict:
        while True:
            event = json.loads(ws.recv(timeout=EVENT_TIMEOUT))
            seen.append(event["type"])
            check(event["type"] != "error", f"the server sent an error event: {event}")
            if event["type"] == kind:
                return event

    url = f"ws://127.0.0.1:{port}/v1/realtime?intent=transcription"
    with connect(url, open_timeout=60, max_size=None) as ws:
        until(ws, "session.created")
        ws.send(
            json.dumps(
                {
                    "type": "session.update",
                    "session": {
                        "type": "transcription",
                        "audio": {
                            "input": {
                                "format": {"type": "audio/pcm", "rate": 24_000},
                                "transcription": {"language": "en"},
                                "turn_detection": None,
                            }
                        },
                    },
                }
            )
        )
        until(ws, "session.updated")
        for chunk in pcm16_24k_chunks(clip):
            ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": chunk}))
        ws.send(json.dumps({"type": "input_audio_buffer.commit"}))
        committed = until(ws, "input_audio_buffer.committed")
        completed = until(ws, "conversation.item.input_audio_transcription.completed")
        check(
            completed["item_id"] == committed["item_id"],
            "completed names another item than committed",
        )
    return completed["transcript"], seen


# --- the test -----------------------------------------------------------------------------------


def run(
    bundle: Path, tarball: Path | None = None, clip: Path = CLIP, keep: Path | None = None
) -> Report:
    report = Report(bundle=str(bundle))
    exe = bundle / "desktop-rt"
    expected_version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    report.reference = clip.with_suffix(".txt").read_text().strip()
    work = Path(tempfile.mkdtemp(prefix="desktop-rt-smoke-")) if keep is None else keep
    work.mkdir(parents=True, exist_ok=True)
    apps: list[App] = []
    try:
        check(exe.is_file() and os.access(exe, os.X_OK), f"{exe} is not an executable")
        report.bundle_bytes, report.bundle_files = tree_size(bundle)
        if tarball is not None:
            check(tarball.is_file(), f"no tarball {tarball}")
            report.tarball_bytes = tarball.stat().st_size
        for name in ("desktop-rt.desktop", "desktop-rt.svg", "add-to-menu.sh", "README.txt"):
            check((bundle / name).is_file(), f"the bundle lacks {name}")

        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("PYTHON", "VIRTUAL_ENV", "QT_", "LD_"))
        }
        env.update(
            {
                "QT_QPA_PLATFORM": "offscreen",
                "DESKTOP_RT_DATA_DIR": str(work / "data"),
                "DESKTOP_RT_CONFIG_DIR": str(work / "config"),
                "HF_HUB_OFFLINE": "1",
                "HOME": str(work / "home"),  # nothing may fall back to the real home
                "XDG_RUNTIME_DIR": str(work / "runtime"),
            }
        )
        (work / "runtime").mkdir(mode=0o700, exist_ok=True)

        t0 = time.monotonic()
        out = subprocess.run(
            [str(exe), "--version"], env=env, capture_output=True, text=True, timeout=120
        )
        report.version_s = time.monotonic() - t0
        report.version = out.stdout.strip()
        check(out.returncode == 0, f"--version failed ({out.returncode}): {out.stderr[-2000:]}")
        check(
            report.version == f"desktop-rt {expected_version}",
            f"--version says {report.version!r}, pyproject.toml has {expected_version}",
        )

        port = free_port()
        config = work / "config"
        config.mkdir(parents=True, exist_ok=True)
        (config / "settings.json").write_text(json.dumps({"version": 2, "server": {"port": port}}))

        for attempt in (1, 2):
            app = App(exe, env, work / f"app-{attempt}.log")
            apps.append(app)
            started, health = app.wait_health(port, START_TIMEOUT)
            check(
                health.get("version") in (None, expected_version),
                f"/health reports version {health.get('version')}, pyproject.toml has {expected_version}",
            )
            if attempt == 1:
                report.first_start_s = started
                check(
                    (work / "data" / "models" / "whisper-base" / "model.bin").is_file(),
                    "the embedded model was not assembled in the data dir",
                )
                t0 = time.monotonic()
                report.transcript, seen = transcribe(port, clip)
                report.transcribe_s = time.monotonic() - t0
                report.wer = word_error_rate(report.reference, report.transcript)
                check(
                    report.wer <= MAX_WER,
                    f"transcript {report.transcript!r} is too far from "
                    f"{report.reference!r} (WER {report.wer:.2f})",
                )
            else:
                report.second_start_s = started
            code, took = app.terminate()
            report.exit_codes.append(code)
            report.shutdown_s.append(took)
            log = app.log_text()
            check(code == 0, f"exit code {code} after SIGTERM (expected 0)")
            check(
                "Traceback (most recent call last)" not in log,
                "a Python traceback in the app's log",
            )
            # Informational only: while no microphone is found, the app re-initialises PortAudio
            # now and then, and sounddevice points the process's stderr at /dev/null meanwhile,
            # so any log line of that moment can vanish. Exit code 0 is the proof of the handler
            # (without one SIGTERM ends the process with -15).
            report.signal_logged.append("SIGTERM received" in log)
        report.ok = True
    except (SmokeFailure, OSError, subprocess.SubprocessError, TimeoutError) as exc:
        report.error = (
            f"{type(exc).__name__}: {exc}" if not isinstance(exc, SmokeFailure) else str(exc)
        )
        for app in apps:
            print(
                f"--- {app.log_path.name} (last 60 lines) ---\n"
                + "\n".join(app.log_text().splitlines()[-60:]),
                file=sys.stderr,
            )
    except Exception as exc:  # websockets errors and the like: still a failure with a report
        report.error = f"{type(exc).__name__}: {exc}"
        for app in apps:
            print(
                f"--- {app.log_path.name} (last 60 lines) ---\n"
                + "\n".join(app.log_text().splitlines()[-60:]),
                file=sys.stderr,
            )
    finally:
        for app in apps:
            app.close()
        if keep is None:
            import shutil

            shutil.rmtree(work, ignore_errors=True)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bundle", nargs="?", type=Path, default=ROOT / "dist" / "desktop-rt")
    parser.add_argument(
        "--tarball", type=Path, default=None, help="also report this tarball's size"
    )
    parser.add_argument(
        "--clip", type=Path, default=CLIP, help="a .wav with a .txt reference beside it"
    )
    parser.add_argument("--json", type=Path, default=None, help="write the report here as JSON")
    parser.add_argument(
        "--keep", type=Path, default=None, help="keep data, config and logs in this folder"
    )
    args = parser.parse_args(argv)
    report = run(args.bundle.resolve(), args.tarball, args.clip, args.keep)
    print(report.summary())
    if args.json:
        args.json.write_text(json.dumps(asdict(report), indent=2) + "\n")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
