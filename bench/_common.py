"""Shared pieces of the streaming benchmark: eval streams, pacing, text normalisation, machine info.

This module is imported by the benchmark's parent process (project venv) and by every
per-system child process, including the peer's, which runs in its own venv
(``bench/.venv-peer``) where desktop_rt's runtime dependencies are *not* installed. So it
uses only the standard library, numpy and soundfile (the scorers, jiwer and whisper-normalizer,
are imported inside ``wer``, which the parent calls).
"""

from __future__ import annotations

import difflib
import functools
import os
import platform
import re
import resource
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
SAMPLE_RATE = 16_000
CHUNK_SECONDS = 0.1

# ---------------------------------------------------------------------------------------------
# Eval streams. A layout is a sequence of clip names (tests/data/NAME.wav + NAME.txt) and
# float pauses in seconds of digital silence.
# ---------------------------------------------------------------------------------------------
LIBRIVOX = ["ss-0870", "ss-0880", "ss-0890", "ss-0920", "ss-0930"]

STREAM_LAYOUTS: dict[str, list] = {
    # Exactly tests/conftest.py::librivox_stream(): each sentence followed by 0.4 s (~27 s).
    "librivox": [x for name in LIBRIVOX for x in (name, 0.4)],
    # ~60 s: the same six clips in another order, with longer and uneven pauses (thinking
    # pauses of 4-7 s, which exercise endpointing and silence handling), 1.5 s of lead-in.
    "long": [
        1.5,
        "beckett",
        4.0,
        "ss-0920",
        2.5,
        "ss-0880",
        6.0,
        "ss-0870",
        1.5,
        "ss-0930",
        7.0,
        "ss-0890",
        3.0,
    ],
}
QUICK_STREAM = "librivox"


@dataclass(frozen=True)
class Stream:
    name: str
    audio: np.ndarray  # float32 mono 16 kHz
    reference: str
    layout: list

    @property
    def seconds(self) -> float:
        return len(self.audio) / SAMPLE_RATE

    def describe(self) -> str:
        parts = [f"{x:g} s pause" if isinstance(x, float) else x for x in self.layout]
        return " + ".join(parts)


def read_clip(name: str) -> np.ndarray:
    import soundfile as sf

    audio, rate = sf.read(str(DATA / f"{name}.wav"), dtype="float32", always_2d=True)
    if rate != SAMPLE_RATE:
        raise ValueError(f"{name}.wav is {rate} Hz; the benchmark clips must be 16 kHz")
    return audio.mean(axis=1).astype(np.float32)


def engine_threads(args) -> int:
    """desktop-rt's inference threads in a child: ``--engine-threads``, else what the product
    measures on this machine for the model (``thread_choice``, cached per machine)."""
    if args.engine_threads:
        return int(args.engine_threads)
    from desktop_rt.engine.asr.thread_choice import measured_threads
    from desktop_rt.engine.asr.whisper import WhisperOptions

    options = WhisperOptions()  # the product's compute type and device
    return measured_threads(Path(args.model), options.compute_type, options.device)


def build_stream(name: str) -> Stream:
    return assemble_stream(name, STREAM_LAYOUTS[name])


def assemble_stream(name: str, layout: list) -> Stream:
    """A stream from a layout: clip names and float pauses in seconds, in order."""
    parts, texts = [], []
    for item in layout:
        if isinstance(item, float):
            parts.append(np.zeros(int(round(item * SAMPLE_RATE)), dtype=np.float32))
        else:
            parts.append(read_clip(item))
            texts.append((DATA / f"{item}.txt").read_text().strip())
    return Stream(name, np.concatenate(parts), " ".join(texts), layout)


# ---------------------------------------------------------------------------------------------
# Text
# ---------------------------------------------------------------------------------------------
def norm_tokens(text: str) -> list[str]:
    """Lower case, punctuation stripped (apostrophes kept), hyphens split: the WER form."""
    return re.sub(r"[^\w' ]", " ", text.lower().replace("-", " ")).split()


def first_shown(updates: Sequence[tuple[float, str, str]]) -> list[tuple[str, float]]:
    """Each committed word of a window's caption updates ``(time, item, committed text)``,
    in item order, with the time it first showed: a word a redraw keeps (the whole-turn
    decode rewriting a line) keeps its time, matched by text in order, so one word inserted
    before it does not restamp it; a word the redraw changes shows then."""
    per_item: dict[str, list[tuple[str, float]]] = {}
    for t, item, committed in updates:
        toks, old = norm_tokens(committed), per_item.get(item, [])
        words = [(tok, t) for tok in toks]
        matcher = difflib.SequenceMatcher(None, [w for w, _ in old], toks, autojunk=False)
        for a, b, size in matcher.get_matching_blocks():
            words[b : b + size] = old[a : a + size]
        per_item[item] = words
    return [word for words in per_item.values() for word in words]


