"""Respellings applied to committed text: whole words, any case, punctuation kept, multiword."""

from __future__ import annotations

from desktop_rt.engine.asr.respelling import respell
from desktop_rt.engine.protocol.events import Respelling

DASHWOOD = Respelling("Dashwud", "Dashwood")


def test_whole_words_only():
    text = " Dashwud and Dashwudson, ill-Dashwud and Dashwud-like, but not xDashwud or Dashwud2."
    assert respell(text, [DASHWOOD]) == (
        " Dashwood and Dashwudson, ill-Dashwud and Dashwud-like, but not xDashwud or Dashwud2."
    )


def test_punctuation_around_a_word_stays():
    text = '"Dashwud," (Dashwud) Dashwud\'s estate; Dashwud. Dashwud? —Dashwud!'
    assert respell(text, [DASHWOOD]) == (
        '"Dashwood," (Dashwood) Dashwood\'s estate; Dashwood. Dashwood? —Dashwood!'
    )


def test_any_case_is_found_and_written_in_the_case_it_was_in():
    text = " dashwud DASHWUD Dashwud dAshWud"
    assert respell(text, [DASHWOOD]) == " Dashwood DASHWOOD Dashwood Dashwood"
    mister = Respelling("mister", "Mister")  # a correction of case alone
    assert (
        respell(" and mister John. Mister Ferrars", [mister]) == " and Mister John. Mister Ferrars"
    )
    lower = Respelling("elinor", "eleanor")  # a capital the text gave (a sentence start) stays
    assert respell(" Elinor said elinor", [lower]) == " Eleanor said eleanor"
    assert respell(" I said MR", [Respelling("Mr", "Mister")]) == " I said MISTER"
    assert respell(" NASA and nasa", [Respelling("NASA", "Nasa")]) == " Nasa and Nasa"


def test_multiword_old_and_new():
    text = " John Dash wud had, and John Dash\nwud's son"
    assert respell(text, [Respelling("Dash wud", "Dashwood")]) == (
        " John Dashwood had, and John Dashwood's son"
    )
    assert respell(" the Norland park", [Respelling("Norland", "Nor Land")]) == " the Nor Land park"
    assert respell(" the Dash woods", [Respelling("Dash wud", "Dashwood")]) == " the Dash woods"


def test_an_old_spelling_with_punctuation_matches_only_with_it():
    mister = Respelling("Mr.", "Mister")
    assert respell(" And Mr. John, Mr Ferrars, Mr.Smith", [mister]) == (
        " And Mister John, Mr Ferrars, Mr.Smith"
    )


def test_respellings_apply_oldest_first_and_nothing_else_changes():
    chain = [Respelling("Dashwud", "Dashwod"), Respelling("Dashwod", "Dashwood")]
    assert respell(" Dashwud and Dashwod", chain) == " Dashwood and Dashwood"
    text = " a line without the word, and an empty one:"
    assert respell(text, [DASHWOOD]) == text
    assert respell(" Dashwud", []) == " Dashwud"
    assert respell("", [DASHWOOD]) == ""


def test_a_respelling_does_not_match_inside_what_it_wrote():
    """A new spelling that holds the old one is written once, not again and again."""
    assert respell(" Ferrar", [Respelling("Ferrar", "Ferrar Ferrars")]) == " Ferrar Ferrars"
    assert respell(" Dash", [Respelling("Dash", "Dashwood")]) == " Dashwood"
