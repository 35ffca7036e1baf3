"""A start that fails in a way nobody planned for still tells the window, instead of "loading"
forever: a missing module (psutil, once a test-only dependency) killed the helper thread and the
window said "Loading the speech model…" with no end and no message."""

from __future__ import annotations

import os
import queue
import threading
from pathlib import Path

import pytest

from desktop_rt.config import ServerSettings
from desktop_rt.engine.asr.backend import AsrBackend
from desktop_rt.engine.models.repair_notice import RepairNotice
from desktop_rt.live.embedded_server import (
    ENGINE_NICENESS,
    EmbeddedServer,
    EnginePriority,
    ServerState,
    load_niced,
    set_thread_policy,
)
from tests.support.clips import read_clip


def _missing_module(_spec: str) -> AsrBackend:
    raise ModuleNotFoundError("No module named 'psutil'")


def _next_state(published: queue.Queue[ServerState | RepairNotice]) -> ServerState:
    while True:
        event = published.get(timeout=30)  # the helper thread's report, or a failed test
        if isinstance(event, ServerState):
            return event


def test_an_unexpected_error_while_starting_is_published_as_failed(caplog):
    published: queue.Queue[ServerState | RepairNotice] = queue.Queue()
    server = EmbeddedServer(_missing_module, published.put)
    server.start(ServerSettings(port=0), "whisper-base", "Loading the speech model…")
    assert _next_state(published).state == "starting"
    failed = _next_state(published)
    server.stop()
    assert failed.state == "failed", failed
    assert "No module named 'psutil'" in failed.message
    assert server.server is None and server.backend is None
    assert any("could not start" in r.getMessage() for r in caplog.records)


def _niceness(thread: threading.Thread) -> int:
    """A thread's own nice value (Linux: PRIO_PROCESS with a thread id acts on that thread)."""
    assert thread.native_id is not None
    return os.getpriority(os.PRIO_PROCESS, thread.native_id)


def test_only_the_model_loads_niced_the_server_thread_keeps_the_uis_priority(whisper_backend):
    """The server and inference threads take the GIL for every append and pass: niced, they
    were preempted holding it and stalled the UI thread. The model loads on a niced thread."""
    base = os.getpriority(os.PRIO_PROCESS, 0)
    loaded_at: list[int] = []

    def factory(_spec: str) -> AsrBackend:
        loaded_at.append(os.getpriority(os.PRIO_PROCESS, 0))
        return whisper_backend

    published: queue.Queue[ServerState | RepairNotice] = queue.Queue()
    server = EmbeddedServer(factory, published.put, owns_backend=False)
    server.start(ServerSettings(port=0), "whisper-base", "Loading the speech model…")
    try:
        assert _next_state(published).state == "starting"
        assert _next_state(published).state == "ready"
        serving = [t for t in threading.enumerate() if t.name == "desktop-rt-server"]
        assert serving, [t.name for t in threading.enumerate()]
        assert loaded_at == [min(base + ENGINE_NICENESS, 19)]
        assert all(_niceness(t) == base for t in serving)
        assert os.getpriority(os.PRIO_PROCESS, 0) == base  # the caller's thread untouched
    finally:
        server.stop()


def test_an_error_while_loading_niced_is_raised_on_the_callers_thread():
    with pytest.raises(ModuleNotFoundError, match="psutil"):
        load_niced(_missing_module, "whisper-base")


POLICIES = {"other": os.SCHED_OTHER, "batch": os.SCHED_BATCH, "idle": os.SCHED_IDLE}


def _policy_in_proc(tid: int) -> int:
    """A thread's scheduling policy as the kernel reports it (``policy`` in its sched file)."""
    for line in Path(f"/proc/self/task/{tid}/sched").read_text().splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "policy":
            return int(value)
    raise AssertionError(f"no policy line for thread {tid}")


