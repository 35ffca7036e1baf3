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


class _HungDriver:
    """A sounddevice stand-in whose stream opens, never calls back, and hangs when closed."""

    def __init__(self):
        import threading

        self.release = threading.Event()
        self.closing = threading.Event()
        driver = self

        class Default:
            device = (0, 0)

        class Stream:
            active = True

            def __init__(self, **_kw):
                pass

            def start(self):
                pass

            def abort(self):
                driver.closing.set()
                driver.release.wait(10)

            def close(self):
                pass

        self.default = Default()
        self.InputStream = Stream

    def query_devices(self, index=None):
        info = {"name": "hung mic", "max_input_channels": 1, "default_samplerate": 16000.0}
        return info if index is not None else [info]

    def check_input_settings(self, **_kw):
        pass


def test_a_stalled_stream_is_reported_lost_before_it_is_closed(monkeypatch):
    """Issue 17: the stream was closed first, so a hanging driver hid the message."""
    import desktop_rt.engine.audio.microphone as microphone

    driver = _HungDriver()
    monkeypatch.setattr(microphone, "_sounddevice", lambda: driver)
    source = SoundDeviceSource(None, stall_seconds=0.3)
    got = Collector()
    source.start(got.block, got.status)
    try:
        got.wait(lambda: LOST in got.states(), timeout=5)
        assert "stopped delivering sound" in got.statuses[-1].message
        assert driver.closing.wait(5)  # the close came after the report, and it hangs
    finally:
        driver.release.set()
        source.stop()
    assert got.states()[-1] == CLOSED
