"""One set of loaders for the command line (--model) and the router's models.toml entries."""

from __future__ import annotations

import pytest

from desktop_rt.engine.models.catalogue import ModelEntry
from desktop_rt.engine.models.kinds import kind_for_entry, load_entry, open_backend
from desktop_rt.engine.models.runtimes import entry_loader
from desktop_rt.errors import ModelFormatError


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
        )  # 0: default_threads()
    finally:
        embedded.close()


def test_entries_this_process_cannot_load_are_refused_up_front(default_model_dir):
    command = ModelEntry(id="far", backend="command", cmd="desktop-rt serve --port ${PORT}")
    with pytest.raises(ValueError, match="command model"):
        kind_for_entry(command)
    with pytest.raises(ValueError, match="not one loaded in this process"):
        entry_loader(command)
    with pytest.raises(ModelFormatError, match="--mmproj goes with a GGUF"):
        open_backend(str(default_model_dir), mmproj="x-mmproj.gguf")
