"""Activity rows: one per session, written at its close, read back through ``GET /v1/activity``."""

from __future__ import annotations

import asyncio
import base64
import json

import pytest
from websockets.asyncio.client import connect

from desktop_rt.engine.server.activity import (
    ACTIVITY_FILE,
    ActivityLog,
    ActivityMeter,
    ActivityRow,
    ActivityUnavailable,
    activity_path,
    activity_timestamp,
)
from desktop_rt.engine.server.server import RealtimeServer, ServerConfig
from desktop_rt.paths import data_dir
from tests.support.clips import read_clip, reference_text
from tests.support.rt_client import EVENT_TIMEOUT, http_get, open_client, wer

KEY = "sk-activity"


def row(model: str, reason: str = "the client closed (1000)") -> ActivityRow:
    return ActivityRow(
        "sess_1",
        activity_timestamp(),
        activity_timestamp(),
        model,
        "127.0.0.1:5000",
        1.5,
        2,
        7,
        1000,
        reason,
    )


def test_rows_are_kept_newest_first_and_filtered_by_model(tmp_path):
    log = ActivityLog(tmp_path / "a" / "activity.sqlite3")
    for model in ("a", "b", "a"):
        log.record(row(model))
    assert log.wait_recorded(3, 30)
    rows = log.rows()
    assert [r.model for r in rows] == ["a", "b", "a"] and rows[0].id > rows[1].id > rows[2].id
    assert [r.id for r in log.rows(model="b")] == [rows[1].id]
    assert len(log.rows(limit=1)) == 1
    assert rows[0].to_json()["words"] == 7
    log.close()
    again = ActivityLog(tmp_path / "a" / "activity.sqlite3")  # rows outlive the process
    assert len(again.rows()) == 3
    again.close()
    assert activity_path() == data_dir() / ACTIVITY_FILE and ACTIVITY_FILE != "history.sqlite3"


