"""The history writer thread: disk full reported once, writes retried in order, open failures."""

from __future__ import annotations

import threading

import pytest

from desktop_rt.history.store import StoreDiskFullError, StoreError, TranscriptStore
from desktop_rt.history.writer import StoreWriter


def test_writer_thread_reports_disk_full_once_then_retries_and_recovers(tmp_path):
    path = tmp_path / "h.sqlite3"
    errors: list[StoreError] = []
    recovered = threading.Event()
    writer = StoreWriter(
        path, on_error=errors.append, on_recovered=recovered.set, retry_seconds=0.05
    )
    try:
        writer.begin_session("s1")
        writer.save_turn("s1", "i0", text=" before")
        assert writer.flush()
        size = path.stat().st_size
        writer.limit_size(size)
        for n in range(5):
            writer.save_turn("s1", f"i{n + 1}", text="y" * 8000)
        assert writer.flush()
        assert len(errors) == 1 and isinstance(errors[0], StoreDiskFullError)
        assert writer.pending_failed >= 1
        writer.limit_size(1 << 30)  # space came back
        assert recovered.wait(10)
        assert writer.pending_failed == 0
    finally:
        writer.close()
    with TranscriptStore(path) as reader:
        turns = reader.turns(reader.sessions()[0].id)
    assert [t.item_id for t in turns] == ["i0", "i1", "i2", "i3", "i4", "i5"]


def test_writer_open_failure_is_raised(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreError, match="Could not open"):
        StoreWriter(blocker / "h.sqlite3")
