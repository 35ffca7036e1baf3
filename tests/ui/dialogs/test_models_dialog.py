"""Models dialog over the models file: list, add local, download (progress, cancel, error), remove, choose."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from desktop_rt.config import Settings
from desktop_rt.engine.models.catalogue import ModelsFileError, load_models_file
from desktop_rt.errors import ModelError
from desktop_rt.ui.dialogs.models_dialog import DownloadCancelled, ModelsDialog


def copying_source(
    src: Path, dest_root: Path, chunk: int = 64 * 1024, gate: threading.Event | None = None
):
    """A download function that copies ``src`` (a model folder) in chunks, reporting progress.

    With ``gate``, it waits for the gate after the first chunk of each file (so a test can cancel
    mid-download deterministically).
    """

    def download(repo: str, model_id: str, progress, cancelled) -> Path:
        if not src.exists():
            raise FileNotFoundError(f"{repo}: no such repository ({src} is missing)")
        target = dest_root / model_id
        staging = dest_root / f".{model_id}.download"
        staging.mkdir(parents=True, exist_ok=True)
        for path in sorted(p for p in src.iterdir() if p.is_file()):
            total, done = path.stat().st_size, 0
            with path.open("rb") as fin, (staging / path.name).open("wb") as fout:
                while block := fin.read(chunk):
                    if cancelled():
                        raise DownloadCancelled()
                    fout.write(block)
                    done += len(block)
                    progress(path.name, done, total)
                    if gate is not None and not gate.wait(30):
                        raise TimeoutError("gate never opened")
        staging.rename(target)
        return target

    return download


@pytest.fixture
def models_path(tmp_path) -> Path:
    return tmp_path / "config" / "models.toml"


def test_lists_the_embedded_model_with_size_and_state(qtbot, models_path, default_model_dir):
    dialog = ModelsDialog(Settings(), models_path=models_path)
    qtbot.addWidget(dialog)
    assert dialog.table.rowCount() == 1
    assert dialog.table.item(0, 0).text() == "✓ whisper-base"
    assert dialog.table.item(0, 2).text() == "145 MB"
    assert dialog.table.item(0, 3).text() == "installed"
    dialog.table.selectRow(0)
    assert not dialog.remove_button.isEnabled()  # the embedded model stays


def test_add_a_local_folder_and_a_gguf_with_its_mmproj_to_the_models_file(
    qtbot, models_path, default_model_dir, tmp_path
):
    dialog = ModelsDialog(Settings(), models_path=models_path)
    qtbot.addWidget(dialog)
    with pytest.raises(ModelError):
        dialog.add_local(tmp_path)  # not a model folder
    model_id = dialog.add_local(default_model_dir)
    gguf, mmproj = tmp_path / "qwen-asr.gguf", tmp_path / "mmproj-qwen-asr.gguf"
    gguf.write_bytes(b"GGUF" + b"\0" * 2000)
    mmproj.write_bytes(b"GGUF" + b"\0" * 1000)
    with pytest.raises(ModelsFileError, match="mmproj"):
        dialog.add_local(gguf)
    gguf_id = dialog.add_local(gguf, mmproj)
    saved = load_models_file(models_path)
    assert saved.ids == ("whisper-base", model_id, gguf_id)
    assert saved.get(model_id).backend == "whisper" and saved.get(model_id).model_path == str(
        default_model_dir
    )
    assert saved.get(gguf_id).backend == "llama" and saved.get(gguf_id).mmproj == str(mmproj)
    rows = {e.id: e for e in dialog.entries}
    assert rows[model_id].state == "ready" and rows[model_id].captions
    assert rows[gguf_id].size == 3008 and not rows[gguf_id].captions  # GGUF serves API clients only


def test_choose_captions_model_and_language_goes_to_settings(qtbot, models_path, default_model_dir):
    dialog = ModelsDialog(Settings(), models_path=models_path)
    qtbot.addWidget(dialog)
    dialog.add_local(default_model_dir)
    dialog.table.selectRow(1)
    assert dialog.use_button.isEnabled()
    dialog.use_button.click()
    assert dialog.table.item(1, 0).text().startswith("✓ ")
    dialog.language.setCurrentIndex(dialog.language.findData("en"))
    result = dialog.result_settings()
    assert result.transcription.model_id == str(default_model_dir)
    assert result.transcription.language == "en"


def test_remove_asks_first_and_falls_back_to_the_embedded_model(
    qtbot, models_path, default_model_dir
):
    dialog = ModelsDialog(Settings(), models_path=models_path)
    qtbot.addWidget(dialog)
    model_id = dialog.add_local(default_model_dir)
    dialog.use(str(default_model_dir))
    questions = []
    dialog.confirm = lambda text: questions.append(text) or False
    dialog.table.selectRow(1)
    dialog.remove_button.click()
    assert questions and model_id in questions[0]
    assert load_models_file(models_path).ids == ("whisper-base", model_id)  # said no: kept
    dialog.confirm = lambda text: True
    dialog.remove_button.click()
    assert load_models_file(models_path).ids == ("whisper-base",)
    assert dialog.result_settings().transcription.model_id == "whisper-base"


def test_download_shows_progress_and_adds_the_model(
    qtbot, models_path, default_model_dir, tmp_path
):
    dest = tmp_path / "models"
    dialog = ModelsDialog(
        Settings(),
        models_path=models_path,
        download_fn=copying_source(default_model_dir, dest, chunk=8 << 20),
    )
    qtbot.addWidget(dialog)
    seen = []
    dialog.progress.valueChanged.connect(seen.append)
    with qtbot.waitSignal(dialog.download_done, timeout=60_000) as done:
        dialog.start_download("Systran/faster-whisper-base", "whisper-base-copy")
        assert (
            dialog.downloading
            and not dialog.progress.isHidden()
            and not dialog.cancel_button.isHidden()
        )
    assert done.args == ["whisper-base-copy"]
    assert seen and max(seen) == 1000  # the bar reached the end of a file
    qtbot.waitUntil(lambda: not dialog.downloading)
    assert dialog.progress.isHidden() and dialog.download_button.isEnabled()
    entry = load_models_file(models_path).get("whisper-base-copy")
    assert (
        entry.model_path == str(dest / "whisper-base-copy")
        and entry.source.repo == "Systran/faster-whisper-base"
    )
    assert {e.id: e for e in dialog.entries}["whisper-base-copy"].state == "ready"


def test_cancel_stops_the_download_and_adds_nothing(
    qtbot, models_path, default_model_dir, tmp_path
):
    gate = threading.Event()
    dest = tmp_path / "models"
    dialog = ModelsDialog(
        Settings(),
        models_path=models_path,
        download_fn=copying_source(default_model_dir, dest, gate=gate),
    )
    qtbot.addWidget(dialog)
    with qtbot.waitSignal(dialog.progress.valueChanged, timeout=30_000):
        dialog.start_download("Systran/faster-whisper-base", "partial")
    with qtbot.waitSignal(dialog.download_cancelled, timeout=30_000):
        dialog.cancel_button.click()
        gate.set()
    qtbot.waitUntil(lambda: not dialog.downloading)
    assert "cancelled" in dialog.message.text()
    assert load_models_file(models_path).ids == ("whisper-base",)
    assert not (dest / "partial").exists()
    shutil.rmtree(dest, ignore_errors=True)


def test_a_failed_download_says_why(qtbot, models_path, tmp_path):
    dialog = ModelsDialog(
        Settings(),
        models_path=models_path,
        download_fn=copying_source(tmp_path / "nowhere", tmp_path / "models"),
    )
    qtbot.addWidget(dialog)
    with qtbot.waitSignal(dialog.download_failed, timeout=30_000) as failed:
        dialog.start_download("someone/missing-model")
    assert "no such repository" in failed.args[0]
    qtbot.waitUntil(lambda: not dialog.downloading)
    assert "failed" in dialog.message.text() and dialog.download_button.isEnabled()
    assert load_models_file(models_path).ids == ("whisper-base",)
