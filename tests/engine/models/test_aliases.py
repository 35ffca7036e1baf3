"""Aliases and time bounds in the models file: reading, validation, writing back, resolving."""

from __future__ import annotations

import dataclasses

import pytest

from desktop_rt.engine.models.aliases import OPENAI_NAMES, AliasMap
from desktop_rt.engine.models.catalogue import (
    DEFAULT_LOAD_TIMEOUT,
    DEFAULT_WAIT_TIMEOUT,
    ModelEntry,
    ModelsConfig,
    ModelsFileError,
    dumps_models,
    parse_models_toml,
    save_models_file,
)
from desktop_rt.engine.models.embedded import DEFAULT_MODEL_ID

SMALL = """\
[models.small]
backend = "whisper"
paths = { model = "/models/faster-whisper-small" }
"""


def parse(text: str, tmp_path=None):
    return parse_models_toml(text, tmp_path / "models.toml" if tmp_path else None)


def test_openai_names_route_to_the_default_model_out_of_the_box():
    names = ModelsConfig().alias_map()
    for name in OPENAI_NAMES:
        assert names.resolve(name) == DEFAULT_MODEL_ID, name
    assert names.names == (DEFAULT_MODEL_ID, *OPENAI_NAMES)
    assert "gpt-4o-mini-transcribe" in OPENAI_NAMES and "whisper-1" in OPENAI_NAMES
    # a dated snapshot routes like its name; other names route nowhere
    assert names.resolve("gpt-4o-transcribe-2025-03-20") == DEFAULT_MODEL_ID
    assert names.resolve("gpt-realtime-2025-08-28") == DEFAULT_MODEL_ID
    assert names.resolve("whisper-2") is None and names.resolve("small-2025-01-01") is None
    assert names.resolve(DEFAULT_MODEL_ID) == DEFAULT_MODEL_ID


def test_the_default_model_is_the_one_the_server_names():
    config = parse(SMALL)
    assert config.alias_map("small").resolve("whisper-1") == "small"
    assert config.alias_map().resolve("whisper-1") == DEFAULT_MODEL_ID
    assert AliasMap.build((), (), None).names == ()  # no model, no built-in names


def test_the_aliases_table_routes_names_and_turns_built_in_ones_off(tmp_path):
    text = (
        '[aliases]\ngpt-4o-transcribe = "small"\nwhisper-1 = ""\n"team:fast" = "whisper-base"\n\n'
        + SMALL
    )
    config = parse(text, tmp_path)
    assert config.aliases == (
        ("gpt-4o-transcribe", "small"),
        ("whisper-1", ""),
        ("team:fast", DEFAULT_MODEL_ID),
    )
    names = config.alias_map()
    assert names.resolve("gpt-4o-transcribe") == "small"
    assert names.resolve("gpt-4o-transcribe-2025-03-20") == "small"  # the snapshot follows it
    assert names.resolve("whisper-1") is None  # turned off
    assert names.resolve("team:fast") == DEFAULT_MODEL_ID
    assert names.resolve("gpt-4o-mini-transcribe") == DEFAULT_MODEL_ID  # the rest stay
    assert "whisper-1" not in names.names and names.names[:2] == (DEFAULT_MODEL_ID, "small")
    assert parse(dumps_models(config)) == config  # written back, read back equal


def test_a_model_id_wins_over_a_built_in_name():
    config = parse('[models.whisper-1]\nbackend = "whisper"\npaths = { model = "/m" }\n')
    names = config.alias_map()
    assert names.resolve("whisper-1") == "whisper-1" and names.names.count("whisper-1") == 1


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ('small = "whisper-base"', "'small' is a model id; an alias cannot take it"),
        ('whisper-base = "small"', "'whisper-base' is a model id; an alias cannot take it"),
        ('fast = "medium"', "names the model 'medium', which is not in this file"),
        ('fast = "gpt-4o-transcribe"', "names the model 'gpt-4o-transcribe', which is not"),
        ("fast = 3", "must be a model id (a string), not the number 3"),
        ('fast = ""', "an empty target turns off a built-in name"),
        ('"bad name" = "small"', "an alias uses letters, digits and . _ : -"),
    ],
)
def test_a_wrong_alias_is_an_error_naming_the_line_and_key(tmp_path, table, expected):
    text = SMALL + "\n[aliases]\n" + table + "\n"
    with pytest.raises(ModelsFileError) as caught:
        parse(text, tmp_path)
    message = str(caught.value)
    assert expected in message, message
    assert str(tmp_path / "models.toml") in message and ", line 6: aliases." in message


def test_the_aliases_must_be_a_table():
    with pytest.raises(ModelsFileError, match="aliases: must be a table, not the string"):
        parse('aliases = "whisper-1"\n')


def test_the_time_bounds_are_read_checked_and_written_back(tmp_path):
    assert (ModelsConfig().wait_timeout, ModelsConfig().load_timeout) == (
        DEFAULT_WAIT_TIMEOUT,
        DEFAULT_LOAD_TIMEOUT,
    )
    assert (DEFAULT_WAIT_TIMEOUT, DEFAULT_LOAD_TIMEOUT) == (120.0, 600.0)
    config = parse("wait_timeout = 7.5\nload_timeout = 90\n" + SMALL)
    assert (config.wait_timeout, config.load_timeout) == (7.5, 90.0)
    assert "wait_timeout = 7.5\nload_timeout = 90\n" in dumps_models(config)
    assert parse(dumps_models(config)) == config
    for bad in ("wait_timeout = 0", "wait_timeout = -1", 'load_timeout = "soon"'):
        with pytest.raises(ModelsFileError, match="must be a number of seconds, above 0"):
            parse(bad + "\n", tmp_path)


def test_removing_a_model_removes_its_aliases_and_an_alias_blocks_its_id(tmp_path):
    config = parse('[aliases]\nfast = "small"\nwhisper-1 = ""\n\n' + SMALL)
    without = config.without("small")
    assert without.aliases == (("whisper-1", ""),)
    save_models_file(without, tmp_path / "models.toml")  # the next start reads it
    taken = ModelEntry("fast", "whisper", model_path="/models/other")
    with pytest.raises(ModelsFileError, match="'fast' is an alias in the models file"):
        config.with_entry(taken)
    assert dataclasses.replace(config, aliases=()).with_entry(taken).get("fast") == taken
