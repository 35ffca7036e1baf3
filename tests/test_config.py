"""Settings: first launch, round trip, migration of old files, damaged files, atomic saves."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from desktop_rt.config import (
    HANDS_FREE,
    PUSH_TO_TALK,
    SCHEMA_VERSION,
    THEMES,
    AppearanceSettings,
    AudioSettings,
    ServerSettings,
    Settings,
    SettingsError,
    load_settings,
    save_settings,
    settings_path,
)
from desktop_rt.engine.audio.vad import TurnDetectorSettings


def test_first_launch_without_a_file_gives_defaults(tmp_path):
    loaded = load_settings(tmp_path / "settings.json")
    assert loaded.settings == Settings()
    assert loaded.warnings == ()
    assert loaded.settings.audio.mode == PUSH_TO_TALK
    assert loaded.settings.server.port == 8777


def test_default_path_is_in_the_config_dir(isolated_dirs):
    assert settings_path().parent == isolated_dirs / "config"


def test_round_trip_keeps_every_value(tmp_path):
    path = tmp_path / "nested" / "settings.json"
    settings = Settings().with_group(
        audio=AudioSettings(input_device="USB Mic (hw:1,0)", mode=HANDS_FREE),
        vad=TurnDetectorSettings(threshold=0.7, silence_duration_ms=900, prefix_padding_ms=200),
        server=ServerSettings(port=9000, api_key="k-1", allowed_origins=("http://localhost:3000",)),
    )
    settings = replace(settings, captions=replace(settings.captions, font_size=31))
    save_settings(settings, path)
    loaded = load_settings(path)
    assert loaded.warnings == ()
    assert loaded.settings == settings
    assert json.loads(path.read_text())["version"] == SCHEMA_VERSION


def test_version_1_flat_file_is_migrated(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(
        json.dumps(
            {
                "push_to_talk": False,
                "device": "Built-in",
                "font": 26,
                "vad_threshold": 0.6,
                "vad_silence_ms": 700,
                "port": 8800,
                "language": "de",
                "colour_theme": "dark",
            }
        )
    )
    loaded = load_settings(path)
    s = loaded.settings
    assert s.audio.mode == HANDS_FREE and s.audio.input_device == "Built-in"
    assert s.captions.font_size == 26
    assert (s.vad.threshold, s.vad.silence_duration_ms) == (0.6, 700)
    assert s.server.port == 8800 and s.transcription.language == "de"
    assert any("colour_theme" in w for w in loaded.warnings)


def test_version_2_file_with_silence_ms_is_migrated(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(
        json.dumps(
            {
                "version": 2,
                "audio": {"mode": "hands_free"},
                "vad": {"threshold": 0.4, "silence_ms": 650, "prefix_padding_ms": 250},
            }
        )
    )
    loaded = load_settings(path)
    assert loaded.warnings == ()
    assert loaded.settings.vad == TurnDetectorSettings(
        threshold=0.4, prefix_padding_ms=250, silence_duration_ms=650
    )
    assert loaded.settings.audio.mode == HANDS_FREE
    save_settings(loaded.settings, path)
    saved = json.loads(path.read_text())
    assert saved["version"] == SCHEMA_VERSION == 3
    assert saved["vad"]["silence_duration_ms"] == 650 and "silence_ms" not in saved["vad"]


def test_the_app_and_the_engine_share_one_vad_settings_type():
    assert type(Settings().vad) is TurnDetectorSettings
    assert Settings().vad == TurnDetectorSettings()


def test_corrupt_file_gives_defaults_and_a_warning_and_keeps_the_file(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text('{"version": 2, "audio": {"mode": "hands_fr')
    loaded = load_settings(path)
    assert loaded.settings == Settings()
    assert len(loaded.warnings) == 1 and "damaged" in loaded.warnings[0]
    assert (tmp_path / "settings.json.corrupt").exists()
    # The next save works and the next load is clean.
    save_settings(Settings(), path)
    assert load_settings(path).warnings == ()


def test_invalid_utf8_is_kept_before_the_defaults_are_saved(tmp_path):
    path = tmp_path / "settings.json"
    damaged = b'{"version": 3, "server": {"port": 8123}, "note": "caf\xe9"}\n'
    path.write_bytes(damaged)
    loaded = load_settings(path)
    assert loaded.settings == Settings()
    assert len(loaded.warnings) == 1 and "damaged" in loaded.warnings[0]
    assert "settings.json.corrupt" in loaded.warnings[0]
    assert (tmp_path / "settings.json.corrupt").read_bytes() == damaged
    save_settings(Settings(), path)
    assert (tmp_path / "settings.json.corrupt").read_bytes() == damaged
    # A second damaged file never overwrites the first copy.
    path.write_bytes(b"\xff\xfe")
    load_settings(path)
    copies = sorted(p.name for p in tmp_path.glob("settings.json.corrupt*"))
    assert len(copies) == 2 and (tmp_path / "settings.json.corrupt").read_bytes() == damaged


def test_not_an_object_and_wrong_types_fall_back_per_field(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text("[1, 2]")
    assert load_settings(path).settings == Settings()
    path.write_text(
        json.dumps(
            {
                "version": 2,
                "audio": {"mode": "always_on", "input_device": 3},
                "vad": {"threshold": 5.0, "silence_ms": "long"},
                "captions": "big",
                "server": {"port": True, "allowed_origins": ["a", 2]},
            }
        )
    )
    loaded = load_settings(path)
    assert loaded.settings.audio == AudioSettings()
    assert loaded.settings.vad.threshold == 0.95  # clamped into range
    assert loaded.settings.vad.silence_duration_ms == TurnDetectorSettings().silence_duration_ms
    assert loaded.settings.server == ServerSettings()
    assert len(loaded.warnings) >= 5


def test_newer_file_is_read_with_a_warning(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"version": 99, "captions": {"font_size": 40}}))
    loaded = load_settings(path)
    assert loaded.settings.captions.font_size == 40
    assert any("newer" in w for w in loaded.warnings)


def test_save_is_atomic_and_failure_is_a_clear_error(tmp_path):
    folder = tmp_path / "cfg"
    path = folder / "settings.json"
    save_settings(Settings(), path)
    folder.chmod(0o500)
    try:
        import os

        if os.access(folder, os.W_OK):  # running as root: make the target a folder instead
            folder.chmod(0o700)
            path.unlink()
            path.mkdir()
        with pytest.raises(SettingsError, match="Could not save the settings"):
            save_settings(Settings().with_group(vad=TurnDetectorSettings(threshold=0.9)), path)
    finally:
        folder.chmod(0o700)
    assert [p.name for p in folder.iterdir() if p.name.endswith(".tmp")] == []


def test_api_keys_are_random():
    assert Settings.new_api_key() != Settings.new_api_key()


def test_theme_and_font_round_trip_and_older_files_get_the_system_theme(tmp_path):
    path = tmp_path / "settings.json"
    for theme in THEMES:
        settings = Settings().with_group(
            appearance=AppearanceSettings(theme=theme, font_family="DejaVu Sans")
        )
        save_settings(settings, path)
        assert load_settings(path).settings == settings
    path.write_text(json.dumps({"version": SCHEMA_VERSION, "captions": {"font_size": 30}}))
    loaded = load_settings(path)
    assert loaded.settings.appearance == AppearanceSettings() and loaded.warnings == ()
    assert loaded.settings.appearance.theme == "system"
    path.write_text(json.dumps({"version": SCHEMA_VERSION, "appearance": {"theme": "neon"}}))
    loaded = load_settings(path)
    assert loaded.settings.appearance.theme == "system" and "appearance.theme" in loaded.warnings[0]
