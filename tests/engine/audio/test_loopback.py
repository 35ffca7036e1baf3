"""System audio through a real PulseAudio daemon: a clip played into an output is captioned.

The daemon (tests/support/pulse_daemon.py) has a null sink as the computer's speakers; ``paplay``
writes an eval clip into it at real-time pace and :class:`LoopbackSource` captures its monitor.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.audio.loopback import LoopbackSource
from desktop_rt.engine.audio.output_devices import SYSTEM_AUDIO_LABEL, list_output_devices
from desktop_rt.engine.audio.sources import CLOSED, LOST, OPEN, SourceStatus
from tests.support.clips import read_clip, wer
from tests.support.pulse_daemon import SPEAKERS, from_speech, play, pulse_daemon


class Collector:
    def __init__(self) -> None:
        self.blocks: list[np.ndarray] = []
        self.statuses: list[SourceStatus] = []
        self.changed = threading.Event()

    def block(self, samples: np.ndarray) -> None:
        self.blocks.append(samples)

    def status(self, status: SourceStatus) -> None:
        self.statuses.append(status)
        self.changed.set()

    def wait_for(self, state: str, timeout: float = 20) -> SourceStatus:
        while True:
            for status in self.statuses:
                if status.state == state:
                    return status
            assert self.changed.wait(timeout), f"no {state} status: {self.statuses}"
            self.changed.clear()

    @property
    def audio(self) -> np.ndarray:
        return np.concatenate(self.blocks) if self.blocks else np.zeros(0, np.float32)


def capture_while_playing(source: LoopbackSource, clip: str, sink: str = SPEAKERS) -> np.ndarray:
    """What ``source`` captured from before ``clip`` started playing into ``sink`` to its end."""
    daemon = pulse_daemon()
    got = Collector()
    source.start(got.block, got.status)
    try:
        got.wait_for(OPEN)
        before = sum(len(b) for b in got.blocks)
        player = play(daemon, clip, sink)
        _, err = player.communicate(timeout=120)
        assert player.returncode == 0, err.decode()
        wanted = before + len(read_clip(clip))
        deadline = time.monotonic() + 10
        while sum(len(b) for b in got.blocks) < wanted and time.monotonic() < deadline:
            time.sleep(0.05)  # bounded poll: the monitor delivers the last played blocks
    finally:
        source.stop()
    assert got.statuses[-1].state == CLOSED
    return got.audio


def test_outputs_are_listed_default_first():
    daemon = pulse_daemon()
    daemon.add_sink("listed_output")
    devices = list_output_devices()
    assert devices[0].is_default and devices[0].id == SPEAKERS
    assert "listed_output" in [d.id for d in devices]


@pytest.mark.slow
def test_what_the_computer_plays_is_transcribed_as_well_as_offline(whisper_backend):
    clip = read_clip("ss-0870")
    source = LoopbackSource()
    assert source.name == SYSTEM_AUDIO_LABEL
    audio = capture_while_playing(source, "ss-0870")
    assert len(audio) >= len(clip)  # real-time pace, nothing dropped
    offline = "".join(w.text for w in whisper_backend.transcribe(from_speech(clip), language="en"))
    heard = whisper_backend.transcribe(from_speech(audio), language="en")
    captured = "".join(w.text for w in heard)
    assert wer(offline, captured) <= 0.1, (offline, captured)


def test_a_named_output_is_captured_and_others_are_not():
    daemon = pulse_daemon()
    daemon.add_sink("app_output")
    named = capture_while_playing(LoopbackSource("app_output"), "ss-0870", sink="app_output")
    assert np.sqrt(np.mean(named**2)) > 0.01
    quiet = capture_while_playing(LoopbackSource(SPEAKERS), "ss-0870", sink="app_output")
    assert len(quiet) > SAMPLE_RATE and np.abs(quiet).max() < 1e-3


def test_an_output_that_does_not_exist_is_reported_lost_with_what_to_do():
    pulse_daemon()
    got = Collector()
    source = LoopbackSource("no such output", retry_seconds=0.1)
    source.start(got.block, got.status)
    try:
        lost = got.wait_for(LOST)
    finally:
        source.stop()
    assert "no such output" in lost.message and "Settings" in lost.message
    assert [s.state for s in got.statuses].count(LOST) == 1  # retries do not repeat it
    assert got.statuses[-1].state == CLOSED and not got.blocks


SCRIPT = """
import threading
from desktop_rt.engine.audio.loopback import LoopbackSource
from desktop_rt.engine.audio.output_devices import list_output_devices
print("devices", list_output_devices())
got, done = [], threading.Event()
def status(s):
    got.append(s)
    if s.state == "lost":
        done.set()
source = LoopbackSource()
source.start(lambda b: None, status)
assert done.wait(20)
source.stop()
print([s.state for s in got])
print(got[1].message)
"""


def test_no_sound_server_is_reported_lost_and_nothing_raises(tmp_path):
    script = tmp_path / "no_server.py"
    script.write_text(SCRIPT)
    env = {
        **os.environ,
        "PULSE_SERVER": f"unix:{tmp_path}/nothing",
        "XDG_RUNTIME_DIR": str(tmp_path),
    }
    done = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "devices []"
    assert lines[1] == "['opening', 'lost', 'closed']"
    assert "No sound server" in lines[2] and "PulseAudio or PipeWire" in lines[2]
