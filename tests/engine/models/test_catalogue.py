"""The models file: reading, validation errors that name the line and key, writing it back."""

from __future__ import annotations

import pytest

from desktop_rt.engine.models.catalogue import (
    EMBEDDED_ENTRY,
    ModelEntry,
    ModelsConfig,
    ModelsFileError,
    ModelSource,
    dumps_models,
    load_models_file,
    models_file_path,
    parse_models_toml,
    parse_option_value,
    save_models_file,
)
from desktop_rt.engine.models.embedded import DEFAULT_MODEL_ID

EXAMPLE = """\
global_concurrency_limit = 8
max_loaded_models = 2

[models.fast]
backend = "whisper"
ttl = 600
concurrency_limit = 2
paths = { model = "/models/faster-whisper-small" }
options = { threads = 4, language = "en" }

[models.qwen3-asr]
backend = "llama"
paths = { model = "/models/q.gguf", mmproj = "/models/mmproj-q.gguf" }
options = { repeat_penalty = 1.1, repeat_last_n = 2048 }

[models.lfm]
backend = "command"
cmd = "llama-server --host 127.0.0.1 --port ${PORT} -m /models/a.gguf"
ttl = 0.5
options = { upstream_model = "a", start_timeout = 60 }
env = { CUDA_VISIBLE_DEVICES = "0" }
"""


def test_an_example_file_reads_with_the_embedded_model_first(tmp_path):
    config = parse_models_toml(EXAMPLE, tmp_path / "models.toml")
    assert config.ids == (DEFAULT_MODEL_ID, "fast", "qwen3-asr", "lfm")
    assert config.global_concurrency_limit == 8 and config.max_loaded_models == 2
    fast = config.get("fast")
    assert fast.backend == "whisper" and fast.model_path == "/models/faster-whisper-small"
    assert fast.ttl == 600 and fast.concurrency_limit == 2
    assert fast.option("threads") == 4 and fast.option("language") == "en"
    qwen = config.get("qwen3-asr")
    assert qwen.mmproj == "/models/mmproj-q.gguf" and qwen.option("repeat_penalty") == 1.1
    lfm = config.get("lfm")
    assert lfm.cmd.endswith("-m /models/a.gguf") and lfm.ttl == 0.5
    assert lfm.option("start_timeout") == 60.0 and isinstance(lfm.option("start_timeout"), float)
    assert dict(lfm.env) == {"CUDA_VISIBLE_DEVICES": "0"}
    assert config.get(DEFAULT_MODEL_ID) == EMBEDDED_ENTRY


def test_no_file_means_only_the_embedded_model(tmp_path):
    config = load_models_file(tmp_path / "absent.toml")
    assert config.ids == (DEFAULT_MODEL_ID,) and config.global_concurrency_limit == 0
    assert config.max_loaded_models == 1
    assert models_file_path().name == "models.toml"


def test_the_embedded_model_takes_settings_but_not_files():
    config = parse_models_toml(
        '[models.whisper-base]\nttl = 30\nconcurrency_limit = 3\noptions = { language = "de" }\n'
    )
    entry = config.get(DEFAULT_MODEL_ID)
    assert (
        entry.embedded
        and entry.ttl == 30
        and entry.concurrency_limit == 3
        and entry.option("language") == "de"
    )
    assert config.ids == (DEFAULT_MODEL_ID,)
    with pytest.raises(ModelsFileError, match="embedded model"):
        parse_models_toml('[models.whisper-base]\npaths = { model = "/x" }\n')


