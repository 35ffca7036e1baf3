"""bench/_session_child.py: the ``desktop-rt-session`` system, the app's hands-free path.

A real child (bench_conditions.py's child mode) on the evaluation stream's first 20 s with the
embedded model: a RealtimeServer in process, one local server_vad session fed at pace. Both
its texts (completed transcripts: what is saved; deltas: what was shown live) are within WER
bounds of the reference, its items complete in order and no text is written twice. The parent's
scoring and table take the new "live WER %" column.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path[:0] = [str(BENCH), str(BENCH / "data")]
import _common as C  # noqa: E402
import _session_child as SC  # noqa: E402
import bench_conditions as BC  # noqa: E402
import bench_streaming as S  # noqa: E402
import eval_set as E  # noqa: E402

from tests.support.rt_client import COMMITTED, check_item_order  # noqa: E402

DATA = "stream@20"
STREAM = C.Stream("tiny", np.zeros(2 * C.SAMPLE_RATE, dtype=np.float32), "hello there", [])
REFERENCE_WORDS = [(" hello", 0.2, 0.5), (" there", 0.6, 0.9)]


def session_raw(completed: list[str], deltas: list[list[str]]) -> dict:
    """A session run: one completed transcript and one list of delta words per item."""
    words = [
        {"text": t, "start": None, "end": None, "commit": 1.0 + i, "item_id": f"item_{item}"}
        for item, texts in enumerate(deltas)
        for i, t in enumerate(texts)
    ]
    return {
        "words": words,
        "completed": [{"item_id": f"item_{i}", "transcript": t} for i, t in enumerate(completed)],
        "speed": 1.0,
        "final_latency": 0.3,
        "cpu_seconds": 0.8,
        "max_backlog": 0.0,
        "peak_rss_mb": 300.0,
    }


def test_a_session_run_is_scored_on_its_completed_text_and_its_deltas_apart():
    raw = session_raw(["Hello", "there."], [["Hello"], ["where"]])  # two turns
    scores = S.metrics(raw, STREAM, REFERENCE_WORDS)
    assert scores["wer"] == 0.0  # the completed transcripts: what history saves
    assert scores["live_wer"] == 0.5  # the deltas: what was shown live
    assert scores["median"] == 1.0 - 0.5  # "Hello" arrived at 1.0 s, its speech ended at 0.5 s
    assert SC.saved_text(raw) == "Hello there."
    assert SC.live_text(raw) == "Hello where"  # an item's first delta has no leading space


def test_systems_without_turns_have_no_live_wer_and_the_table_shows_a_dash():
    words = [{"text": t, "start": s, "end": e, "commit": e + 0.5} for t, s, e in REFERENCE_WORDS]
    raw = {"words": words, "speed": 1.0, "final_latency": 0.3, "cpu_seconds": 0.8}
    raw |= {"max_backlog": 0.0, "peak_rss_mb": 300.0}
    plain = S.metrics(raw, STREAM, REFERENCE_WORDS)
    assert plain["live_wer"] is None and SC.live_text(raw) is None
    session = S.metrics(session_raw(["Hello there."], [["hello", " where"]]), STREAM, [])
    for scores in (plain, session):
        scores |= {"dropped": 0, "repeated": 0}  # run_one adds these from the saved text
    report = {
        "date": "2026-12-02",
        "data": "stream@20",
        "machine": {"cpu_model": "c", "cores": 2, "usable_cores": 2, "memory_gb": 8},
        "loadavg_start": None,
        "loadavg_end": None,
        "description": "tiny",
        "model": "m",
        "args": {"slow_factor": 2.0, "speed": 1.0, "runs": 1},
        "conditions": {
            "native": {S.OURS: [{"metrics": plain}], SC.SESSION: [{"metrics": session}]}
        },
    }
    report["machine"] |= {"os": "Linux", "python": "3.11"}
    table = BC.render(report)
    header = next(line for line in table.splitlines() if line.startswith("| system"))
    assert "| WER % | live WER % |" in header
    assert f"| {S.OURS} | 0.0 | – |" in table
    assert f"| {SC.SESSION} | 0.0 | 50.0 |" in table


def test_an_unknown_system_is_still_refused(capsys):
    with pytest.raises(SystemExit) as exc:
        BC.parse_args(["--systems", "desktop-rt-sesion"])
    assert exc.value.code == 2
    assert "unknown condition or system: desktop-rt-sesion" in capsys.readouterr().err


def run_child(model_dir: Path) -> dict:
    cmd = [sys.executable, str(BENCH / "bench_conditions.py"), "--one", SC.SESSION, "--json"]
    cmd += ["--data", DATA, "--speed", "1", "--model", str(model_dir)]
    cmd += ["--engine-threads", "1", "--language", "en"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=C.ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_a_real_session_child_saves_and_shows_the_stream_in_order_once(default_model_dir):
    raw = run_child(default_model_dir)
    data = E.load(DATA)
    saved, live = SC.saved_text(raw), SC.live_text(raw)
    assert live is not None
    assert C.wer(data.reference, saved) < 0.35, saved
    assert C.wer(data.reference, live) < 0.35, live
    for text in (saved, live):
        assert BC.utterance_errors(data.utterances, text)["repeated"] == 0, text
    check_item_order(raw["events"])  # committed before completed, deltas joined or whole
    committed = [e["item_id"] for e in raw["events"] if e["type"] == COMMITTED]
    completed = [c["item_id"] for c in raw["completed"]]
    assert completed == committed  # every turn completed once, in the order it was committed
    assert len(completed) >= 2  # server VAD ended turns at the stream's pauses
    commits = [w["commit"] for w in raw["words"]]
    assert commits == sorted(commits) and commits[0] > 0
    assert not [e for e in raw["events"] if e["type"] == "error"]
