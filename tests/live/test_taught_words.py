"""Words taught by corrections: which words a correction teaches, how many are kept, and the
update that makes them the session's keywords (what the model is prompted with)."""

from __future__ import annotations

from desktop_rt.engine.protocol.events import Configure, SessionUpdated
from desktop_rt.engine.protocol.session_config import MAX_KEYWORDS
from desktop_rt.live.taught_words import MAX_WORD_CHARS, TaughtWords, changed_words
from tests.support.session_support import make


def test_only_the_words_the_user_changed_or_added_are_taught():
    recognised = " and Mr. John Dashwud had then leisure"
    assert changed_words(recognised, "and Mr. John Dashwood had then leisure") == ["Dashwood"]
    assert changed_words(recognised, "And Mr. John Dashwood, Esq. had then leisure") == [
        "And",
        "Dashwood",
        "Esq",
    ]


def test_punctuation_spacing_and_deleted_words_teach_nothing():
    recognised = "he was not an ill-disposed young man"
    assert changed_words(recognised, "He was not an ill-disposed young man.") == ["He"]
    assert changed_words(recognised, "he was not an ill-disposed  man,") == []
    assert changed_words(recognised, recognised) == []
    assert changed_words(recognised, "") == []


def test_a_word_the_line_already_had_is_not_new_and_each_word_comes_once():
    assert changed_words("the cat and the hat", "the hat and the cat") == []
    assert changed_words("a b", "Ferrars a Ferrars b") == ["Ferrars"]


def test_a_run_of_letters_longer_than_a_word_teaches_nothing():
    long = "x" * (MAX_WORD_CHARS + 1)
    assert changed_words("hello there", f"hello {long} Elinor") == ["Elinor"]


def test_taught_words_are_kept_once_newest_last_in_their_newest_spelling():
    taught = TaughtWords()
    assert taught.teach("john dashwud", "John Dashwood")
    assert taught.words == ("John", "Dashwood")
    assert not taught.teach("John Dashwud", "John Dashwood")  # nothing new
    assert taught.teach("marianne", "Elinor")
    assert taught.teach("dashwud", "DASHWOOD")  # again, in a new spelling: moves to the end
    assert taught.words == ("John", "Elinor", "DASHWOOD")


def test_the_newest_words_are_kept_within_both_bounds():
    taught = TaughtWords(max_words=3, max_chars=1000)
    for i in range(5):
        taught.teach("", f"Name{i}")
    assert taught.words == ("Name2", "Name3", "Name4")
    short = TaughtWords(max_words=10, max_chars=20)
    for name in ("Ferrars", "Brandon", "Willoughby"):
        short.teach("", name)
    assert short.words == ("Brandon", "Willoughby")  # "Ferrars, Brandon, Willoughby" is 28
    assert TaughtWords(max_words=10_000).max_words == MAX_KEYWORDS  # the protocol's bound


def test_the_update_sets_the_keywords_and_the_model_is_prompted_with_them():
    taught = TaughtWords()
    taught.teach("mister john dashwud", "Mister John Dashwood")
    session = make()
    session.receive_event(taught.session_update())
    [updated] = [e for e in session.events_to_send() if isinstance(e, SessionUpdated)]
    assert updated.session.keywords == ("Mister", "John", "Dashwood")
    [configure] = [c for c in session.commands() if isinstance(c, Configure)]
    assert configure.prompt == "Mister, John, Dashwood"
