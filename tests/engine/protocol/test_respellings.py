"""``transcription.respellings``: read, echoed, bounded, refused when malformed, and carried to
the worker beside the prompt (``Configure.respellings``), also when the prompt is unchanged."""

from __future__ import annotations

import pytest

from desktop_rt.engine.protocol.events import Configure, Respelling
from desktop_rt.engine.protocol.respellings import MAX_RESPELLINGS
from tests.support.session_support import make, only_error, update

DASHWOOD = {"from": "Dashwud", "to": "Dashwood"}


def test_respellings_are_echoed_and_reach_the_worker_with_the_prompt():
    session = make()
    (updated,) = update(
        session, transcription={"keywords": ["Dashwood"], "respellings": [DASHWOOD]}
    )
    transcription = updated["session"]["audio"]["input"]["transcription"]
    assert transcription["respellings"] == [DASHWOOD]
    [configure] = session.commands()
    assert configure == Configure(None, "Dashwood", (Respelling("Dashwud", "Dashwood"),))


def test_a_change_of_respellings_alone_configures_the_worker_again():
    session = make()
    update(session, transcription={"keywords": ["Dashwood"]})
    [first] = session.commands()
    update(session, transcription={"respellings": [{"from": " Dash   wud ", "to": "Dashwood"}]})
    [second] = session.commands()
    assert second.prompt == first.prompt == "Dashwood"  # the prompt alone is the same
    assert second.respellings == (Respelling("Dash wud", "Dashwood"),)  # spaces tidied
    update(session, transcription={"respellings": [{"from": "Dash wud", "to": "Dashwood"}]})
    assert session.commands() == []  # nothing changed
    (cleared,) = update(session, transcription={"respellings": None})
    assert "respellings" not in cleared["session"]["audio"]["input"]["transcription"]
    [plain] = session.commands()
    assert plain == Configure(None, "Dashwood") and plain.respellings == ()


def test_respellings_alone_reach_the_worker_without_a_prompt():
    session = make()
    update(session, transcription={"respellings": [DASHWOOD]})
    [configure] = session.commands()
    assert configure == Configure(None, None, (Respelling("Dashwud", "Dashwood"),))
    update(session, transcription=None)  # null resets them with the prompt and keywords
    assert session.commands() == [Configure(None, None)]


@pytest.mark.parametrize(
    ("respellings", "param", "words"),
    [
        ("Dashwud", "respellings", "must be an array"),
        ([["Dashwud", "Dashwood"]], "respellings[0]", "must be an object"),
        ([DASHWOOD, {"to": "Dashwood"}], "respellings[1].from", "is missing"),
        ([{"from": "Dashwud"}], "respellings[0].to", "is missing"),
        ([{"from": "Dashwud", "to": 7}], "respellings[0].to", "must be a string"),
        ([{"from": " ,. ", "to": "Dashwood"}], "respellings[0].from", "holds no word"),
        ([{"from": "Dashwud", "to": ""}], "respellings[0].to", "holds no word"),
        ([{"from": "Dashwud", "to": "x" * 257}], "respellings[0].to", "too long"),
        ([{"from": "Dash wud", "to": "Dash  wud"}], "respellings[0]", "as itself"),
        ([DASHWOOD] * (MAX_RESPELLINGS + 1), "respellings", f"at most {MAX_RESPELLINGS}"),
    ],
)
def test_malformed_respellings_are_refused_naming_the_field_and_change_nothing(
    respellings, param, words
):
    session = make()
    update(session, transcription={"keywords": ["Dashwood"], "respellings": [DASHWOOD]})
    session.commands()
    before = session.config
    error = only_error(update(session, transcription={"respellings": respellings}))
    assert error["param"] == f"session.audio.input.transcription.{param}", error
    assert words in error["message"], error
    assert session.config == before and session.commands() == []
