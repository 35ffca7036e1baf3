"""The history I/O thread: jobs run in order on their own thread; failures go to the future."""

from __future__ import annotations

import threading

import pytest

from desktop_rt.history.store import StoreError, TranscriptStore
from desktop_rt.history.worker import HistoryWorker


def test_jobs_run_in_order_on_the_worker_thread(tmp_path):
    worker = HistoryWorker(tmp_path / "h.sqlite3")
    try:
        first = worker.submit(lambda store: store.begin_session("s1", title="one"))
        threads = worker.submit(lambda store: threading.current_thread())
        rows = worker.submit(lambda store: store.sessions())
        assert isinstance(first.result(10), int)
        assert threads.result(10) is not threading.current_thread()
        assert [r.title for r in rows.result(10)] == ["one"]
    finally:
        worker.close(timeout=10)
    with TranscriptStore(tmp_path / "h.sqlite3") as store:
        assert [r.uid for r in store.sessions()] == ["s1"]


def test_a_failing_job_fails_its_future_and_the_next_job_runs(tmp_path):
    worker = HistoryWorker(tmp_path / "h.sqlite3")
    try:
        bad = worker.submit(lambda store: store.transcript(42))
        good = worker.submit(lambda store: store.sessions())
        with pytest.raises(StoreError, match="no session 42"):
            bad.result(10)
        assert good.result(10) == []
    finally:
        worker.close(timeout=10)


def test_a_store_that_cannot_open_fails_each_job_clearly(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    worker = HistoryWorker(blocker / "h.sqlite3")
    try:
        for _ in range(2):
            with pytest.raises(StoreError, match="Could not open"):
                worker.submit(lambda store: store.sessions()).result(10)
    finally:
        worker.close(timeout=10)


def test_after_close_jobs_are_refused(tmp_path):
    worker = HistoryWorker(tmp_path / "h.sqlite3")
    worker.close(timeout=10)
    with pytest.raises(RuntimeError, match="closed"):
        worker.submit(lambda store: store.sessions()).result(10)
