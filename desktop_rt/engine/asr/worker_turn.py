"""One turn of a stream in the inference worker: :func:`run_turn`.

A turn applies a stream's commands (audio, clears, configuration, at most one flush, always
last) to its transcriber, then runs one inference: the flush's ``finish()``, or ``process()``
when audio arrived. Every Flush is answered, with no words if the inference failed; a failure
drops the stream's buffered audio and the stream goes on. Runs on the worker thread.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.asr.worker_results import (
    ConsumedResult,
    FailedResult,
    FlushedResult,
    Transcriber,
    WordsResult,
    WorkerResult,
)
from desktop_rt.engine.asr.worker_stream import WorkerStream
from desktop_rt.engine.protocol.events import AudioChunk, Clear, Command, Configure, Flush

__all__ = ["run_turn"]

log = logging.getLogger(__name__)


@dataclass
class _Turn:
    """What one turn's commands did, kept up to date so a failure midway can report it."""

    inserted: int = 0  # samples taken off the queue this turn and not yet reported consumed
    had_audio: bool = False
    flush: Flush | None = None


def run_turn(
    stream: WorkerStream, transcriber: Transcriber, commands: Sequence[Command]
) -> list[WorkerResult]:
    """Run one turn of ``stream``; returns the results to deliver, in order."""
    results: list[WorkerResult] = []
    turn = _Turn()
    try:
        _feed(stream, transcriber, commands, turn)
        if turn.inserted:
            results.append(ConsumedResult(turn.inserted / SAMPLE_RATE))
            turn.inserted = 0
        result = _infer(stream, transcriber, turn)
        if result is not None:
            results.append(result)
    except Exception as exc:
        log.exception("%s: inference failed", stream.name)
        results += _recover(stream, transcriber, turn, exc)
    return results


def _feed(
    stream: WorkerStream, transcriber: Transcriber, commands: Sequence[Command], turn: _Turn
) -> None:
    """Apply the turn's commands up to inference, noting what they did in ``turn``."""
    for command in commands:
        if isinstance(command, AudioChunk):
            stream._item_id = command.item_id
            transcriber.insert_audio(command.samples)
            turn.inserted += len(command.samples)
            turn.had_audio = True
        elif isinstance(command, Flush):
            turn.flush = command  # always the turn's last command
        elif isinstance(command, Clear):
            transcriber.clear()
            stream._tentative = ()
            turn.inserted += stream._dropped  # reported as consumed: off the queue
            stream._dropped = 0
        elif isinstance(command, Configure):
            transcriber.set_language(command.language)
            transcriber.set_prompt(command.prompt)
        else:
            log.warning("%s: unknown command %r ignored", stream.name, command)


def _infer(stream: WorkerStream, transcriber: Transcriber, turn: _Turn) -> WorkerResult | None:
    """The turn's one inference: the flush's ``finish()``, or ``process()`` after audio."""
    if turn.flush is not None:
        stream.passes += 1
        update = transcriber.finish()
        stream._tentative = ()
        return FlushedResult(turn.flush.item_id, tuple(update.committed))
    if turn.had_audio:  # one pass over the new audio
        stream.passes += 1
        update = transcriber.process()
        committed, tentative = tuple(update.committed), tuple(update.tentative)
        if committed or tentative != stream._tentative:
            stream._tentative = tentative
            return WordsResult(stream._item_id or "", committed, tentative)
    return None


def _recover(
    stream: WorkerStream, transcriber: Transcriber, turn: _Turn, exc: Exception
) -> list[WorkerResult]:
    """After a failed turn: report it, drop the stream's audio, answer its flush."""
    results: list[WorkerResult] = []
    if turn.inserted:
        results.append(ConsumedResult(turn.inserted / SAMPLE_RATE))
    stream._tentative = ()
    try:
        transcriber.clear()
    except Exception:
        log.exception("%s: clearing after a failure failed", stream.name)
    results.append(FailedResult(str(exc) or type(exc).__name__))
    if turn.flush is not None:
        results.append(FlushedResult(turn.flush.item_id, ()))
    return results