@functools.cache
def _english_normalizer() -> Callable[[str], str]:
    from whisper_normalizer.english import EnglishTextNormalizer

    return EnglishTextNormalizer()


def whisper_tokens(text: str) -> list[str]:
    """OpenAI's ``EnglishTextNormalizer`` (package whisper-normalizer), the form the literature
    scores Whisper in: numbers as digits ("twenty five" and "25"), American spellings, "mr" as
    "mister", contractions expanded, fillers ("uh", "hmm") dropped, lower case, punctuation
    gone but for "$" and "%" ("$25", "10%"). Apply it to whole texts: numbers are read across
    words."""
    return _english_normalizer()(text).split()


NORMALISERS: dict[str, Callable[[str], list[str]]] = {
    "plain": norm_tokens,  # ours, the tests' form: case and punctuation only
    "whisper": whisper_tokens,
}


def wer(reference: str, hypothesis: str, normaliser: str = "plain") -> float:
    """Word error rate of ``hypothesis`` with both texts in one of :data:`NORMALISERS`' forms
    (an empty hypothesis: 1.0)."""
    import jiwer

    tokens = NORMALISERS[normaliser]
    ref = " ".join(tokens(reference))
    hyp = " ".join(tokens(hypothesis))
    if not hyp:
        return 1.0
    return float(jiwer.wer(ref, hyp))


# ---------------------------------------------------------------------------------------------
# Pacing
# ---------------------------------------------------------------------------------------------
Committed = Sequence[tuple[str, float, float]]  # (text, start, end) in the system's stream time


@dataclass
class PacedResult:
    words: list[dict]  # {"text", "start", "end", "commit": wall s after t0}
    audio_end_wall: float  # wall s after t0 at which the last sample was due
    final_latency: float  # finish() return minus audio_end_wall
    cpu_seconds: float  # process CPU time over the whole stream, finish included
    wall_seconds: float
    steps: int  # calls of step() (the system decides inside whether to infer)
    max_backlog: (
        float  # most audio seconds that were due but not yet inserted, seen at a step's return
    )
    slow_steps: list  # [wall s after t0 when the step began, its duration] for steps over 50 ms
    schedule: list  # chunks inserted in total before each step() call, and before finish()
    other_load: float | None  # CPU cores busy with *other* processes meanwhile (noise indicator)


def run_paced(
    audio: np.ndarray,
    *,
    speed: float,
    insert: Callable[[np.ndarray], None],
    step: Callable[[], Committed],
    finish: Callable[[], Committed],
    chunk_seconds: float = CHUNK_SECONDS,
) -> PacedResult:
    """Feed ``audio`` like a microphone would, in one thread, as a real worker does.

    Chunk ``k`` (``chunk_seconds`` long) becomes due at ``t0 + (k + 1) * chunk_seconds / speed``
    on the monotonic clock. The loop sleeps until the next chunk is due, inserts *every* chunk
    that is due by then (a backlog after a slow step arrives all at once, as a microphone queue
    would deliver it), then calls ``step()`` once. When the last chunk has been inserted the
    stream ends: ``finish()`` is called instead of ``step()``. Each committed word is stamped
    with the wall time its call returned.
    """
    chunk = max(1, int(round(chunk_seconds * SAMPLE_RATE)))
    n_chunks = (len(audio) + chunk - 1) // chunk
    chunk_wall = chunk_seconds / speed
    words: list[dict] = []
    steps = 0
    max_backlog = 0.0

    def stamp(committed: Committed, now: float) -> None:
        for text, start, end in committed:
            words.append({"text": text, "start": float(start), "end": float(end), "commit": now})

    slow_steps: list = []
    schedule: list = []
    busy0 = system_busy_seconds()
    cpu0 = time.process_time()
    t0 = time.monotonic()
    inserted = 0
    while inserted < n_chunks:
        now = time.monotonic() - t0
        due = min(n_chunks, int(now / chunk_wall + 1e-9))
        if due <= inserted:
            time.sleep(max(0.0, (inserted + 1) * chunk_wall - now))
            continue
        insert(audio[inserted * chunk : due * chunk])
        inserted = due
        schedule.append(inserted)
        if inserted < n_chunks:
            began = time.monotonic() - t0
            committed = step()
            steps += 1
            done = time.monotonic() - t0
            if done - began > 0.05:
                slow_steps.append([round(began, 3), round(done - began, 3)])
            stamp(committed, done)
            backlog = done / chunk_wall - inserted
            max_backlog = max(max_backlog, backlog * chunk_seconds)
    audio_end_wall = n_chunks * chunk_wall
    began = time.monotonic() - t0
    committed = finish()
    done = time.monotonic() - t0
    slow_steps.append([round(began, 3), round(done - began, 3)])
    stamp(committed, done)
    cpu = time.process_time() - cpu0
    busy1 = system_busy_seconds()
    return PacedResult(
        words=words,
        audio_end_wall=audio_end_wall,
        final_latency=done - audio_end_wall,
        cpu_seconds=cpu,
        wall_seconds=done,
        steps=steps,
        max_backlog=max_backlog,
        slow_steps=slow_steps,
        schedule=schedule,
        other_load=other_load(busy0, busy1, cpu, done),
    )


