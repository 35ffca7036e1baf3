"""FileImport: a file recognised whole on the real model and saved as one "import" session."""

from __future__ import annotations

import pytest

from desktop_rt.history.store import TranscriptStore
from desktop_rt.history.writer import StoreWriter
from desktop_rt.live.file_import import (
    IMPORT_MODE,
    FileImport,
    ImportCancelled,
    ImportFailed,
    ImportProgress,
)
from tests.support.bad_audio import cut_mp3, write_mp3
from tests.support.clips import DATA, read_clip, reference_text, wer

BECKETT = DATA / "beckett.wav"


@pytest.fixture
def writer(tmp_path):
    w = StoreWriter(tmp_path / "history.sqlite3")
    yield w
    w.close()


def sessions(path):
    with TranscriptStore(path) as store:
        return [(row, store.turns(row.id)) for row in store.sessions()]


def test_import_saves_a_session_titled_by_the_file(writer, whisper_backend):
    seen: list[ImportProgress] = []
    job = FileImport(BECKETT, whisper_backend, writer, model="whisper-base", progress=seen.append)
    result = job.run()
    assert wer(reference_text("beckett"), result.text) < 0.1
    assert not result.partial and result.warnings == ()
    assert seen and seen[-1].fraction == pytest.approx(1.0, abs=0.02)
    assert all(p.name == "beckett.wav" for p in seen)
    [(row, turns)] = sessions(writer.path)
    assert row.id == result.session_id and row.uid == result.session_uid
    assert (row.title, row.mode, row.model) == ("beckett.wav", IMPORT_MODE, "whisper-base")
    assert row.ended_at is not None and turns and all(t.completed for t in turns)
    saved = " ".join(t.text for t in turns)
    assert wer(reference_text("beckett"), saved) < 0.1


def test_cancel_saves_nothing(writer, whisper_backend):
    job: FileImport

    def cancel_at_once(_progress: ImportProgress) -> None:
        job.cancel()

    job = FileImport(BECKETT, whisper_backend, writer, progress=cancel_at_once)
    with pytest.raises(ImportCancelled, match="cancelled"):
        job.run()
    writer.flush()
    assert sessions(writer.path) == []


def test_a_file_that_is_not_audio_fails_clearly(tmp_path, writer, whisper_backend):
    garbage = tmp_path / "notes.mp3"
    garbage.write_bytes(b"this is not audio at all " * 200)
    with pytest.raises(ImportFailed, match="notes.mp3"):
        FileImport(garbage, whisper_backend, writer).run()
    with pytest.raises(ImportFailed, match="missing.wav"):
        FileImport(tmp_path / "missing.wav", whisper_backend, writer).run()
    writer.flush()
    assert sessions(writer.path) == []


def test_a_truncated_file_is_saved_as_far_as_it_decodes(tmp_path, writer, whisper_backend):
    whole = tmp_path / "whole.mp3"
    write_mp3(whole, read_clip("beckett"))
    cut = cut_mp3(whole, tmp_path / "cut.mp3", 0.6, raising=True)
    result = FileImport(cut, whisper_backend, writer).run()
    assert result.partial
    assert any("truncated or damaged" in w for w in result.warnings)
    [(row, turns)] = sessions(writer.path)
    assert row.title == "cut.mp3" and turns
