#!/usr/bin/env python3
"""Meeting mode's echo benchmark: the speakers' sound leaking into the microphone.

    .venv/bin/python bench/bench_echo.py            # the system stream is 4 LibriVox sentences
    .venv/bin/python bench/bench_echo.py --quick    # 2 sentences
    .venv/bin/python bench/bench_echo.py --replay bench/results/echo-*.json  # no model

System audio plays S (LibriVox sentences); the microphone hears S mixed in at -10 dB (the
speakers' leak, sample-aligned) plus the user's own speech U (beckett) from S's middle on, so the
microphone has echo alone, then echo under the user's voice. Both streams run live, at real-time
pace, through :class:`~desktop_rt.live.meeting.MeetingSession` (the real model and server,
hands-free). The microphone's events are recorded before and after the echo guard, in one run.

Echo = the share of the system captions' words that also appear in the microphone's captions
(difflib alignment of normalised words, runs of >= 2 words; target < 2 %). User WER = the
microphone captions against U's reference; user words found = the share of U's reference words
aligned in them (what the guard must not eat). CPU per audio second is this process's CPU time
over the stream's length; the lag of each stream (seconds of its audio waiting for the
recognizer) is sampled every 0.25 s (meeting mode's target: under 4 s). The result is saved as
bench/results/echo-<date>.json; numbers go to docs/benchmarks.md. ``echo_leaks`` names the system
words that got through and when each stream had them; ``trace`` is the guard's record
(bench/_echo_trace.py), and ``--replay FILE...`` runs saved traces through today's guard.
"""

from __future__ import annotations

import argparse
import difflib
import json
import resource
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import _common as C  # noqa: E402
from _echo_trace import TracingGuard, leaks, replay  # noqa: E402

from desktop_rt.engine.audio.sources import FileAudioSource  # noqa: E402
from desktop_rt.engine.audio.vad import TurnDetectorSettings  # noqa: E402
from desktop_rt.live.echo_dedup import EchoDeduplicator  # noqa: E402
from desktop_rt.live.meeting import MeetingSession  # noqa: E402
from desktop_rt.live.session import LiveSettings  # noqa: E402
from desktop_rt.live.source_choice import OTHERS, YOU, LabelledSource  # noqa: E402
from desktop_rt.live.transcript_recorder import CaptionTurn  # noqa: E402

LEAK_DB = -10.0
USER_CLIP = "beckett"


def streams(clips: list[str]) -> tuple[np.ndarray, np.ndarray, str, str]:
    """(system audio, microphone audio, system reference, user reference)."""
    gap = np.zeros(int(0.4 * C.SAMPLE_RATE), np.float32)
    system = np.concatenate([x for name in clips for x in (C.read_clip(name), gap)])
    user = C.read_clip(USER_CLIP)
    start = len(system) // 2
    length = max(len(system), start + len(user)) + C.SAMPLE_RATE
    mic = np.zeros(length, np.float32)
    mic[: len(system)] += system * 10 ** (LEAK_DB / 20)
    mic[start : start + len(user)] += user
    system = np.concatenate([system, np.zeros(length - len(system), np.float32)])
    refs = [(C.DATA / f"{n}.txt").read_text().strip() for n in [*clips, USER_CLIP]]
    return system, np.clip(mic, -1, 1), " ".join(refs[:-1]), refs[-1]


def echo_share(system_text: str, mic_text: str) -> float:
    """Share of the system's words found in the microphone's text (aligned runs of >= 2)."""
    sys_words, mic_words = C.norm_tokens(system_text), C.norm_tokens(mic_text)
    matcher = difflib.SequenceMatcher(None, sys_words, mic_words, autojunk=False)
    found = sum(b.size for b in matcher.get_matching_blocks() if b.size >= 2)
    return found / max(1, len(sys_words))


def found_share(reference: str, text: str) -> float:
    """Share of the reference's words found in ``text`` (aligned): what was heard and kept."""
    ref_words, words = C.norm_tokens(reference), C.norm_tokens(text)
    matcher = difflib.SequenceMatcher(None, ref_words, words, autojunk=False)
    return sum(b.size for b in matcher.get_matching_blocks()) / max(1, len(ref_words))