def replay(
    audio: np.ndarray,
    schedule: Sequence[int],
    *,
    insert: Callable[[np.ndarray], None],
    step: Callable[[], Committed],
    finish: Callable[[], Committed],
    chunk_seconds: float = CHUNK_SECONDS,
) -> list[tuple[str, float, float]]:
    """Re-run a recorded insert/step schedule without the clock (deterministic repro of a run)."""
    chunk = max(1, int(round(chunk_seconds * SAMPLE_RATE)))
    words: list[tuple[str, float, float]] = []
    prev = 0
    for i, upto in enumerate(schedule):
        insert(audio[prev * chunk : upto * chunk])
        prev = upto
        words += list(finish() if i == len(schedule) - 1 else step())
    return words


# ---------------------------------------------------------------------------------------------
# Machine
# ---------------------------------------------------------------------------------------------
def _status_mb(key: str) -> float | None:
    """A ``Vm...`` line of /proc/self/status in MB (Linux), or None where there is none."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(f"{key}:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        return None
    return None


def rss_mb() -> float | None:
    """Resident set size of this process now (Linux), or None."""
    return _status_mb("VmRSS")


def peak_rss_mb() -> float:
    """Peak resident set size of this process: its own memory since it was started.

    On Linux ``VmHWM``, not ``ru_maxrss``: Linux keeps ``ru_maxrss`` across ``execve``, so a
    child that ``subprocess`` starts (vfork, then exec) reports at least its parent's peak.
    Elsewhere ``ru_maxrss`` (macOS reports bytes).
    """
    hwm = _status_mb("VmHWM")
    if hwm is not None:
        return hwm
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if platform.system() == "Darwin" else rss / 1024


def reset_peak_rss() -> bool:
    """Set this process's peak RSS back to its RSS now (Linux 4.0+); False where it cannot."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        return False
    return True


@dataclass
class MemoryLog:
    """A child run's RSS at each step, and what the system added over the harness's data.

    Call :meth:`data_loaded` once the child holds the audio it streams and nothing of the
    system yet, :meth:`mark` after each of the system's steps, :meth:`summary` at the end.
    """

    steps: list = field(default_factory=list)  # [step, RSS MB, peak RSS MB so far]
    data_rss: float | None = None  # RSS with the data loaded, before the system's imports
    load_peak: float = 0.0  # peak RSS up to then (reading the data included)
    reset: bool = False  # whether the peak was reset there (then later peaks are the system's)

    def mark(self, step: str) -> None:
        self.steps.append([step, round(rss_mb() or 0.0, 1), round(peak_rss_mb(), 1)])

    def data_loaded(self) -> None:
        self.mark("data")
        self.data_rss = rss_mb()
        self.load_peak = peak_rss_mb()
        self.reset = reset_peak_rss()

    def summary(self) -> dict:
        """``peak_rss_mb``: the process's peak; ``added_rss_mb``: the peak after the data was
        loaded minus the RSS then (None where RSS cannot be read)."""
        self.mark("end")
        since = peak_rss_mb()
        added = None if self.data_rss is None else since - self.data_rss
        return {
            "peak_rss_mb": max(since, self.load_peak),
            "added_rss_mb": added,
            "data_rss_mb": self.data_rss,
            "rss_steps": self.steps,
        }


def system_busy_seconds() -> float | None:
    """CPU seconds all cores have spent busy since boot (Linux /proc/stat), or None."""
    try:
        with open("/proc/stat") as fh:
            fields = [int(x) for x in fh.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    # user nice system idle iowait irq softirq steal [guest guest_nice: already in user/nice]
    busy = sum(fields[:3]) + sum(fields[5:8])
    return busy / os.sysconf("SC_CLK_TCK")


def other_load(
    busy0: float | None, busy1: float | None, own_cpu: float, wall: float
) -> float | None:
    """Average cores used by other processes over ``wall`` seconds (our own CPU subtracted)."""
    if busy0 is None or busy1 is None or wall <= 0:
        return None
    return max(0.0, (busy1 - busy0 - own_cpu) / wall)


def loadavg() -> tuple[float, float, float] | None:
    try:
        return tuple(round(x, 2) for x in os.getloadavg())
    except OSError:
        return None


def machine_info() -> dict:
    model = platform.processor() or "unknown"
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
                break
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    mem_gb = None
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    mem_gb = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return {
        "cpu_model": model,
        "cores": os.cpu_count(),
        "usable_cores": usable,
        "memory_gb": mem_gb,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
    }
