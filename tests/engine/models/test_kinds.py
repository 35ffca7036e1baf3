"""The kinds: one set of loaders for --model and models.toml entries, one state report, one claim."""

from __future__ import annotations

import pytest

from desktop_rt.engine.models.catalogue import EMBEDDED_ENTRY, ModelEntry, ModelsFileError
from desktop_rt.engine.models.kinds import (
    BACKENDS,
    KINDS,
    claiming_kind,
    entry_report,
    kind_for_download,
    kind_named,
    kind_of,
    load_entry,
    local_entry,
    open_backend,
    served_entry,
)
from desktop_rt.engine.models.runtimes import entry_loader
from desktop_rt.errors import ModelError, ModelFormatError


def test_an_entry_and_the_command_line_load_the_same_model_with_their_options(default_model_dir):
    entry = ModelEntry(
        id="base-en",
        backend="whisper",
        model_path=str(default_model_dir),
        options=(("threads", 1), ("beam_size", 2), ("language", "en")),
    )
    from_entry = load_entry(entry)
    from_cli = open_backend(str(default_model_dir), threads=1)
    try:
        assert from_entry.name == "base-en"  # clients see the entry's id
        assert (from_entry.options.threads, from_entry.options.beam_size) == (1, 2)
        assert from_cli.options.threads == 1 and from_cli.name == default_model_dir.name
        # language is a session default, not a backend option: it does not reach the backend
        assert not hasattr(from_entry.options, "language")
    finally:
        from_entry.close()
        from_cli.close()
    embedded = entry_loader(ModelEntry(id="whisper-base", backend="whisper", embedded=True))()
    try:
        assert (
            embedded.name == "whisper-base" and embedded.options.threads == 0
        )  # 0: measured on this machine (thread_choice)
    finally:
        embedded.close()


def test_entries_this_process_cannot_load_are_refused_up_front(default_model_dir):
    command = ModelEntry(id="far", backend="command", cmd="desktop-rt serve --port ${PORT}")
    with pytest.raises(ValueError, match="command model"):
        load_entry(command)
    with pytest.raises(ValueError, match="not one loaded in this process"):
        entry_loader(command)
    with pytest.raises(ModelFormatError, match="--mmproj goes with a GGUF"):
        open_backend(str(default_model_dir), mmproj="x-mmproj.gguf")


def test_each_backend_value_is_one_kind():
    assert BACKENDS == ("whisper", "llama", "command", "remote")
    assert all(kind_named(name).name == name for name in BACKENDS)
    assert kind_named("whisperx") is None
    assert [k.name for k in KINDS if k.in_process] == ["whisper", "llama"]
    assert "encoder_block_seconds" in kind_named("llama").options
    assert kind_of(EMBEDDED_ENTRY).name == "whisper"


def test_specs_and_downloads_are_claimed_by_their_kind(tmp_path, default_model_dir):
    assert claiming_kind("whisper-base").name == "whisper"
    assert claiming_kind(str(default_model_dir)).name == "whisper"
    assert claiming_kind(str(tmp_path / "q.gguf")).name == "llama"
    assert claiming_kind(str(tmp_path / "nothing")) is None
    assert served_entry("whisper-base").embedded
    assert served_entry("q.gguf").backend == "llama"
    assert served_entry("faster-whisper-small").backend == "whisper"
    names = ["model-q8.gguf", "mmproj-model.gguf"]
    assert kind_for_download(tmp_path, names).name == "llama"
    assert kind_for_download(tmp_path, ["model.bin", "config.json"]).name == "whisper"


def test_one_report_says_whether_an_entry_is_there(tmp_path, default_model_dir):
    ready = entry_report(ModelEntry("w", "whisper", model_path=str(default_model_dir)))
    assert (ready.state, ready.ready, ready.captions) == ("ready", True, True)
    assert ready.size > 0 and ready.location == ready.spec == str(default_model_dir)
    absent = entry_report(ModelEntry("w", "whisper", model_path=str(tmp_path / "gone")))
    assert absent.state.startswith("missing: Model folder") and not absent.ready
    text, proj = tmp_path / "t.gguf", tmp_path / "mmproj-t.gguf"
    text.write_bytes(b"GGUF" + b"\0" * 96)
    llama = entry_report(ModelEntry("q", "llama", model_path=str(text), mmproj=str(proj)))
    assert llama.state == f"missing: {proj}" and llama.location == f"{text} + {proj}"
    proj.write_bytes(b"GGUF")
    llama = entry_report(ModelEntry("q", "llama", model_path=str(text), mmproj=str(proj)))
    assert (llama.state, llama.ready, llama.captions, llama.size) == ("ready", True, False, 104)
    far = entry_report(ModelEntry("c", "command", cmd="no-such-program-here --port ${PORT}"))
    assert far.state == "missing: no-such-program-here not found" and not far.captions
    embedded = entry_report(EMBEDDED_ENTRY)
    assert embedded.ready and embedded.captions and embedded.location == "(embedded)"


def test_local_files_become_an_entry_of_their_kind(tmp_path, default_model_dir):
    entry = local_entry("w", default_model_dir)
    assert (entry.backend, entry.model_path, entry.mmproj) == (
        "whisper",
        str(default_model_dir),
        None,
    )
    text, proj = tmp_path / "t.gguf", tmp_path / "mmproj-t.gguf"
    text.write_bytes(b"GGUF")
    with pytest.raises(ModelsFileError, match="mmproj"):
        local_entry("q", text)
    with pytest.raises(ModelsFileError, match="does not exist"):
        local_entry("q", text, proj)
    proj.write_bytes(b"GGUF")
    assert local_entry("q", text, proj).mmproj == str(proj)
    with pytest.raises(ModelError, match="lacks model.bin"):
        local_entry("e", tmp_path)
    with pytest.raises(ModelsFileError, match="neither"):
        local_entry("x", tmp_path / "absent")
