"""``desktop-rt models list|add|remove|limits`` on a models file in a temporary config dir."""

from __future__ import annotations

import argparse
import json
import sys

import pytest

from desktop_rt.cli import main
from desktop_rt.commands.models import _entry_for_download
from desktop_rt.engine.models.catalogue import load_models_file


@pytest.fixture
def config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("DESKTOP_RT_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path / "config"


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(["models", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_list_shows_the_embedded_model_without_a_file(config_dir, capsys):
    code, out, _ = run(capsys, "list")
    assert code == 0 and out.splitlines()[1].startswith("whisper-base  whisper")
    code, out, _ = run(capsys, "list", "--json")
    listing = json.loads(out)
    assert [m["id"] for m in listing["models"]] == ["whisper-base"] and listing[
        "max_loaded_models"
    ] == 1
    assert not (config_dir / "models.toml").exists()


def test_add_list_and_remove(config_dir, default_model_dir, capsys):
    code, out, _ = run(
        capsys,
        "add",
        "fast",
        "--backend",
        "whisper",
        "--model",
        str(default_model_dir),
        "--ttl",
        "600",
        "--concurrency-limit",
        "2",
        "--option",
        "threads=2",
        "--option",
        "language=en",
    )
    assert code == 0 and "added fast" in out
    cmd = f"{sys.executable} -m desktop_rt.cli serve --port ${{PORT}}"
    code, _, _ = run(
        capsys,
        "add",
        "child",
        "--backend",
        "command",
        "--cmd",
        cmd,
        "--option",
        "upstream_model=whisper-base",
        "--env",
        "DESKTOP_RT_CONFIG_DIR=/tmp/x",
    )
    assert code == 0
    code, _, _ = run(
        capsys, "add", "whisper-base", "--backend", "whisper", "--replace", "--ttl", "30"
    )
    assert code == 0
    config = load_models_file(config_dir / "models.toml")
    assert config.ids == ("whisper-base", "fast", "child")
    fast = config.get("fast")
    assert (
        fast.model_path == str(default_model_dir)
        and fast.ttl == 600
        and fast.concurrency_limit == 2
    )
    assert dict(fast.options) == {"threads": 2, "language": "en"}
    assert config.get("child").cmd == cmd and dict(config.get("child").env) == {
        "DESKTOP_RT_CONFIG_DIR": "/tmp/x"
    }
    assert config.get("whisper-base").ttl == 30

    code, out, _ = run(capsys, "list", "--json")
    states = {m["id"]: m["state"] for m in json.loads(out)["models"]}
    assert states["fast"] == "ready" and states["child"] == "ready"

    code, out, _ = run(capsys, "remove", "fast")
    assert code == 0 and load_models_file(config_dir / "models.toml").ids == (
        "whisper-base",
        "child",
    )
    assert default_model_dir.is_dir()  # remove never deletes files it did not download


@pytest.mark.parametrize(
    "argv, words",
    [
        (
            ["add", "x", "--backend", "whisper", "--model", "/no/such/folder"],
            ["Not added", "/no/such/folder"],
        ),
        (["add", "x", "--backend", "command", "--cmd", "server --port 80"], ["${PORT}"]),
        (
            ["add", "x", "--backend", "whisper", "--model", ".", "--option", "colour=red"],
            ["unknown option", "threads"],
        ),
        (["add", "whisper-base", "--backend", "llama", "--replace"], ["embedded model"]),
        (["remove", "whisper-base"], ["cannot be removed"]),
        (["remove", "nope"], ["no model 'nope'"]),
        (["limits", "--max-loaded-models", "0"], ["max_loaded_models", "1 or more"]),
    ],
)
def test_mistakes_are_refused_with_a_clear_message(config_dir, capsys, argv, words):
    code, _, err = run(capsys, *argv)
    assert code == 1
    for word in words:
        assert word in err, err
    assert not (config_dir / "models.toml").exists()


def test_adding_an_existing_id_needs_replace(config_dir, default_model_dir, capsys):
    assert (
        run(capsys, "add", "fast", "--backend", "whisper", "--model", str(default_model_dir))[0]
        == 0
    )
    code, _, err = run(
        capsys, "add", "fast", "--backend", "whisper", "--model", str(default_model_dir)
    )
    assert code == 1 and "--replace" in err


def test_limits(config_dir, capsys):
    code, out, _ = run(
        capsys, "limits", "--global-concurrency-limit", "4", "--max-loaded-models", "2"
    )
    assert code == 0 and "global_concurrency_limit = 4" in out
    config = load_models_file(config_dir / "models.toml")
    assert (config.global_concurrency_limit, config.max_loaded_models) == (4, 2)


def test_a_broken_models_file_is_reported_with_its_line(config_dir, capsys):
    config_dir.mkdir(parents=True)
    (config_dir / "models.toml").write_text(
        '[models.a]\nbackend = "whisper"\npaths = { model = 3 }\n'
    )
    code, _, err = run(capsys, "list")
    assert (
        code == 1 and "models.toml, line 3: models.a.paths.model: must be a non-empty string" in err
    )


def test_a_download_becomes_an_entry_of_the_right_backend(tmp_path):
    args = argparse.Namespace(
        backend=None,
        option=["language=en"],
        ttl=0.0,
        concurrency_limit=0,
        repo="org/Qwen3-ASR-GGUF",
        revision="main",
    )
    names = ["Qwen3-ASR-0.6B-Q8_0.gguf", "mmproj-Qwen3-ASR-0.6B-f16.gguf"]
    entry = _entry_for_download(args, "qwen", tmp_path, names, {n: "a" * 64 for n in names})
    assert entry.backend == "llama" and entry.model_path == str(tmp_path / names[0])
    assert entry.mmproj == str(tmp_path / names[1]) and entry.source.repo == "org/Qwen3-ASR-GGUF"
    args.repo = "Systran/faster-whisper-small"
    entry = _entry_for_download(
        args, "small", tmp_path, ["config.json", "model.bin"], {"model.bin": "b" * 64}
    )
    assert entry.backend == "whisper" and entry.model_path == str(tmp_path) and entry.mmproj is None
