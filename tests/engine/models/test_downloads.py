"""Verifying, resuming and installing downloaded model files, on local files (no network)."""

from __future__ import annotations

import hashlib
import json
import subprocess

import pytest

from desktop_rt.engine.models.downloads import (
    DOWNLOAD_STAMP,
    RemoteFile,
    install,
    pending_files,
    progress_tqdm,
    staging_dir,
    verify_file,
)
from desktop_rt.errors import ModelCorruptError, ModelMissingError

WEIGHTS = bytes(range(256)) * 4096  # 1 MiB: an "LFS" file, checked by sha256
CONFIG = (
    b'{"architectures": ["WhisperForConditionalGeneration"]}\n'  # a small file, checked by git hash
)


def git_hash(path) -> str:
    return subprocess.run(
        ["git", "hash-object", str(path)], capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.fixture
def remotes(tmp_path):
    config = tmp_path / "config.json"
    config.write_bytes(CONFIG)
    return [
        RemoteFile("model.bin", len(WEIGHTS), hashlib.sha256(WEIGHTS).hexdigest()),
        RemoteFile("config.json", len(CONFIG), None, git_hash(config)),
    ]


def test_verify_checks_size_sha256_and_the_git_hash(tmp_path, remotes):
    weights, config = remotes
    (tmp_path / "model.bin").write_bytes(WEIGHTS)
    assert verify_file(tmp_path / "model.bin", weights) == weights.sha256
    assert verify_file(tmp_path / "config.json", config) == hashlib.sha256(CONFIG).hexdigest()
    (tmp_path / "model.bin").write_bytes(WEIGHTS[:-1])
    with pytest.raises(ModelCorruptError, match="incomplete"):
        verify_file(tmp_path / "model.bin", weights)
    (tmp_path / "model.bin").write_bytes(b"x" + WEIGHTS[1:])
    with pytest.raises(ModelCorruptError, match="sha256"):
        verify_file(tmp_path / "model.bin", weights)
    (tmp_path / "config.json").write_bytes(CONFIG.replace(b"W", b"V"))
    with pytest.raises(ModelCorruptError, match="git hash"):
        verify_file(tmp_path / "config.json", config)
    with pytest.raises(ModelMissingError):
        verify_file(tmp_path / "absent.bin", weights)


def test_a_second_run_fetches_only_what_is_missing_or_wrong(tmp_path, remotes):
    staging = staging_dir("small", tmp_path)
    staging.mkdir()
    (staging / "config.json").write_bytes(CONFIG)  # fetched and complete in an earlier run
    assert pending_files(staging, remotes) == [remotes[0]]
    (staging / "model.bin").write_bytes(
        WEIGHTS[: len(WEIGHTS) // 2] + b"\1" * (len(WEIGHTS) // 2)
    )  # damaged
    assert pending_files(staging, remotes) == [remotes[0]]
    assert not (staging / "model.bin").exists()  # deleted: the next fetch starts clean
    (staging / "model.bin").write_bytes(WEIGHTS)
    assert pending_files(staging, remotes) == []


def test_install_moves_a_verified_folder_into_place_in_one_step(tmp_path, remotes):
    staging = staging_dir("small", tmp_path)
    staging.mkdir()
    (staging / "model.bin").write_bytes(WEIGHTS)
    (staging / "config.json").write_bytes(CONFIG)
    (staging / ".cache" / "huggingface").mkdir(parents=True)  # the hub's resume bookkeeping
    target = tmp_path / "small"
    hashes = install(staging, target, remotes, {"repo": "org/small"})
    assert not staging.exists() and sorted(p.name for p in target.iterdir()) == [
        DOWNLOAD_STAMP,
        "config.json",
        "model.bin",
    ]
    assert hashes["model.bin"] == remotes[0].sha256
    assert json.loads((target / DOWNLOAD_STAMP).read_text())["source"] == {"repo": "org/small"}


def test_a_failed_verification_leaves_the_installed_model_untouched(tmp_path, remotes):
    target = tmp_path / "small"
    target.mkdir()
    (target / "model.bin").write_bytes(b"the old model that works")
    staging = staging_dir("small", tmp_path)
    staging.mkdir()
    (staging / "model.bin").write_bytes(WEIGHTS[::-1])
    (staging / "config.json").write_bytes(CONFIG)
    with pytest.raises(ModelCorruptError):
        install(staging, target, remotes)
    assert (target / "model.bin").read_bytes() == b"the old model that works"


def test_progress_reaches_the_callback():
    seen = []
    bar_class = progress_tqdm(lambda name, done, total: seen.append((name, done, total)))
    bar = bar_class(total=10, desc="model.bin", initial=2)
    bar.update(3)
    bar.update(5)
    bar.close()
    assert seen == [("model.bin", 5, 10), ("model.bin", 10, 10)]


def test_offline_download_is_a_clear_error(tmp_path, monkeypatch):
    # The machine really has no hub; offline mode makes the client refuse at once.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from desktop_rt.engine.models.downloads import DownloadError, download_model

    with pytest.raises(DownloadError, match="Could not download someone/some-model.*resumes"):
        download_model("someone/some-model", "some-model", root=tmp_path)
