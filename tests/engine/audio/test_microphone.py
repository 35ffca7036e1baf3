"""The sounddevice microphone through PortAudio, on a virtual ALSA capture device."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from desktop_rt.engine.audio.microphone import SoundDeviceSource, list_input_devices
from desktop_rt.engine.audio.sources import CLOSED, LOST, OPEN
from tests.support.capture_support import Collector, tone


def _virtual_mic(home: Path, name: str) -> None:
    """An ALSA ``file`` PCM that reads a raw tone as its capture input (no sound card needed)."""
    raw = home / "in.raw"
    raw.write_bytes((tone(1.0) * 32767).astype("<f4").tobytes())
    (home / ".asoundrc").write_text(
        f'pcm.{name} {{\n type file\n slave.pcm "null"\n file "/dev/null"\n infile "{raw}"\n'
        f' format "raw"\n hint {{ show on description "virtual mic" }}\n}}\n'
    )


def test_sounddevice_source_waits_for_a_missing_device_and_opens_it_when_it_appears(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert all(d.name != "desktop_rt_test_mic" for d in list_input_devices(refresh=True))
    source = SoundDeviceSource("desktop_rt_test_mic", retry_seconds=0.1, stall_seconds=1.0)
    got = Collector()
    source.start(got.block, got.status)
    try:
        got.wait(lambda: LOST in got.states())
        assert "not available" in got.statuses[-1].message
        _virtual_mic(tmp_path, "desktop_rt_test_mic")  # "plugged in"
        got.wait(lambda: OPEN in got.states())
        got.wait(lambda: len(got.blocks) >= 3)
    finally:
        source.stop()
    assert got.states()[-1] == CLOSED
    assert got.blocks[0].dtype == np.float32 and got.blocks[0].ndim == 1
    assert source.samplerate == 16000
    assert "desktop_rt_test_mic" in [d.name for d in list_input_devices(refresh=True)]
