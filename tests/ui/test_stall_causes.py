"""Stall attribution (desktop_rt/ui/stall_causes.py): from thread CPU and sampled stacks to a cause."""

from __future__ import annotations

import json.encoder
import sys
import threading

from desktop_rt.ui.stall_causes import (
    GcPause,
    ThreadSample,
    ThreadTimes,
    attribute,
    frame_paths,
    kernel_wait,
    stack_of,
    thread_times,
    top_causes,
    ui_frame,
)

UI, WORKER = 101, 202
MS = 1_000_000  # ns


def _around(ui_run: float, ui_queue: float, worker_run: float) -> tuple[ThreadTimes, ThreadTimes]:
    before = ThreadTimes(0.0, {UI: (0, 0), WORKER: (0, 0)})
    after = ThreadTimes(
        0.3, {UI: (int(ui_run * MS), int(ui_queue * MS)), WORKER: (int(worker_run * MS), 0)}
    )
    return before, after


def _sample(ui_stack: tuple[str, ...], in_loop: bool, worker: tuple[str, ...] = ()) -> ThreadSample:
    return ThreadSample(0.1, ui_stack, in_loop, {"202": worker} if worker else {})


def test_ui_code_is_named_by_its_frame():
    stall = attribute(
        0.3,
        0.2,
        UI,
        _around(ui_run=190, ui_queue=0, worker_run=0),
        [_sample(("history.py:save:12", "app.py:main:3"), in_loop=False)] * 2,
    )
    assert stall.cause == "ui: history.py:save:12"
    assert stall.ui_run_ms == 190


def test_a_running_ui_thread_inside_the_event_loop_is_qt_work():
    stall = attribute(0.3, 0.2, UI, _around(180, 0, 0), [_sample(("app.py:main:3",), in_loop=True)])
    assert stall.cause == "qt: native"


def test_a_sleeping_ui_thread_while_another_thread_ran_is_the_gil():
    stall = attribute(
        0.3,
        0.2,
        UI,
        _around(ui_run=2, ui_queue=1, worker_run=190),
        [_sample(("app.py:main:3",), True, worker=("vad.py:score:40", "capture.py:run:9"))],
        python={"202"},
    )
    assert stall.cause == "gil: 202 vad.py:score:40"
    assert stall.busy_threads == {"202": 190.0}


def test_a_ui_thread_without_a_core_is_the_run_queue():
    stall = attribute(0.3, 0.2, UI, _around(ui_run=10, ui_queue=170, worker_run=150), [])
    assert stall.cause == "cpu: run queue"


def test_causes_are_ranked_by_stalled_time():
    stalls = [
        attribute(1.0, 0.06, UI, _around(60, 0, 0), [_sample(("a.py:f:1",), False)]),
        attribute(2.0, 0.07, UI, _around(70, 0, 0), [_sample(("a.py:f:1",), False)]),
        attribute(3.0, 0.30, UI, _around(0, 290, 0), []),
    ]
    assert top_causes(stalls) == [
        ("cpu: run queue", 1, 300.0, 300.0),
        ("ui: a.py:f:1", 2, 130.0, 70.0),
    ]


def test_stacks_name_our_innermost_frame_and_the_library_frame_under_it():
    frame = sys._getframe()
    stack, paths = stack_of(frame), frame_paths(frame)
    assert stack[0].startswith("test_stall_causes.py:test_stacks_name")
    assert ui_frame(stack, paths) == stack[0]
    library = ("json/encoder.py:encode:200",) + stack
    assert ui_frame(library, (json.encoder.__file__,) + paths) == (
        f"{stack[0]} > json/encoder.py:encode:200"
    )


def test_thread_times_cover_this_thread():
    times = thread_times(0.0).times
    run, queue = times[threading.get_native_id()]
    assert run > 0 and queue >= 0


def test_a_gap_spent_collecting_garbage_is_the_collector():
    pause = GcPause(start=0.12, end=0.29, generation=2, thread="desktop-rt-server")
    stall = attribute(0.3, 0.2, UI, _around(2, 150, 0), [], gc=[pause])
    assert stall.cause == "gc: generation 2 in desktop-rt-server"


def test_a_long_young_collection_was_preempted_and_is_not_the_cause():
    pause = GcPause(start=0.12, end=0.29, generation=0, thread="stall-watchdog")
    stall = attribute(0.3, 0.2, UI, _around(2, 150, 0), [], gc=[pause])
    assert stall.cause == "cpu: run queue"


def test_the_gil_is_blamed_on_a_python_thread_not_a_busier_native_one():
    native = 303
    before = ThreadTimes(0.0, {UI: (0, 0), WORKER: (0, 0), native: (0, 0)})
    after = ThreadTimes(0.3, {UI: (2 * MS, 0), WORKER: (60 * MS, 0), native: (180 * MS, 0)})
    stall = attribute(0.3, 0.2, UI, (before, after), [], python={"202"})
    assert stall.cause == "gil: 202"


def test_asleep_while_the_watchdog_waited_for_the_gil_is_a_preempted_holder():
    before = ThreadTimes(0.0, {UI: (0, 0), WORKER: (0, 0)})
    after = ThreadTimes(0.3, {UI: (2 * MS, 1 * MS), WORKER: (1 * MS, 150 * MS)})
    stall = attribute(0.3, 0.2, UI, (before, after), [], python={"202"}, gil_wait_ms=180)
    assert stall.cause == "gil: 202 without a core"
    assert stall.queued_threads == {"202": 150.0} and stall.gil_wait_ms == 180


def test_asleep_with_the_gil_free_is_qt_waiting():
    before = ThreadTimes(0.0, {UI: (0, 0), WORKER: (0, 0)})
    after = ThreadTimes(0.3, {UI: (2 * MS, 1 * MS), WORKER: (1 * MS, 150 * MS)})
    sample = ThreadSample(0.1, ("app.py:main:3",), True, {}, "S do_sys_poll")
    stall = attribute(0.3, 0.2, UI, (before, after), [sample], python={"202"}, gil_wait_ms=3)
    assert stall.cause == "qt: waiting" and stall.ui_wait == "S do_sys_poll"


def test_the_kernel_says_where_a_thread_sleeps():
    lock = threading.Lock()
    lock.acquire()
    ready = threading.Event()
    ids: list[int] = []

    def blocked() -> None:
        ids.append(threading.get_native_id())
        ready.set()
        lock.acquire()

    thread = threading.Thread(target=blocked, daemon=True)
    thread.start()
    ready.wait(10)
    waits = []
    for _ in range(200):  # until it sleeps in the lock: a bounded poll of another thread
        waits.append(kernel_wait(ids[0]))
        if "futex" in waits[-1]:
            break
        threading.Event().wait(0.01)
    lock.release()
    thread.join(10)
    assert waits[-1].startswith("S ") and "futex" in waits[-1], waits
    assert kernel_wait(threading.get_native_id()) == "R"  # this thread runs
