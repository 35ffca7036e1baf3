"""``POST /v1/audio/transcriptions`` and ``/v1/audio/translations``: OpenAI's REST recognition.

Call order: the server makes one ``RestEndpoint(host)`` and routes the path to :meth:`route`
(after the same host, origin and key checks as ``/v1/realtime``); ``close()`` when it stops.
A request: the multipart body is streamed into a temp dir (removed whatever happens), its
fields checked (:mod:`.rest_params`), the model resolved like ``?model=`` (aliases included),
admitted and leased from the router like a websocket session, then the file is recognised
whole by a :class:`~desktop_rt.engine.asr.file_transcriber.FileTranscriber` on a thread, each
window on the model's inference worker (:mod:`.rest_backend`). The answer is one body in the
asked ``response_format`` or, with ``stream=true``, server-sent events. Errors: OpenAI's JSON.
A translation is the same request on the model's English view
(:class:`~desktop_rt.engine.asr.translation.EnglishTranslation`); a model that cannot translate
is refused with 400 ``model_cannot_translate`` once it is loaded (its traits say so).
A model served by another server (``remote``, ``command``) gets the form passed on as it came
(:mod:`.rest_remote`), with the same admission, lease and activity row.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import shutil
import tempfile
from collections.abc import Awaitable
from http import HTTPStatus
from pathlib import Path
from typing import Any, TypeVar

from websockets.http11 import Request

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.backend import Task
from desktop_rt.engine.asr.file_transcriber import (
    FileOptions,
    FileProgress,
    FileResult,
    FileTranscriber,
)
from desktop_rt.engine.asr.file_windows import WindowOptions
from desktop_rt.engine.asr.translation import EnglishTranslation
from desktop_rt.engine.asr.worker import WorkerStoppedError
from desktop_rt.engine.audio.file_decode import AudioFileReader
from desktop_rt.engine.models.proxy import ProxiedRuntime
from desktop_rt.engine.models.router import Admission, LimitReachedError, RouterError
from desktop_rt.engine.models.runtimes import InProcessRuntime
from desktop_rt.engine.server.activity import ActivityMeter
from desktop_rt.engine.server.connection import ConnectionHost
from desktop_rt.engine.server.handshake import REALTIME_PATH
from desktop_rt.engine.server.rest_backend import RecognitionStopped, WorkerBackend
from desktop_rt.engine.server.rest_formats import render, sse
from desktop_rt.engine.server.rest_http import (
    TRANSLATIONS_PATH,
    BodyError,
    HttpExchange,
    PostRequest,
)
from desktop_rt.engine.server.rest_multipart import (
    MultipartError,
    MultipartParser,
    UploadedFile,
    boundary_of,
)
from desktop_rt.engine.server.rest_params import RestError, TranscriptionParams
from desktop_rt.engine.server.rest_remote import RestForward
from desktop_rt.errors import AudioDecodeError

__all__ = ["RestEndpoint"]

JsonObject = dict[str, Any]
T = TypeVar("T")

# stream=true: a short first window, so the first delta comes soon (file_transcription.md)
_STREAMED = FileOptions(windows=WindowOptions(first_window_seconds=6.0))


class _ClientLeft(Exception):
    pass


class RestEndpoint:
    """See the module docstring. ``host`` is the server (config, sessions, stopping)."""

    def __init__(self, host: ConnectionHost):
        self.host = host
        self._tasks: set[asyncio.Task[Any]] = set()

    def close(self) -> None:
        """Cancel the requests in progress (the server stops)."""
        for task in list(self._tasks):
            task.cancel()

    async def route(self, request: Request) -> tuple[HTTPStatus, JsonObject]:
        """The route handler; the answer is written to the exchange, not returned."""
        if not isinstance(request, PostRequest) or request.exchange is None:
            return HTTPStatus.METHOD_NOT_ALLOWED, {
                "error": {
                    "message": "POST a multipart/form-data request with the audio as 'file'.",
                    "type": "invalid_request_error",
                    "code": "method_not_allowed",
                    "param": None,
                }
            }
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            path = request.path.partition("?")[0].rstrip("/")
            await self._answer(
                request.exchange, "translate" if path == TRANSLATIONS_PATH else "transcribe"
            )
        finally:
            if task is not None:
                self._tasks.discard(task)
        return HTTPStatus.OK, {}

    async def _answer(self, exchange: HttpExchange, task: Task) -> None:
        folder = Path(tempfile.mkdtemp(prefix="desktop-rt-upload-"))
        try:
            params, upload, fields = await self._read_form(exchange, folder, task)
            await self._transcribe(exchange, params, upload, fields)
        except RestError as exc:
            shutil.rmtree(folder, ignore_errors=True)  # gone before the client reads the answer
            if not exchange.responded:
                await exchange.send_error(exc.status, exc.message, exc.code, exc.param, exc.type_)
            else:  # a stream already started: the error is its last event
                error = {"message": exc.message, "type": exc.type_, "param": exc.param}
                await exchange.write(sse({"error": {**error, "code": exc.code}}))
        except _ClientLeft:
            pass
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    async def _read_form(
        self, exchange: HttpExchange, folder: Path, task: Task
    ) -> tuple[TranscriptionParams, UploadedFile, dict[str, list[str]]]:
        """The checked fields, the uploaded file, and the fields as they came."""
        headers = exchange.request.headers
        try:
            parser = MultipartParser(boundary_of(headers.get("Content-Type")), folder)
            try:
                async for data in exchange.body(self.host.config.max_request_bytes):
                    parser.feed(data)
                parser.finish()
            finally:
                parser.close()
        except BodyError as exc:
            raise RestError(exc.status, exc.message, exc.code) from None
        except MultipartError as exc:
            raise RestError(HTTPStatus.BAD_REQUEST, str(exc), "invalid_multipart") from None
        params = TranscriptionParams.from_fields(parser.fields, task)
        if parser.file is None:
            raise RestError(
                HTTPStatus.BAD_REQUEST,
                "No audio: send the file as the multipart part named 'file'.",
                "missing_file",
                "file",
            )
        return params, parser.file, parser.fields

    def _model(self, params: TranscriptionParams) -> str:
        router = self.host.sessions.router
        if params.model is None:
            return self.host.config.model_id
        model_id = router.resolve(params.model)
        if model_id is None:
            name = params.model[:100]
            raise RestError(
                HTTPStatus.NOT_FOUND,
                f"The model '{name}' is not served here; models here: {', '.join(router.ids)}. "
                "GET /v1/models lists them and their aliases.",
                "model_not_found",
                "model",
            )
        return model_id

    async def _transcribe(
        self,
        exchange: HttpExchange,
        params: TranscriptionParams,
        upload: UploadedFile,
        fields: dict[str, list[str]],
    ) -> None:
        model_id = self._model(params)
        reader = await asyncio.to_thread(_open, upload)
        router = self.host.sessions.router
        try:
            admission: Admission = router.admit(model_id)
        except LimitReachedError as exc:
            raise RestError(
                HTTPStatus.TOO_MANY_REQUESTS, str(exc), exc.code, "model", "rate_limit_error"
            ) from None
        meter = ActivityMeter()
        outcome = "failed"
        try:
            lease = await _until_left(exchange, router.acquire(model_id))
            try:
                if isinstance(lease.runtime, ProxiedRuntime):
                    target = lease.runtime.upstream(REALTIME_PATH)
                    path = exchange.request.path.partition("?")[0]
                    forward = RestForward(target, path, fields, upload)
                    meter.audio_seconds = reader.duration or 0.0
                    meter.completed(await _until_left(exchange, forward.send(exchange)))
                    outcome = "passed on"
                    return
                backend = _worker_backend(lease.runtime, model_id, params.task)
                lease.on_revoke = lambda _message: backend.cancel()
                try:
                    language = params.language or _default_language(lease.runtime)
                    options = _STREAMED if params.stream else FileOptions()
                    transcriber = FileTranscriber(
                        backend, language=language, prompt=params.prompt, options=options
                    )
                    result = await self._run(exchange, params, transcriber, reader)
                finally:
                    backend.close()
            finally:
                lease.release()
            meter.audio_seconds = result.seconds
            meter.completed(result.text)
            outcome = "answered"
        except RouterError as exc:
            raise RestError(
                HTTPStatus.SERVICE_UNAVAILABLE, str(exc), exc.code, "model", "server_error"
            ) from None
        finally:
            admission.release()
            noun = "translation" if params.task == "translate" else "transcription"
            self._record(exchange, meter, model_id, f"{noun} {outcome}")

    async def _run(
        self,
        exchange: HttpExchange,
        params: TranscriptionParams,
        transcriber: FileTranscriber,
        reader: AudioFileReader,
    ) -> FileResult:
        """Recognise the file on a thread; answer as the request asked."""
        loop = asyncio.get_running_loop()
        words: asyncio.Queue[tuple[Word, ...] | None] = asyncio.Queue()

        def progress(update: FileProgress) -> None:
            if update.words and params.stream:
                loop.call_soon_threadsafe(words.put_nowait, update.words)

        job = asyncio.ensure_future(
            asyncio.to_thread(
                functools.partial(
                    transcriber.transcribe,
                    reader.chunks(),
                    total_seconds=reader.duration,
                    progress=progress,
                )
            )
        )
        job.add_done_callback(lambda _job: words.put_nowait(None))
        try:
            if params.stream:
                await _stream(exchange, words)
            result = await _until_left(exchange, asyncio.shield(job))
        except (_ClientLeft, asyncio.CancelledError):
            _stop(transcriber)
            with contextlib.suppress(Exception):
                await job
            raise
        except (RecognitionStopped, WorkerStoppedError):
            raise _unloaded() from None
        except AudioDecodeError as exc:
            raise _bad_file(str(exc)) from None
        except Exception as exc:
            raise RestError(
                HTTPStatus.INTERNAL_SERVER_ERROR,
                f"Recognition failed: {exc}",
                "recognition_failed",
                type_="server_error",
            ) from None
        body, content_type = render(
            result.words,
            params.response_format,
            language=result.language,
            seconds=result.seconds,
            with_words=params.word_times,
            task=params.task,
        )
        if params.stream:
            await exchange.write(sse({"type": "transcript.text.done", "text": result.text}))
        else:
            await exchange.send(HTTPStatus.OK, body, content_type)
        return result

    def _record(
        self, exchange: HttpExchange, meter: ActivityMeter, model: str, outcome: str
    ) -> None:
        address = exchange.connection.remote_address
        client = f"{address[0]}:{address[1]}" if address else "unknown"
        self.host.sessions.record(meter, model, client, None, f"POST {outcome}")


async def _stream(exchange: HttpExchange, words: asyncio.Queue[tuple[Word, ...] | None]) -> None:
    """Server-sent ``transcript.text.delta`` events as windows are done, until the job ends."""
    await exchange.start(HTTPStatus.OK, "text/event-stream")
    started = False
    while (batch := await _until_left(exchange, words.get())) is not None:
        delta = "".join(w.text for w in batch)
        if not started:
            delta = delta.lstrip()
        if delta:
            started = True
            await exchange.write(sse({"type": "transcript.text.delta", "delta": delta}))


async def _until_left(exchange: HttpExchange, awaitable: Awaitable[T]) -> T:
    """Await ``awaitable`` unless the client leaves first (then :class:`_ClientLeft`)."""
    task = asyncio.ensure_future(awaitable)
    lost: asyncio.Future[Any] = exchange.lost
    await asyncio.wait([task, lost], return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        return task.result()
    task.cancel()
    with contextlib.suppress(BaseException):
        await task
    raise _ClientLeft()


def _open(upload: UploadedFile) -> AudioFileReader:
    try:
        return AudioFileReader(upload.path)
    except AudioDecodeError as exc:
        raise _bad_file(str(exc).replace(str(upload.path), repr(upload.filename))) from None


def _bad_file(reason: str) -> RestError:
    return RestError(
        HTTPStatus.BAD_REQUEST,
        "The file could not be read as audio (wav, flac, mp3, ogg, webm, m4a and other formats "
        f"FFmpeg decodes are accepted): {reason}",
        "invalid_file_format",
        "file",
    )


def _unloaded() -> RestError:
    return RestError(
        HTTPStatus.SERVICE_UNAVAILABLE,
        "The model was unloaded while the file was transcribed; send the request again.",
        "model_unloaded",
        "model",
        "server_error",
    )


def _worker_backend(runtime: object, model_id: str, task: Task) -> WorkerBackend:
    if (
        not isinstance(runtime, InProcessRuntime)
        or runtime.backend is None
        or runtime.worker is None
    ):
        raise RestError(
            HTTPStatus.BAD_REQUEST,
            f"The model '{model_id}' runs in a separate server; REST transcription is served "
            "for models loaded in this process only.",
            "model_not_supported",
            "model",
        )
    backend = runtime.backend
    if task == "translate":
        if not backend.traits.can_translate:
            raise RestError(
                HTTPStatus.BAD_REQUEST,
                f"The model '{model_id}' cannot translate speech to English; use a multilingual "
                "Whisper model for /v1/audio/translations.",
                "model_cannot_translate",
                "model",
            )
        backend = EnglishTranslation(backend)
    try:
        return WorkerBackend(backend, runtime.worker)
    except WorkerStoppedError:
        raise _unloaded() from None


def _default_language(runtime: object) -> str | None:
    return runtime.streaming.language if isinstance(runtime, InProcessRuntime) else None


def _stop(transcriber: FileTranscriber) -> None:
    backend = transcriber.backend
    if isinstance(backend, WorkerBackend):
        backend.cancel()