@pytest.mark.parametrize(
    "text, line, words",
    [
        (
            '[models.a]\nbackend = "whisper"\nttl = "ten"\npaths = { model = "/x" }\n',
            3,
            ["models.a.ttl", "number of seconds", "'ten'"],
        ),
        (
            '[models.a]\nbackend = "whisper"\npaths = { model = "/x" }\noptions = { thread = 2 }\n',
            4,
            ["models.a.options.thread", "unknown option", "threads"],
        ),
        ("max_loaded_models = 0\n", 1, ["max_loaded_models", "1 or more"]),
        ("globl_concurrency_limit = 3\n", 1, ["globl_concurrency_limit", "unknown key"]),
        (
            '\n[models.b]\nbackend = "whisperx"\n',
            3,
            ["models.b.backend", "'whisper', 'llama', 'command'"],
        ),
        (
            '[models.b]\nbackend = "command"\ncmd = "llama-server --port 8080"\n',
            3,
            ["models.b.cmd", "${PORT}"],
        ),
        ('[models.b]\nbackend = "llama"\n', 1, ["models.b.paths", "GGUF text model"]),
        (
            '[models.b]\nbackend = "whisper"\npaths = { model = "/x", mmproj = "/y" }\n',
            3,
            ["mmproj", "llama"],
        ),
        (
            '[models.b]\nbackend = "whisper"\npaths = { model = "/x" }\nconcurrency_limit = -1\n',
            4,
            ["models.b.concurrency_limit", "whole number"],
        ),
        (
            '[models.b]\nbackend = "whisper"\npaths = { model = "/x" }\nttl = 5\ncolour = "red"\n',
            5,
            ["models.b.colour", "unknown key"],
        ),
        ('[models."bad id!"]\nbackend = "whisper"\n', 1, ["bad id!", "letters, digits"]),
        (
            '[models.q]\nbackend = "llama"\npaths = { model = "/t.gguf", mmproj = "/m.gguf" }\n'
            "options = { encoder_block_seconds = 3 }\n",
            4,
            ["models.q.options.encoder_block_seconds", "1, 2, 4, 8", "3"],
        ),
    ],
)
def test_errors_name_the_file_line_and_key(tmp_path, text, line, words):
    path = tmp_path / "models.toml"
    path.write_text(text)
    with pytest.raises(ModelsFileError) as caught:
        load_models_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path}, line {line}: "), message
    for word in words:
        assert word in message, message


def test_a_syntax_error_names_its_line(tmp_path):
    path = tmp_path / "models.toml"
    path.write_text('[models.a]\nbackend = "whisper\n')
    with pytest.raises(ModelsFileError, match=r"not valid TOML: .*line 2"):
        load_models_file(path)


def test_writing_then_reading_gives_the_same_models(tmp_path):
    config = parse_models_toml(EXAMPLE)
    odd = ModelEntry(
        "odd.id:v2",
        "whisper",
        model_path='/models/with "quotes" and \\ and ü\tand\ttabs',
        source=ModelSource("org/repo", "main", (("model.bin", "ab" * 32),)),
    )
    config = config.with_entry(odd)
    path = save_models_file(config, tmp_path / "sub" / "models.toml")
    again = load_models_file(path)
    assert again == config
    assert again.get("odd.id:v2").model_path == odd.model_path
    assert not list(path.parent.glob(".models.*"))  # the temporary file was renamed into place


def test_with_entry_replaces_in_place_and_without_refuses_the_embedded_model():
    config = parse_models_toml(EXAMPLE)
    changed = config.with_entry(ModelEntry("fast", "whisper", model_path="/elsewhere"))
    assert changed.ids == config.ids and changed.get("fast").model_path == "/elsewhere"
    assert changed.without("fast").ids == (DEFAULT_MODEL_ID, "qwen3-asr", "lfm")
    with pytest.raises(ModelsFileError, match="cannot be removed"):
        config.without(DEFAULT_MODEL_ID)
    with pytest.raises(ModelsFileError, match="no model 'nope'"):
        config.without("nope")
    with pytest.raises(ModelsFileError, match=r"models\.x\.cmd.*\$\{PORT\}"):
        config.with_entry(ModelEntry("x", "command", cmd="server --port 1"))


def test_the_embedded_entry_is_written_only_with_settings():
    assert "[models" not in dumps_models(ModelsConfig())
    text = dumps_models(
        ModelsConfig((ModelEntry(DEFAULT_MODEL_ID, "whisper", ttl=5, embedded=True),))
    )
    assert "[models.whisper-base]\nttl = 5\n" in text and "backend" not in text


def test_option_values_from_the_command_line_are_typed():
    assert parse_option_value("whisper", "threads=4") == ("threads", 4)
    assert parse_option_value("llama", "repeat_penalty=1.1") == ("repeat_penalty", 1.1)
    assert parse_option_value("llama", "draft=false") == ("draft", False)
    assert parse_option_value("command", "upstream_model=a=b") == ("upstream_model", "a=b")
    with pytest.raises(ModelsFileError, match="not a whole number"):
        parse_option_value("whisper", "threads=many")
    with pytest.raises(ModelsFileError, match="unknown option"):
        parse_option_value("whisper", "repeat_penalty=1.1")
    with pytest.raises(ModelsFileError, match="NAME=VALUE"):
        parse_option_value("whisper", "threads")