def test_a_failed_write_is_logged_not_raised(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the folder should be")
    log = ActivityLog(blocker / "activity.sqlite3")
    log.record(row("a"))
    assert log.wait_recorded(1, 30)  # handled: the session that wrote it is not affected
    log.close()


def test_a_damaged_file_is_moved_aside_and_the_row_kept_in_a_fresh_one(tmp_path):
    path = tmp_path / "activity.sqlite3"
    path.write_bytes(b"not a database " * 500)
    log = ActivityLog(path)
    log.record(row("a"))
    assert log.wait_recorded(1, 30)
    assert [r.model for r in log.rows()] == ["a"]
    log.close()
    (damaged,) = tmp_path.glob("activity.damaged-*.sqlite3")
    assert damaged.read_bytes().startswith(b"not a database")


def test_a_read_of_a_damaged_file_says_where_it_went(tmp_path):
    path = tmp_path / "activity.sqlite3"
    path.write_bytes(b"\0garbage" * 1000)
    log = ActivityLog(path)
    with pytest.raises(ActivityUnavailable, match="moved to .*activity.damaged-"):
        log.rows()
    assert log.rows() == []  # a fresh database
    log.close()
    path.write_bytes(b"\0garbage again" * 1000)  # damaged twice in one second: both kept
    log = ActivityLog(path)
    with pytest.raises(ActivityUnavailable):
        log.rows()
    log.close()
    assert len(list(tmp_path.glob("activity.damaged-*.sqlite3"))) == 2


def test_the_meter_counts_audio_in_the_declared_format_and_words_out():
    meter = ActivityMeter()
    second_24k = base64.b64encode(b"\0\0" * 24_000).decode()
    meter.server_frame(
        json.dumps(
            {
                "type": "session.created",
                "session": {
                    "id": "sess_x",
                    "audio": {"input": {"format": {"type": "audio/pcm", "rate": 16000}}},
                },
            }
        )
    )
    meter.client_frame(
        json.dumps(
            {
                "type": "session.update",
                "session": {"audio": {"input": {"format": {"type": "audio/pcm", "rate": 24000}}}},
            }
        )
    )
    meter.client_frame(json.dumps({"type": "input_audio_buffer.append", "audio": second_24k}))
    meter.server_frame(
        json.dumps(
            {
                "type": "session.updated",
                "session": {"audio": {"input": {"format": {"type": "audio/pcm", "rate": 16000}}}},
            }
        )
    )  # the client's choice stands
    meter.client_frame(json.dumps({"type": "input_audio_buffer.append", "audio": second_24k}))
    meter.client_frame(json.dumps({"type": "input_audio_buffer.append", "audio": "%% not base64"}))
    meter.client_frame(b"binary")
    meter.server_frame(
        json.dumps(
            {
                "type": "conversation.item.input_audio_transcription.completed",
                "transcript": "three words here",
            }
        )
    )
    assert meter.audio_seconds == pytest.approx(2.0)
    assert (meter.items, meter.words, meter.session_id) == (1, 3, "sess_x")
    g711 = ActivityMeter()
    g711.client_frame(
        json.dumps(
            {"type": "transcription_session.update", "session": {"input_audio_format": "g711_ulaw"}}
        )
    )
    g711.client_frame(
        json.dumps(
            {"type": "input_audio_buffer.append", "audio": base64.b64encode(b"\0" * 8000).decode()}
        )
    )
    assert g711.audio_seconds == pytest.approx(1.0)


@pytest.mark.slow
async def test_each_session_leaves_one_row_readable_over_http(whisper_backend, tmp_path):
    config = ServerConfig(port=0, api_key=KEY, activity_path=tmp_path / "activity.sqlite3")
    auth = {"Authorization": f"Bearer {KEY}"}
    server = RealtimeServer(config, whisper_backend)
    await asyncio.to_thread(server.start)
    try:
        clip = read_clip("ss-0920")
        client = await open_client(server.url, additional_headers=auth)
        await client.configure(rate=24_000, language="en")
        await client.append_clip(clip)
        await client.send({"type": "input_audio_buffer.commit", "final": True})
        assert await client.drain_to_close() == 1000
        transcript = "".join(client.transcripts())
        assert wer(reference_text("ss-0920"), transcript) < 0.25, transcript

        async with connect(server.url + "?model=nope", additional_headers=auth) as ws:
            await asyncio.wait_for(ws.recv(), EVENT_TIMEOUT)
            await ws.wait_closed()
        gone = await open_client(server.url, additional_headers=auth)
        await gone.ws.close()
        assert await asyncio.to_thread(server.activity.wait_recorded, 3, EVENT_TIMEOUT)

        status, body = await asyncio.to_thread(http_get, f"{server.http_url}/v1/activity")
        assert status == 401
        status, body = await asyncio.to_thread(http_get, f"{server.http_url}/v1/activity", auth)
        assert status == 200 and body["object"] == "list"
        latest, unknown, spoken = body["data"]
        assert spoken["model"] == "whisper-base" and spoken["client"].startswith("127.0.0.1:")
        assert spoken["audio_seconds"] == pytest.approx(len(clip) / 16_000, abs=0.05)
        assert spoken["items"] == 1 and spoken["words"] == len(transcript.split())
        assert (
            spoken["close_code"] == 1000
            and spoken["close_reason"] == "the session ended (final commit)"
        )
        assert spoken["session_id"] == client.events[0]["session"]["id"]
        assert spoken["started_at"] < spoken["ended_at"]
        assert unknown["model"] == "nope" and unknown["close_reason"].startswith(
            "model_not_found: "
        )
        assert unknown["close_code"] == 1008 and unknown["items"] == 0
        assert latest["close_reason"] == "the client closed (1000)" and latest["audio_seconds"] == 0

        status, body = await asyncio.to_thread(
            http_get, f"{server.http_url}/v1/activity?limit=1&model=nope", auth
        )
        assert [r["model"] for r in body["data"]] == ["nope"]
        status, body = await asyncio.to_thread(
            http_get, f"{server.http_url}/v1/activity?limit=many", auth
        )
        assert status == 400 and body["error"]["param"] == "limit"
    finally:
        await asyncio.to_thread(server.stop)
