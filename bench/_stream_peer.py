"""bench_streaming.py's peer child: whisperlivekit's LocalAgreement processor on one stream.

Runs in the peer's venv (``bench/.venv-peer``, whisperlivekit imports torch), where desktop_rt's
runtime dependencies are not installed: whisperlivekit and faster_whisper are imported inside
:func:`child_peer`, and this module otherwise needs only the bench's own modules.
"""

from __future__ import annotations

import os

import _common as C
from _stream_systems import paced_dict

PEER_MIN_CHUNK = 0.6  # = StreamingConfig.min_chunk_seconds
PEER_TRIM = ("segment", 15.0)  # whisperlivekit 0.2.26 defaults (buffer_trimming, _sec)


def pkg_version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "?"


def peer_asr(args, beam: int):
    """whisperlivekit's FasterWhisperASR as ``backend_factory`` builds it, without its warm-up
    download: int8 on the CPU with our thread count, from the local folder only, beam ``beam``."""
    from faster_whisper import WhisperModel
    from whisperlivekit.local_agreement.backends import FasterWhisperASR

    class BenchFasterWhisperASR(FasterWhisperASR):
        def load_model(self, model_size=None, cache_dir=None, model_dir=None):
            return WhisperModel(
                str(model_dir),
                device="cpu",
                compute_type="int8",
                cpu_threads=args.threads,
                num_workers=1,
                local_files_only=True,
            )

        def transcribe(self, audio, init_prompt=""):
            # Upstream FasterWhisperASR.transcribe with beam_size made a parameter.
            segments, _info = self.model.transcribe(
                audio,
                language=self.original_language,
                initial_prompt=init_prompt,
                beam_size=beam,
                word_timestamps=True,
                condition_on_previous_text=True,
                **self.transcribe_kargs,
            )
            return list(segments)

    return BenchFasterWhisperASR(lan=args.language or "auto", model_dir=str(args.model))


class PeerDriver:
    """Drives an OnlineASRProcessor as whisperlivekit's AudioProcessor does."""

    def __init__(self, online):
        self.online = online
        self.min_samples = int(PEER_MIN_CHUNK * C.SAMPLE_RATE)
        self.pending = 0
        self.inferences = 0

    def insert(self, chunk) -> None:
        self.online.insert_audio_chunk(chunk)
        self.pending += len(chunk)

    def run_iter(self) -> list:
        self.pending = 0
        self.inferences += 1
        tokens, _ = self.online.process_iter()
        return [(t.text, t.start, t.end) for t in tokens]

    def step(self) -> list:
        # whisper_streaming's loop: process once at least min_chunk of new audio has arrived.
        return self.run_iter() if self.pending >= self.min_samples else []

    def finish(self) -> list:
        # As AudioProcessor does at end of stream: one last pass over audio not yet
        # processed (finish() itself runs no inference), then flush the hypothesis.
        drained = self.run_iter() if self.pending > 0 else []
        tokens, _ = self.online.finish()
        return drained + [(t.text, t.start, t.end) for t in tokens]


def child_peer(stream: C.Stream, args, variant: str, memory: C.MemoryLog) -> dict:
    """whisperlivekit's LocalAgreement OnlineASRProcessor, driven as its AudioProcessor does.

    The ASR object is built as ``local_agreement.whisper_online.backend_factory`` builds it
    (same attributes) but without its warm-up download, and with two overrides so the model
    runs exactly like ours: int8 on the CPU with our thread count, loaded from the local
    folder only, and (unless the ``-b5`` variant) beam 1. Everything else — prompt, LocalAgreement,
    buffer trimming, temperature fallback, condition_on_previous_text — is the package's.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import whisperlivekit
    from whisperlivekit.local_agreement.online_asr import OnlineASRProcessor

    memory.mark("imports")
    beam = 5 if variant.endswith("-b5") else 1
    asr = peer_asr(args, beam)
    if variant.endswith("-vad"):
        asr.use_vad()
    asr.confidence_validation = False
    asr.tokenizer = None  # only used by "sentence" trimming
    asr.buffer_trimming, asr.buffer_trimming_sec = PEER_TRIM
    asr.backend_choice = "faster-whisper"
    memory.mark("model")
    asr.transcribe(stream.audio[: 2 * C.SAMPLE_RATE])  # warm-up
    memory.mark("warm-up")
    peer = PeerDriver(OnlineASRProcessor(asr))
    res = C.run_paced(
        stream.audio, speed=args.speed, insert=peer.insert, step=peer.step, finish=peer.finish
    )
    memory.mark("stream")
    out = paced_dict(res)
    out["inferences"] = peer.inferences
    out["config"] = {
        "package": f"whisperlivekit {getattr(whisperlivekit, '__version__', '') or pkg_version('whisperlivekit')}",
        "processor": "local_agreement.online_asr.OnlineASRProcessor (HypothesisBuffer)",
        "beam_size": beam,
        "min_chunk_seconds": PEER_MIN_CHUNK,
        "buffer_trimming": list(PEER_TRIM),
        "vad_filter": variant.endswith("-vad"),
        "vac": False,
        "threads": args.threads,
        "condition_on_previous_text": True,
    }
    return out