def _run_and_start_one(policy: str) -> tuple[list[int], list[int]]:
    """On a thread of its own: set ``policy``, start a thread; each one's policy and nice value."""
    seen: list[int] = []
    nice: list[int] = []

    def note() -> None:
        tid = threading.get_native_id()
        seen.extend([os.sched_getscheduler(0), _policy_in_proc(tid)])
        nice.append(os.getpriority(os.PRIO_PROCESS, 0))

    def parent() -> None:
        os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0) + 3)
        set_thread_policy(policy)
        note()
        child = threading.Thread(target=note)
        child.start()
        child.join()

    thread = threading.Thread(target=parent)
    thread.start()
    thread.join()
    return seen, nice


@pytest.mark.parametrize("policy", ["batch", "idle"])
def test_a_thread_under_a_policy_starts_threads_under_it_keeping_its_nice_value(policy):
    base = os.getpriority(os.PRIO_PROCESS, 0)
    seen, nice = _run_and_start_one(policy)
    assert seen == [POLICIES[policy]] * 4  # the thread and its child, two readings each
    assert nice == [min(base + 3, 19)] * 2
    assert os.sched_getscheduler(0) == os.SCHED_OTHER  # the caller's thread untouched


def test_an_unknown_scheduling_policy_is_refused():
    with pytest.raises(ValueError, match="'fifo' is not one of"):
        EnginePriority(policy="fifo")


def test_the_model_loads_under_the_servers_priority_while_the_server_thread_does_not(
    whisper_backend,
):
    loaded_at: list[tuple[int, int]] = []

    def factory(_spec: str) -> AsrBackend:
        loaded_at.append((os.sched_getscheduler(0), os.getpriority(os.PRIO_PROCESS, 0)))
        return whisper_backend

    base = os.getpriority(os.PRIO_PROCESS, 0)
    published: queue.Queue[ServerState | RepairNotice] = queue.Queue()
    server = EmbeddedServer(factory, published.put, owns_backend=False)
    server.priority = EnginePriority(niceness=2, policy="batch")
    server.start(ServerSettings(port=0), "whisper-base", "Loading the speech model…")
    try:
        assert _next_state(published).state == "starting"
        assert _next_state(published).state == "ready"
        assert loaded_at == [(os.SCHED_BATCH, min(base + 2, 19))]
        serving = [t for t in threading.enumerate() if t.name == "desktop-rt-server"]
        assert serving and all(_policy_in_proc(t.native_id or 0) == 0 for t in serving)
    finally:
        server.stop()


def _busy_threads(before: dict[int, int]) -> dict[int, int]:
    """Threads of this process that ran since ``before`` (thread id -> CPU ticks), with new ones."""
    ran = {}
    for tid, ticks in _ticks().items():
        if ticks > before.get(tid, 0):
            ran[tid] = ticks
    return ran


def _ticks() -> dict[int, int]:
    out = {}
    for name in os.listdir("/proc/self/task"):
        try:
            stat = Path(f"/proc/self/task/{name}/stat").read_text()
        except FileNotFoundError:  # ended since the listing
            continue
        fields = stat.rsplit(")", 1)[1].split()
        out[int(name)] = int(fields[11]) + int(fields[12])  # utime + stime
    return out


def test_the_models_compute_threads_run_under_the_policy_it_loaded_with(default_model_dir):
    """CTranslate2's threads inherit what the loading thread has; a pass called from a thread
    at the normal policy runs on them (checked on a fresh model with two threads)."""
    from desktop_rt.engine.asr.whisper import WhisperBackend, WhisperOptions

    def factory(_spec: str) -> AsrBackend:
        return WhisperBackend(default_model_dir, WhisperOptions(threads=2))

    older = {int(tid) for tid in os.listdir("/proc/self/task")}  # other tests' threads too
    backend = load_niced(factory, "whisper-base", EnginePriority(policy="batch"))
    try:
        before, me = _ticks(), threading.get_native_id()
        for _ in range(2):
            backend.transcribe(read_clip("ss-0870"))
        compute = set(_busy_threads(before)) - {me} - older
        policies = {}
        for tid in compute:
            try:
                policies[tid] = os.sched_getscheduler(tid)
            except ProcessLookupError:  # a thread that ended
                continue
        assert policies, "no thread but the caller's ran the pass"
        assert set(policies.values()) == {os.SCHED_BATCH}, policies
        assert os.sched_getscheduler(0) == os.SCHED_OTHER
    finally:
        backend.close()
