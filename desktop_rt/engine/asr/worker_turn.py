"""One turn of a stream in the inference worker: :func:`run_turn`, and :func:`run_decode`.

A turn applies a stream's commands (audio, clears, configuration, at most one flush, always
last) to its transcriber, then runs one inference: the flush's ``finish()``, or ``process()``
when audio arrived. A flush whose item is to be decoded whole answers with its last committed
words and leaves the item to decode (:attr:`TurnOutcome.decode_item`): the worker runs
:func:`run_decode` as a job of its own (:mod:`.worker_decodes` says when), which answers the
flush with the decode as its ``final``; a decode that fails leaves the committed words
standing. Every Flush is answered, with no words if the inference failed; a failure drops the
stream's buffered audio and the stream goes on. Runs on the worker thread.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from desktop_rt.core_types import SAMPLE_RATE, Word
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

__all__ = ["TurnOutcome", "run_turn", "run_decode"]

log = logging.getLogger(__name__)


@dataclass
class TurnOutcome:
    """What a turn hands back: its results, in order, and the flushed item left to decode."""

    results: list[WorkerResult]
    decode_item: str | None = None
    """The item the turn's flush ended, to be decoded whole by :func:`run_decode`."""


@dataclass
class _Turn:
    """What one turn's commands did, kept up to date so a failure midway can report it."""

    inserted: int = 0  # samples taken off the queue this turn and not yet reported consumed
    had_audio: bool = False
    flush: Flush | None = None


def run_turn(
    stream: WorkerStream, transcriber: Transcriber, commands: Sequence[Command]
) -> TurnOutcome:
    """Run one turn of ``stream``: its results to deliver, in order, and the item to decode."""
    outcome = TurnOutcome([])
    turn = _Turn()
    try:
        _feed(stream, transcriber, commands, turn)
        if turn.inserted:
            outcome.results.append(ConsumedResult(turn.inserted / SAMPLE_RATE))
            turn.inserted = 0
        _infer(stream, transcriber, turn, outcome)
    except Exception as exc:
        log.exception("%s: inference failed", stream.name)
        outcome.results += _recover(stream, transcriber, turn, exc)
    return outcome


def run_decode(stream: WorkerStream, transcriber: Transcriber, item_id: str) -> list[WorkerResult]:
    """Decode the item a flush left (:attr:`TurnOutcome.decode_item`) and answer that flush with
    it; ``final`` is ``None`` (its streamed words stand) if the decode failed or heard nothing
    to decode."""
    return [FlushedResult(item_id, (), _decoded(stream, transcriber))]


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
            transcriber.set_prompt(command.prompt, command.respellings)
        else:
            log.warning("%s: unknown command %r ignored", stream.name, command)


def _infer(
    stream: WorkerStream, transcriber: Transcriber, turn: _Turn, outcome: TurnOutcome
) -> None:
    """The turn's one inference, its results added to ``outcome``: the flush's ``finish()``
    (its item left to decode whole, when it is to be), or ``process()`` after audio."""
    results = outcome.results
    if turn.flush is not None:
        stream.passes += 1
        item_id = turn.flush.item_id
        committed = tuple(transcriber.finish().committed)
        stream._tentative = ()
        if not transcriber.turn_to_decode:
            results.append(FlushedResult(item_id, committed))
            return
        if committed:
            results.append(WordsResult(item_id, committed, ()))
        outcome.decode_item = item_id
        return
    if turn.had_audio:  # one pass over the new audio
        stream.passes += 1
        update = transcriber.process()
        committed, tentative = tuple(update.committed), tuple(update.tentative)
        if committed or tentative != stream._tentative:
            stream._tentative = tentative
            results.append(WordsResult(stream._item_id or "", committed, tentative))


def _decoded(stream: WorkerStream, transcriber: Transcriber) -> tuple[Word, ...] | None:
    """The item the flush ended, decoded whole; ``None`` (its streamed words stand) if the
    decode failed."""
    try:
        return transcriber.decode_turn()
    except Exception:
        log.exception("%s: decoding the turn whole failed; its streamed words stand", stream.name)
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
