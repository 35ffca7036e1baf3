"""Whole-file recognition next to faster-whisper offline, in a process of its own, so that
CTranslate2's int8 kernels can be chosen for it (``CT2_FORCE_CPU_ISA`` is read when the
library loads, once per process).

Run as ``python -m tests.support.isa_parity MODEL_DIR CLIP...`` with the variables set; the
last line of its output is JSON: ``{"ours": [text per clip], "offline": [text per clip]}``.
"""

from __future__ import annotations

import json
import sys

from faster_whisper import WhisperModel

from desktop_rt.engine.asr.file_transcriber import FileTranscriber
from desktop_rt.engine.asr.whisper import WhisperBackend, WhisperOptions
from tests.support.clips import read_clip


def main(model_dir: str, names: list[str]) -> None:
    backend = WhisperBackend(model_dir, WhisperOptions(threads=1))
    offline = WhisperModel(
        model_dir, device="cpu", compute_type="int8", cpu_threads=1, local_files_only=True
    )
    ours, theirs = [], []
    for name in names:
        audio = read_clip(name)
        ours.append(FileTranscriber(backend).transcribe([audio]).text)
        segments, _ = offline.transcribe(audio, word_timestamps=True)
        theirs.append("".join(s.text for s in segments))
    backend.close()
    print(json.dumps({"ours": ours, "offline": theirs}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
