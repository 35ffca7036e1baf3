"""Which sources the settings ask for: the microphone, system audio, both, or one app."""

from __future__ import annotations

import pytest

from desktop_rt.config import (
    APPLICATION,
    MEETING,
    MICROPHONE,
    SYSTEM_AUDIO,
    AudioSettings,
    Settings,
    settings_from_dict,
    settings_to_dict,
)
from desktop_rt.engine.audio.app_streams import AppAudioSource
from desktop_rt.engine.audio.loopback import LoopbackSource
from desktop_rt.engine.audio.microphone import SoundDeviceSource
from desktop_rt.engine.audio.output_devices import SYSTEM_AUDIO_LABEL
from desktop_rt.engine.audio.sources import FileAudioSource
from desktop_rt.live.source_choice import (
    OTHERS,
    YOU,
    NoApplicationChosenError,
    meeting_sources,
    source_for,
)
from tests.support.clips import DATA


def test_the_microphone_is_the_default_source():
    assert AudioSettings().source == MICROPHONE
    source = source_for(Settings().with_group(audio=AudioSettings(input_device="USB mic")))
    assert isinstance(source, SoundDeviceSource) and source.device == "USB mic"


def test_system_audio_is_a_loopback_of_the_chosen_output():
    source = source_for(Settings().with_group(audio=AudioSettings(source=SYSTEM_AUDIO)))
    assert isinstance(source, LoopbackSource) and source.output is None
    assert source.name == SYSTEM_AUDIO_LABEL
    audio = AudioSettings(source=SYSTEM_AUDIO, output_device="hdmi")
    named = source_for(Settings().with_group(audio=audio))
    assert isinstance(named, LoopbackSource) and named.output == "hdmi"


def test_meeting_mode_labels_the_microphone_you_and_system_audio_others():
    you, others = meeting_sources(AudioSettings(source=MEETING, input_device="USB mic"))
    assert (you.speaker, others.speaker) == (YOU, OTHERS)
    assert isinstance(you.source, SoundDeviceSource) and isinstance(others.source, LoopbackSource)
    file_mic = FileAudioSource(DATA / "ss-0870.wav")
    you, _ = meeting_sources(AudioSettings(source=MEETING), file_mic)
    assert you.source is file_mic


def test_the_source_survives_a_save_and_a_bad_value_falls_back():
    settings = Settings().with_group(audio=AudioSettings(source=MEETING, output_device="hdmi"))
    loaded, warnings = settings_from_dict(settings_to_dict(settings))
    assert loaded.audio.source == MEETING and loaded.audio.output_device == "hdmi"
    assert not warnings
    doc = settings_to_dict(settings)
    doc["audio"]["source"] = "the radio"
    loaded, warnings = settings_from_dict(doc)
    assert loaded.audio.source == MICROPHONE and warnings


def test_one_applications_sound_needs_its_name():
    audio = AudioSettings(source=APPLICATION, application="Zoom")
    source = source_for(Settings().with_group(audio=audio))
    assert isinstance(source, AppAudioSource) and source.application == "Zoom"
    with pytest.raises(NoApplicationChosenError, match="Choose one in Settings"):
        source_for(Settings().with_group(audio=AudioSettings(source=APPLICATION)))


def test_meeting_mode_can_take_others_from_one_application():
    audio = AudioSettings(source=MEETING, application="Zoom")
    you, others = meeting_sources(audio)
    assert isinstance(you.source, SoundDeviceSource)
    assert isinstance(others.source, AppAudioSource) and others.source.application == "Zoom"
    assert isinstance(source_for(Settings().with_group(audio=audio)), SoundDeviceSource)
