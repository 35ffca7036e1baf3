"""Words taught by corrections: which words a correction teaches, how many are kept, and the
update that makes them the session's keywords (what the model is prompted with)."""

from __future__ import annotations

from desktop_rt.engine.protocol.events import Configure, Respelling, SessionUpdated
from desktop_rt.engine.protocol.session_config import MAX_KEYWORDS
from desktop_rt.live.taught_words import (
    MAX_WORD_CHARS,
    TaughtWords,
    changed_spellings,
    changed_words,
)
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


# ---- respellings: the committed text the prompt is built from takes the new spelling -------


def test_a_changed_stretch_of_up_to_three_words_is_respelled_word_by_word_where_it_can():
    recognised = " and mister John Dash wud had, then leisure"
    assert changed_spellings(recognised, "and Mister John Dashwood had then leisure.") == [
        Respelling("mister", "Mister"),
        Respelling("Dash wud", "Dashwood"),
    ]
    assert changed_spellings("mister jon dashwud", "Mister John Dashwood") == [
        Respelling("mister", "Mister"),
        Respelling("jon", "John"),
        Respelling("dashwud", "Dashwood"),
    ]
    assert changed_spellings("dash wud esquire", "Dashwood Esq.") == [
        Respelling("dash wud esquire", "Dashwood Esq.")
    ]
    assert changed_spellings(" Dashwud's estate", "Dashwood's estate") == [
        Respelling("Dashwud's", "Dashwood's")
    ]


def test_punctuation_both_spellings_have_is_left_out_and_an_abbreviations_is_kept():
    recognised = ' "Dashwud," said Mr. Ferars (the elder).'
    assert changed_spellings(recognised, '"Dashwood," said Mister Ferrars (the elder).') == [
        Respelling("Dashwud", "Dashwood"),
        Respelling("Mr.", "Mister"),
        Respelling("Ferars", "Ferrars"),
    ]
    assert changed_spellings(" (Dash wud).", "(Dashwood).") == [Respelling("Dash wud", "Dashwood")]
    assert changed_spellings(" Dashwud.", "Dashwood") == [Respelling("Dashwud.", "Dashwood")]


def test_added_deleted_moved_and_rewritten_words_are_not_respellings():
    assert changed_spellings("a b c", "a x b c") == []  # added
    assert changed_spellings("a b c", "a c") == []  # deleted
    assert changed_spellings("the cat and the hat", "the hat and the cat") == []  # moved
    long = "one two three four"
    assert changed_spellings(long, "five six") == []  # the line rewritten
    assert changed_spellings("hello there", "hello " + "é" * 200) == []  # over the bound


def test_respellings_are_kept_once_newest_last_and_a_reversal_replaces_the_old_one():
    taught = TaughtWords(max_words=2)
    assert taught.teach("John Dashwud", "John Dashwood")
    assert taught.respellings == (Respelling("Dashwud", "Dashwood"),)
    assert taught.teach("Mary Ann", "Marianne")
    assert taught.teach("dashwud", "Dashwoode")  # the same old word again: moves, respelled anew
    assert taught.respellings == (
        Respelling("Mary Ann", "Marianne"),
        Respelling("dashwud", "Dashwoode"),
    )
    assert taught.teach("Marianne", "Mary Ann")  # undone: the respelling away goes too
    assert taught.respellings == (
        Respelling("dashwud", "Dashwoode"),
        Respelling("Marianne", "Mary Ann"),
    )
    assert taught.teach("Elinor said", "Eleanor said")  # the oldest goes past max_words
    assert [r.old for r in taught.respellings] == ["Marianne", "Elinor"]


def test_a_correction_of_a_word_already_taught_still_sends_its_respelling():
    taught = TaughtWords()
    assert taught.teach("John Dashwud", "John Dashwood")
    assert taught.teach("John Dash wood", "John Dashwood")  # no new keyword, a new respelling
    assert taught.words == ("Dashwood",)
    session = make()
    session.receive_event(taught.session_update())
    [updated] = [e for e in session.events_to_send() if isinstance(e, SessionUpdated)]
    assert updated.session.respellings == taught.respellings
    [configure] = [c for c in session.commands() if isinstance(c, Configure)]
    assert configure.prompt == "Dashwood"
    assert configure.respellings == (
        Respelling("Dashwud", "Dashwood"),
        Respelling("Dash wood", "Dashwood"),
    )
