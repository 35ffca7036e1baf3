"""The systems bench_streaming.py compares, by name, where the peer's Python lives, and the
fields every paced child reports (:func:`paced_dict`).

``OURS`` is desktop-rt's streaming engine alone, ``SESSION`` the app's hands-free session path,
``OFFLINE`` faster-whisper on the whole file (the floor) and ``PEER`` whisperlivekit's
LocalAgreement processor, with its variants. No desktop_rt imports: the peer's child uses it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import _common as C
from _session_child import SESSION

BENCH = Path(__file__).resolve().parent
PEER_PYTHON = BENCH / ".venv-peer" / "bin" / "python"
OURS, OFFLINE, PEER = "desktop-rt", "offline", "whisperlivekit"
# Extra peer variants, selectable with --systems:
#   whisperlivekit-b5   the peer's shipped decoding (beam 5) instead of our beam 1
#   whisperlivekit-vad  faster-whisper's vad_filter on in the peer (what its use_vad() sets)
PEER_VARIANTS = {PEER, "whisperlivekit-b5", "whisperlivekit-vad"}
DEFAULT_SYSTEMS = [OURS, OFFLINE, PEER]
ALL_SYSTEMS = {OURS, SESSION, OFFLINE} | PEER_VARIANTS


def log(*args) -> None:
    print(*args, file=sys.stderr, flush=True)


def paced_dict(res: C.PacedResult) -> dict:
    return {
        "words": res.words,
        "final_latency": res.final_latency,
        "cpu_seconds": res.cpu_seconds,
        "wall_seconds": res.wall_seconds,
        "audio_end_wall": res.audio_end_wall,
        "steps": res.steps,
        "max_backlog": res.max_backlog,
        "slow_steps": res.slow_steps,
        "schedule": res.schedule,
        "other_load": res.other_load,
    }
