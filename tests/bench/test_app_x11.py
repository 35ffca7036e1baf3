"""bench/_app_x11.py's scheduling candidates: ``--engine-policy`` and ``--switch-interval-ms``
are parsed by bench_app.py, refused when malformed, and named in the report."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
import _app_x11 as X  # noqa: E402
import bench_app  # noqa: E402


@pytest.fixture
def bench_env(monkeypatch, tmp_path):
    """bench_app.main sets these when unset; set here, the test leaves the environment as it was."""
    monkeypatch.setenv("DESKTOP_RT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DESKTOP_RT_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return tmp_path


def test_the_scheduling_options_are_accepted(bench_env, capsys):
    argv = ["--parts", "", "--engine-policy", "idle", "--switch-interval-ms", "1"]
    assert bench_app.main([*argv, "--out", str(bench_env / "out")]) == 0
    assert list((bench_env / "out").glob("app-*.md"))


@pytest.mark.parametrize(
    "argv",
    [["--engine-policy", "fifo"], ["--switch-interval-ms", "soon"]],
    ids=["unknown policy", "not a number"],
)
def test_a_malformed_scheduling_option_is_refused_before_anything_runs(bench_env, capsys, argv):
    with pytest.raises(SystemExit) as exited:
        bench_app.main(["--parts", "", *argv, "--out", str(bench_env / "out")])
    assert exited.value.code == 2
    assert argv[0] in capsys.readouterr().err
    assert not (bench_env / "out").exists()


def _report(**options) -> dict:
    run = {
        "words": 3,
        "matched": 3,
        "median_s": 1.0,
        "p90_s": 2.0,
        "max_s": 2.5,
        "wer": 0.0,
        "turns": 1,
        "max_gap_s": 0.04,
        "p99_gap_s": 0.02,
        "gaps_over_50ms": 0,
        "gaps_over_100ms": 0,
    }
    return {"stream": "librivox", "seconds": 26.7, "engine_nice": "model", "run": run, **options}


def test_the_report_names_the_policy_and_switch_interval_a_run_had():
    text = "\n".join(X.render_x11(_report(engine_policy="batch", switch_interval_ms=1.0)))
    assert "SCHED_BATCH (--engine-policy)" in text
    assert "sys.setswitchinterval 1 ms" in text


def test_a_run_as_shipped_and_an_older_report_name_neither():
    for report in (_report(engine_policy=None, switch_interval_ms=None), _report()):
        text = "\n".join(X.render_x11(report))
        assert "--engine-policy" not in text and "setswitchinterval" not in text
