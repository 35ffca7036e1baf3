"""Dictation benchmark: from the shortcut's release to the last word typed in another app.

    .venv/bin/python bench/bench_dictation.py            # the six eval clips, once each
    .venv/bin/python bench/bench_dictation.py --clips 3  # a shorter run
    .venv/bin/python bench/bench_dictation.py --at-turn-end  # type each turn when it ends

In this process: the real window, controller, embedded server and model (offscreen Qt), push-to-
talk, dictation on Ctrl+Alt+Space (hold), and a FileAudioSource playing the eval clips at 1x with
pauses between them. On a throwaway Xvfb + openbox desktop a Tk text field runs as another
process with focus (tests/support/dictation_target.py) and logs ``time.monotonic()`` at every
change. For each clip xdotool holds the shortcut from 0.3 s before the clip to 0.3 s after it, and the
source pauses (silence) from the release until the turn is typed, so a slow turn never eats
into the next clip; latency = the time the field reached its final text for that turn - the time just before
``xdotool keyup`` ran (so xdotool's own start-up counts against us). Also reported: the WER of
the field against the references and of the offline transcript of the same clips.

Results: bench/results/dictation-<date>.md (+ .json), also printed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

ROOT = C.ROOT
sys.path.insert(0, str(ROOT))
CLIPS = ["beckett", "ss-0870", "ss-0880", "ss-0890", "ss-0920", "ss-0930"]
GAP_SECONDS = 0.6
LEAD_SECONDS = 0.3  # the shortcut goes down this long before a clip starts, up this long after


def log(*args) -> None:
    print("[bench_dictation]", *args, file=sys.stderr, flush=True)


def spin_until(app, check, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        app.processEvents()
        time.sleep(0.002)


def pausable_source(audio):
    """A FileAudioSource that can also pause (delivering silence) between clips."""
    from desktop_rt.engine.audio.sources import FileAudioSource

    class Pausable(FileAudioSource):
        def pause(self) -> None:
            self._playing.clear()

    return Pausable(audio, autoplay=False)


def field_times(path: Path) -> list[tuple[float, int]]:
    rows = []
    for line in path.read_text().splitlines():
        at, length = line.split()
        rows.append((float(at), int(length)))
    return rows


def run(clip_names: list[str], tmp: Path, at_turn_end: bool = False) -> dict:
    import numpy as np
    from PySide6.QtWidgets import QApplication

    from desktop_rt.config import PUSH_TO_TALK, AudioSettings, ServerSettings, Settings
    from desktop_rt.dictation.settings import DictationSettings
    from desktop_rt.engine.asr.file_transcriber import FileTranscriber
    from desktop_rt.engine.asr.whisper import WhisperBackend
    from desktop_rt.engine.models.embedded import ensure_default_model
    from desktop_rt.ui.app import build_app
    from tests.support.x_desktop import target_field, x_desktop, xdotool

    qapp = QApplication.instance() or QApplication([])
    backend = WhisperBackend(ensure_default_model())
    clips = [C.read_clip(name) for name in clip_names]
    gap = np.zeros(int(C.SAMPLE_RATE * GAP_SECONDS), dtype=np.float32)
    parts, ends, at = [], [], 0.0
    for clip in clips:
        parts += [gap[: int(C.SAMPLE_RATE * LEAD_SECONDS)], clip, gap]
        at += LEAD_SECONDS + len(clip) / C.SAMPLE_RATE
        ends.append(at)
        at += GAP_SECONDS
    source = pausable_source(np.concatenate(parts))
    settings = Settings().with_group(
        server=ServerSettings(port=0),
        audio=AudioSettings(mode=PUSH_TO_TALK),
        dictation=DictationSettings(enabled=True, at_turn_end=at_turn_end),
    )
    with x_desktop(tmp) as display:
        os.environ.update(DISPLAY=display, XDG_SESSION_TYPE="x11")
        os.environ.pop("WAYLAND_DISPLAY", None)
        app = build_app(
            settings=settings,
            source_factory=lambda _s: source,
            backend_factory=lambda _spec: backend,
            history_path=tmp / "history.sqlite3",
            persist_settings=False,
            owns_backend=False,
        )
        app.start()
        controller, adapter = app.controller, app.window.dictation
        spin_until(qapp, lambda: controller.listening, 120, "the model")
        spin_until(qapp, lambda: adapter.engine is not None, 20, "the shortcut")
        engine = adapter.engine
        times = tmp / "field-times.txt"
        releases, lengths, talk_ups, finals = [], [], [], []
        stamps: dict[str, float] = {}
        controller.talking_changed.connect(
            lambda on: None if on else stamps.update(up=time.monotonic())
        )
        controller.bridge.caption.connect(
            lambda t: stamps.update(final=time.monotonic()) if t.final else None
        )
        busy0, cpu0, wall0 = C.system_busy_seconds(), time.process_time(), time.monotonic()
        with target_field(display, tmp / "field.txt", times) as field:
            for end in ends:
                xdotool(display, "keydown", "ctrl+alt+space")
                spin_until(qapp, lambda: controller.talking, 10, "talking")
                source.play()
                spin_until(qapp, lambda e=end: source.position >= e + LEAD_SECONDS, 120, "end")
                releases.append(time.monotonic())
                xdotool(display, "keyup", "ctrl+alt+space")
                source.pause()
                spin_until(qapp, lambda: not engine.queue.claiming, 60, "the turn's last words")
                spin_until(qapp, lambda: engine.wait_typed(0.001), 30, "typing")
                expected = engine.typed_text
                spin_until(qapp, lambda x=expected: field.text() == x, 30, "the field")
                lengths.append(len(expected))
                talk_ups.append(stamps["up"])
                finals.append(stamps["final"])
            text = field.text()
        captions = app.window.captions.committed_text()
        wall = time.monotonic() - wall0
        other = C.other_load(busy0, C.system_busy_seconds(), time.process_time() - cpu0, wall)
        app.window.close()
        spin_until(qapp, controller.stopped.is_set, 60, "shutdown")
        app.dispose()
    rows = field_times(times)
    typed_at = [next(t for t, n in rows if n >= length) for length in lengths]
    latencies = [t - r for t, r in zip(typed_at, releases, strict=True)]
    parts = {
        "release_to_talk_up_s": [u - r for u, r in zip(talk_ups, releases, strict=True)],
        "talk_up_to_final_caption_s": [f - u for f, u in zip(finals, talk_ups, strict=True)],
        "final_caption_to_typed_s": [t - f for t, f in zip(typed_at, finals, strict=True)],
    }
    offline = " ".join(FileTranscriber(backend).transcribe([c]).text for c in clips)
    backend.close()
    reference = " ".join((C.DATA / f"{n}.txt").read_text().strip() for n in clip_names)
    return {
        "clips": clip_names,
        "at_turn_end": at_turn_end,
        "latencies_s": [round(x, 3) for x in latencies],
        "median_s": round(statistics.median(latencies), 3),
        "max_s": round(max(latencies), 3),
        **{k: [round(x, 3) for x in v] for k, v in parts.items()},
        "wer_field": round(C.wer(reference, text), 4),
        "wer_offline": round(C.wer(reference, offline), 4),
        "wer_captions": round(C.wer(reference, captions), 4),
        "field_text": text,
        "captions_text": captions,
        "offline_text": offline,
        "other_load_cores": None if other is None else round(other, 2),
        "loadavg": C.loadavg(),
        "machine": C.machine_info(),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }


def render(result: dict) -> str:
    m = result["machine"]
    lines = [
        f"# Dictation: key release to last word typed ({result['date']})"
        + (", each turn typed when it ends" if result.get("at_turn_end") else ""),
        "",
        f"Machine: {m['cpu_model']}, {m['usable_cores']} usable cores, "
        f"other processes used {result['other_load_cores']} cores meanwhile, "
        f"load average {result['loadavg']}.",
        "",
        "| clip | release -> last word typed (s) | release -> talk up | -> final caption |"
        " -> typed |",
        "|---|---|---|---|---|",
        *(
            f"| {c} | {x:.3f} | {u:.3f} | {f:.3f} | {t:.3f} |"
            for c, x, u, f, t in zip(
                result["clips"],
                result["latencies_s"],
                result["release_to_talk_up_s"],
                result["talk_up_to_final_caption_s"],
                result["final_caption_to_typed_s"],
                strict=True,
            )
        ),
        "",
        f"Median {result['median_s']:.3f} s, max {result['max_s']:.3f} s (target: median <= 1 s); "
        "medians of the parts: release -> talk up "
        f"{statistics.median(result['release_to_talk_up_s']):.3f} s, -> final caption "
        f"{statistics.median(result['talk_up_to_final_caption_s']):.3f} s, -> typed "
        f"{statistics.median(result['final_caption_to_typed_s']):.3f} s.",
        f"WER of the field {result['wer_field']:.3f}, of the window's captions of the same "
        f"turns {result['wer_captions']:.3f}, offline on the same clips "
        f"{result['wer_offline']:.3f}.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clips", type=int, default=len(CLIPS), help="how many eval clips")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    parser.add_argument("--at-turn-end", action="store_true", help="type each turn when it ends")
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with tempfile.TemporaryDirectory(prefix="bench-dictation-") as tmp:
        os.environ["DESKTOP_RT_DATA_DIR"] = str(Path(tmp) / "data")
        os.environ["DESKTOP_RT_CONFIG_DIR"] = str(Path(tmp) / "config")
        result = run(CLIPS[: max(1, args.clips)], Path(tmp), args.at_turn_end)
    report = render(result)
    print(report)
    args.out.mkdir(parents=True, exist_ok=True)
    suffix = "-turn-end" if args.at_turn_end else ""
    stem = args.out / f"dictation-{dt.date.today().isoformat()}{suffix}"
    stem.with_suffix(".md").write_text(report)
    stem.with_suffix(".json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
