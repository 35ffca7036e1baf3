"""bench_streaming.py's scores and report: a run's metrics against offline word times, the
issue-2 targets, and the markdown report of a saved run (see bench/README.md for every metric).
"""

from __future__ import annotations

import json
import statistics

import _common as C
from _align import align_ends, percentile
from _session_child import live_text, saved_text
from _stream_systems import OFFLINE, OURS, PEER, PEER_VARIANTS

# Targets of issue 2 for desktop-rt, checked on every run.
TARGETS = {
    "first_word": 1.5,
    "median": 1.5,
    "p90": 3.0,
    "final": 1.0,
    "wer_minus_offline_pts": 1.0,
    "cpu_per_audio_s": 1.0,
    "peak_rss_mb": 600.0,
}


def metrics(raw: dict, stream: C.Stream, reference_words) -> dict:
    words = [w for w in raw["words"] if C.norm_tokens(w["text"])]
    text = saved_text(raw)  # a session's completed transcripts, else the words
    live = live_text(raw)  # a session's deltas (None for the other systems)
    speed = raw["speed"]
    if "latency_all_words" in raw:  # offline: every word arrives when the file is done
        lat = [raw["latency_all_words"]] * len(words)
        unmatched = sum(1 for e in align_ends(words, reference_words) if e is None)
    else:
        ends = align_ends(words, reference_words)
        lat = [
            w["commit"] - end / speed for w, end in zip(words, ends, strict=True) if end is not None
        ]
        unmatched = sum(1 for e in ends if e is None)
    return {
        "first_word": lat[0] if lat else None,
        "median": percentile(lat, 50),
        "p90": percentile(lat, 90),
        "final": raw["final_latency"],
        "wer": C.wer(stream.reference, text),
        "wer_whisper": C.wer(stream.reference, text, "whisper"),
        "live_wer": None if live is None else C.wer(stream.reference, live),
        "cpu_per_audio_s": raw["cpu_seconds"] / stream.seconds,
        "peak_rss_mb": raw["peak_rss_mb"],
        "added_rss_mb": raw.get("added_rss_mb"),
        "words": len(words),
        "unmatched": unmatched,
        "max_backlog": raw["max_backlog"],
        "other_load": raw.get("other_load"),
        "longest_step": max((d for _, d in raw.get("slow_steps", [])), default=0.0),
        "inferences": raw.get("inferences"),
        "text": text.strip(),
    }


def median_of(runs: list[dict], key: str):
    vals = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(vals) if vals else None


def fmt(v, spec=".2f", suffix="") -> str:
    return "–" if v is None else f"{v:{spec}}{suffix}"


def ratio(a, b) -> str:
    if a is None or b is None or b == 0:
        return "–"
    return f"{a / b:.2f}×"


COLUMNS = [
    ("first_word", "first word s", ".2f"),
    ("median", "median s", ".2f"),
    ("p90", "p90 s", ".2f"),
    ("final", "final s", ".2f"),
    ("wer", "WER %", ".1f"),
    ("wer_whisper", "WER % (Whisper norm)", ".1f"),
    ("cpu_per_audio_s", "CPU s/audio s", ".2f"),
    ("peak_rss_mb", "peak RSS MB", ".0f"),
    ("added_rss_mb", "added RSS MB", ".0f"),
]
RATIO_KEYS = [
    "first_word",
    "median",
    "p90",
    "final",
    "cpu_per_audio_s",
    "peak_rss_mb",
    "added_rss_mb",
]


def render(report: dict) -> str:
    lines = _header_lines(report)
    for sname, sdata in report["streams"].items():
        lines += _stream_lines(sname, sdata)
    lines += ["## Configuration", ""]
    for system, cfg in report["configs"].items():
        lines.append(f"- **{system}**: `{json.dumps(cfg, sort_keys=True)}`")
    lines += ["", "Definitions and caveats: bench/README.md.", ""]
    return "\n".join(lines)


def _header_lines(report: dict) -> list[str]:
    m = report["machine"]
    a = report["args"]
    return [
        f"# Streaming benchmark — {report['date']}",
        "",
        f"- Machine: {m['cpu_model']}, {m['cores']} cores ({m['usable_cores']} usable), "
        f"{m['memory_gb']} GB RAM, {m['os']}, Python {m['python']}",
        f"- Load average at start / end: {report['loadavg_start']} / {report['loadavg_end']}"
        + f"; most CPU taken by other processes during a run: {fmt(report.get('max_other_load'))} cores"
        + (
            "  \n  **Busy machine: absolute numbers are noisy; rerun on a quiet one.**"
            if report["busy"]
            else ""
        ),
        f"- Model: `{report['model']}` (CTranslate2 int8, CPU; offline and peer on {a['threads']} threads, desktop-rt on its default unless noted in its configuration below)",
        f"- Pace: {a['speed']:g}× real time, {C.CHUNK_SECONDS * 1000:.0f} ms chunks; {a['runs']} run(s) "
        f"per system and stream; each run in its own process; table cells are medians over runs",
        f"- Language: {a['language'] or 'auto-detect'}",
        "",
    ]


