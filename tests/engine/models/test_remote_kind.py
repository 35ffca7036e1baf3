"""The ``remote`` kind: what its models.toml entry must hold, its state, and that it round-trips."""

from __future__ import annotations

import pytest

from desktop_rt.engine.models.catalogue import dumps_models, parse_models_toml
from desktop_rt.engine.models.entry import ModelEntry, ModelsFileError
from desktop_rt.engine.models.kinds import entry_loader, entry_report, kind_named

GOOD = """
[models.gpu]
backend = "remote"
ttl = 30
concurrency_limit = 2
options = { url = "wss://gpu.lan:8777/v1/realtime", api_key_env = "GPU_KEY", upstream_model = "large-v3" }
"""


def test_a_remote_entry_reads_and_writes_back(tmp_path):
    config = parse_models_toml(GOOD, tmp_path / "models.toml")
    entry = config.get("gpu")
    assert entry.backend == "remote" and entry.ttl == 30 and entry.concurrency_limit == 2
    assert entry.option("url") == "wss://gpu.lan:8777/v1/realtime"
    assert parse_models_toml(dumps_models(config)) == parse_models_toml(GOOD)


@pytest.mark.parametrize(
    ("table", "words"),
    [
        ('backend = "remote"', "needs options = { url ="),
        ('backend = "remote"\noptions = { url = "http://x:1" }', "must be a ws:// or wss:// URL"),
        ('backend = "remote"\noptions = { url = "wss://" }', "with a host"),
        ('backend = "remote"\noptions = { url = "wss://u:p@h/v1/realtime" }', "credentials"),
        ('backend = "remote"\ncmd = "x ${PORT}"\noptions = { url = "ws://h" }', "no cmd or env"),
        ('backend = "remote"\npaths = { model = "/m" }\noptions = { url = "ws://h" }', "no paths"),
        ('backend = "remote"\noptions = { url = "ws://h", key = "k" }', "unknown option"),
        ('backend = "whisper"\npaths = { model = "/m" }\noptions = { url = "ws://h" }', "unknown"),
    ],
)
def test_wrong_remote_entries_are_refused_by_name(tmp_path, table, words):
    with pytest.raises(ModelsFileError, match="models.toml, line") as caught:
        parse_models_toml(f"[models.r]\n{table}\n", tmp_path / "models.toml")
    assert words in str(caught.value)


def test_its_state_names_a_missing_key_variable_or_ca_file(monkeypatch, tmp_path):
    monkeypatch.delenv("GPU_KEY", raising=False)
    entry = parse_models_toml(GOOD).get("gpu")
    report = entry_report(entry)
    assert not report.ready and "GPU_KEY" in report.state and report.location.startswith("wss://")
    monkeypatch.setenv("GPU_KEY", "sk-x")
    assert entry_report(entry).ready
    missing_ca = ModelEntry(
        "r", "remote", options=(("url", "wss://h"), ("ca_file", str(tmp_path / "no.pem")))
    )
    assert "no.pem does not exist" in entry_report(missing_ca).state


def test_it_is_not_loaded_in_this_process():
    entry = parse_models_toml(GOOD).get("gpu")
    assert not kind_named("remote").in_process
    with pytest.raises(ValueError, match="not one loaded in this process"):
        entry_loader(entry)