def run(clips: list[str]) -> dict:
    from desktop_rt.engine.asr.whisper import WhisperBackend
    from desktop_rt.engine.models.embedded import ensure_default_model
    from desktop_rt.engine.server.server import RealtimeServer, ServerConfig

    system_audio, mic_audio, _, user_ref = streams(clips)
    backend = WhisperBackend(ensure_default_model())
    guard = TracingGuard()
    captions: dict[str, CaptionTurn] = {}
    closed = threading.Event()

    def publish(value: object) -> None:
        if isinstance(value, CaptionTurn):
            captions[value.item_id] = value

    mic = FileAudioSource(mic_audio, autoplay=False, name="microphone")
    system = FileAudioSource(system_audio, autoplay=False, name="system audio")
    with RealtimeServer(ServerConfig(port=0), backend) as server:
        meeting = MeetingSession(
            server,
            (LabelledSource(YOU, mic), LabelledSource(OTHERS, system)),
            LiveSettings("en", TurnDetectorSettings()),
            writer=None,
            model="whisper-base",
            publish=publish,
            on_closed=lambda uid: closed.set(),
            dedup=guard,
        )
        cpu0, wall0 = resource.getrusage(resource.RUSAGE_SELF), time.monotonic()
        meeting.start()
        mic.play()
        system.play()
        lags = {YOU: [0.0], OTHERS: [0.0]}
        while not (mic.finished.is_set() and system.finished.is_set()):
            for who, stream in ((YOU, meeting.mic), (OTHERS, meeting.system)):
                if stream.local is not None:
                    lags[who].append(stream.local.lag_seconds)
            time.sleep(0.25)  # a sample of the lag every quarter second
        meeting.stop()
        closed.wait(120)
        cpu1, wall = resource.getrusage(resource.RUSAGE_SELF), time.monotonic() - wall0
    backend.close()
    cpu = (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime)

    def said(who: str) -> str:
        return " ".join(c.committed.strip() for c in captions.values() if c.speaker == who)

    others, you = said(OTHERS), said(YOU)
    raw = " ".join(t.strip() for t in guard.raw.values())
    seconds = len(mic_audio) / C.SAMPLE_RATE
    return {
        "clips": clips,
        "leak_db": LEAK_DB,
        "audio_seconds": round(seconds, 1),
        "wall_seconds": round(wall, 1),
        "cpu_per_audio_second": round(cpu / seconds, 2),
        "max_lag_seconds": {who: round(max(v), 2) for who, v in lags.items()},
        "echo_without_guard": round(echo_share(others, raw), 4),
        "echo_with_guard": round(echo_share(others, you), 4),
        "user_wer_without_guard": round(C.wer(user_ref, raw), 4),
        "user_wer_with_guard": round(C.wer(user_ref, you), 4),
        "user_words_found_without_guard": round(found_share(user_ref, raw), 4),
        "user_words_found_with_guard": round(found_share(user_ref, you), 4),
        "words_dropped": guard.dropped_words,
        "system_words": len(C.norm_tokens(others)),
        "echo_leaks": leaks(others, you, guard.trace),
        "texts": {"others": others, "you": you, "mic_raw": raw},
        "trace": guard.trace,
    }


def replay_runs(paths: list[Path]) -> None:
    """Today's guard on the traces of saved runs: echo with it, and the user's words kept."""
    for path in paths:
        saved = json.loads(path.read_text())
        if not saved.get("trace"):
            print(f"{path.name}: no trace (saved before traces were kept)")
            continue
        texts = saved["texts"]
        kept = replay(saved["trace"], lambda clock: EchoDeduplicator(clock=clock))
        user_ref = (C.DATA / f"{USER_CLIP}.txt").read_text().strip()
        shown = {
            "run": path.name,
            "echo_with_guard_then": saved["echo_with_guard"],
            "echo_with_guard_replayed": round(echo_share(texts["others"], kept), 4),
            "user_words_found_replayed": round(found_share(user_ref, kept), 4),
            "echo_leaks_replayed": leaks(texts["others"], kept, saved["trace"]),
        }
        print(json.dumps(shown, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two sentences instead of four")
    parser.add_argument("--replay", nargs="+", type=Path, help="saved runs to replay (no model)")
    args = parser.parse_args()
    if args.replay:
        replay_runs(args.replay)
        return
    clips = C.LIBRIVOX[:2] if args.quick else C.LIBRIVOX[:4]
    result = {"machine": C.machine_info(), "load_before": C.loadavg(), **run(clips)}
    result["load_after"] = C.loadavg()
    stamp = time.strftime("%Y-%m-%d-%H%M")
    out = Path(__file__).resolve().parent / "results" / f"echo-{stamp}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    shown = {k: v for k, v in result.items() if k not in ("texts", "machine", "trace")}
    print(json.dumps(shown, indent=2))


if __name__ == "__main__":
    main()