def _stream_lines(sname: str, sdata: dict) -> list[str]:
    lines = [
        f"## Stream `{sname}` ({sdata['seconds']:.1f} s)",
        "",
        f"{sdata['layout']}",
        "",
        "| system | "
        + " | ".join(c[1] for c in COLUMNS)
        + " | words (unmatched) | max backlog s | other load (cores) |",
        "|---" * (len(COLUMNS) + 4) + "|",
    ]
    med: dict[str, dict] = {}
    for system, runs in sdata["systems"].items():
        lines.append(_median_row(system, runs, med))
    lines.append("")
    lines += _ratio_lines(med)
    lines += ["Per run:", ""]
    for system, runs in sdata["systems"].items():
        lines += [_run_line(system, r) for r in runs]
    lines.append("")
    if sdata.get("targets"):
        lines += [f"Issue-2 targets for {OURS}, every run:", ""]
        for name, (ok, detail) in sdata["targets"].items():
            lines.append(f"- {'PASS' if ok else 'FAIL'} {name}: {detail}")
        lines.append("")
    return lines


def _median_row(system: str, runs: list[dict], med: dict[str, dict]) -> str:
    """The system's row of medians over its runs (noted in ``med``), or a row of failures."""
    ms = [r["metrics"] for r in runs if "metrics" in r]
    if not ms:
        return f"| {system} | " + " | ".join("failed" for _ in COLUMNS) + " | | | |"
    med[system] = {k: median_of(ms, k) for k, _, _ in COLUMNS}
    for key in ("wer", "wer_whisper"):  # fractions in the metrics, percent here
        med[system][key] = med[system][key] * 100 if med[system][key] is not None else None
    cells = [fmt(med[system][k], spec) for k, _, spec in COLUMNS]
    words = f"{median_of(ms, 'words'):.0f} ({median_of(ms, 'unmatched'):.0f})"
    return (
        f"| {system} | "
        + " | ".join(cells)
        + f" | {words} | {fmt(median_of(ms, 'max_backlog'))} | {fmt(median_of(ms, 'other_load'))} |"
    )


def _ratio_lines(med: dict[str, dict]) -> list[str]:
    pairs = [(OURS, OFFLINE), (OURS, PEER), (PEER, OFFLINE)]
    pairs += [(OURS, v) for v in sorted(PEER_VARIANTS - {PEER}) if v in med]
    pairs = [(x, y) for x, y in pairs if x in med and y in med]
    if not pairs:
        return []
    hdr = [c[1] for c in COLUMNS if c[0] in RATIO_KEYS]
    lines = [
        "Ratios of medians (lower is better for " + OURS + "); WER as a difference in points:",
        "",
        "| ratio | " + " | ".join(hdr) + " | WER Δ pts |",
        "|---" * (len(hdr) + 2) + "|",
    ]
    for x, y in pairs:
        cells = [ratio(med[x][k], med[y][k]) for k in RATIO_KEYS]
        dw = (
            None
            if med[x]["wer"] is None or med[y]["wer"] is None
            else med[x]["wer"] - med[y]["wer"]
        )
        lines.append(f"| {x} ÷ {y} | " + " | ".join(cells) + f" | {fmt(dw, '+.1f')} |")
    lines.append("")
    return lines


def _run_line(system: str, r: dict) -> str:
    if "metrics" not in r:
        return f"- {system} run {r['run']}: FAILED — {r.get('error', '')[:300]}"
    x = r["metrics"]
    return (
        f"- {system} run {r['run']}: first {fmt(x['first_word'])} s, median {fmt(x['median'])} s, "
        f"p90 {fmt(x['p90'])} s, final {fmt(x['final'])} s, WER {x['wer'] * 100:.1f}%, "
        f"CPU {x['cpu_per_audio_s']:.2f} s/s, RSS {x['peak_rss_mb']:.0f} MB "
        f"(added {fmt(x.get('added_rss_mb'), '.0f')}), "
        f"{x['words']} words ({x['unmatched']} unmatched), max backlog {x['max_backlog']:.1f} s, "
        f"longest step {x.get('longest_step') or 0:.1f} s, {x['inferences'] or 1} inferences, "
        f"other load {fmt(x.get('other_load'))} cores"
    )


def check_targets(runs_ours: list[dict], runs_offline: list[dict]) -> dict:
    ours = [r["metrics"] for r in runs_ours if "metrics" in r]
    if not ours:
        return {}
    off_wer = median_of([r["metrics"] for r in runs_offline if "metrics" in r], "wer")
    out = {}
    for key in ("first_word", "median", "p90", "final", "cpu_per_audio_s", "peak_rss_mb"):
        vals = [m[key] for m in ours]
        ok = all(v is not None and v <= TARGETS[key] for v in vals)
        out[key] = (ok, f"≤ {TARGETS[key]:g}: " + ", ".join(fmt(v) for v in vals))
    if off_wer is not None:
        diffs = [(m["wer"] - off_wer) * 100 for m in ours]
        ok = all(d <= TARGETS["wer_minus_offline_pts"] for d in diffs)
        out["wer vs offline"] = (
            ok,
            f"≤ +{TARGETS['wer_minus_offline_pts']:g} pts: "
            + ", ".join(f"{d:+.1f}" for d in diffs),
        )
    return out
