"""Reading a debater's reply and enforcing the word limit."""

import pytest

from debates.speeches import (
    SpeakerBrief,
    compact_own_words_messages,
    compact_system,
    compact_turn_messages,
    cut_to_words,
    parse_compact,
    parse_turn,
    turn_messages,
)


class TestParseTurn:
    def test_the_three_sections(self):
        parsed = parse_turn("<reflection>R</reflection>\n<critique> C </critique>"
                            "<speech>The speech.</speech>")
        assert (parsed.reflection, parsed.critique, parsed.speech) == ("R", "C", "The speech.")
        assert not parsed.tags_missing

    def test_tags_in_any_case_with_spaces_and_prose_around(self):
        parsed = parse_turn("Sure! <Reflection >R</reflection>\n<SPEECH>S1.\nS2.</Speech> Bye")
        assert parsed.reflection == "R" and parsed.speech == "S1.\nS2."

    def test_an_unclosed_section_ends_at_the_next_tag_or_the_end(self):
        parsed = parse_turn("<reflection>R <critique>C <speech>Final words")
        assert (parsed.reflection, parsed.critique, parsed.speech) == ("R", "C", "Final words")
        assert not parsed.tags_missing

    def test_no_speech_tag_makes_the_rest_the_speech_and_says_so(self):
        parsed = parse_turn("<reflection>R</reflection>Here is my argument.")
        assert parsed.speech == "Here is my argument." and parsed.tags_missing
        assert parse_turn("Just text.").speech == "Just text."

    def test_only_other_sections_keep_their_text_as_the_speech(self):
        parsed = parse_turn("<critique>Only a critique.</critique>")
        assert parsed.speech == "Only a critique." and parsed.tags_missing


class TestCutToWords:
    def test_short_text_is_untouched(self):
        assert cut_to_words("One two three.", 5) == ("One two three.", False)

    def test_cut_at_the_last_sentence_end_within_the_limit(self):
        text = "First sentence here. Second one is longer than the limit allows it to be."
        assert cut_to_words(text, 6) == ("First sentence here.", True)

    def test_no_sentence_end_cuts_at_the_limit_with_an_ellipsis(self):
        text, cut = cut_to_words("one two three four five six seven", 4)
        assert cut and text == "one two three four…"

    @pytest.mark.parametrize("limit", [1, 3, 10, 37])
    def test_never_more_words_than_the_limit(self, limit):
        text = " ".join(f"w{i}." if i % 4 == 0 else f"w{i}" for i in range(60))
        result, cut = cut_to_words(text, limit)
        assert cut and len(result.split()) <= limit


def test_the_prompt_carries_persona_position_and_the_debate_so_far():
    brief = SpeakerBrief(name="Ada", description="a mathematician.", background="Born 1815",
                         traits=["precise", "bold"], speaking_style="formal prose",
                         motion="This house would teach logic", position="con", round=2,
                         rounds=3, word_limit=120)
    [message] = turn_messages(brief, [("Round 1", "pro", "Logic is vital."),
                                      ("Round 1", "con", "Not for all.")])
    text = message["content"]
    assert "You are Ada, a mathematician." in text and "Your Position: CON" in text
    assert "Round: 2 of 3" in text and "within 120 words" in text
    assert "precise, bold" in text and "Use formal prose" in text
    assert "Your opponent (PRO):\nLogic is vital." in text
    assert "You (CON):\nNot for all." in text


class TestCompactTurn:
    """The embedded small models' turn: they copied the transcript's labels ("[round 1] Your
    opponent (PRO): … Now write your round 1 turn as CON."), never wrote the tags, and wrote
    numbered lists that repeated themselves."""

    BRIEF = SpeakerBrief(name="Ada", description="a careful engineer.", background="",
                         traits=["calm", "precise"], speaking_style="plainly", position="con",
                         motion="This house would ban cars", round=2, rounds=2,
                         word_limit=80)

    def test_the_persona_side_and_rules_are_the_system_prompt_the_request_is_short(self):
        system = compact_system(self.BRIEF)
        assert "You are Ada, a careful engineer, debating against the motion" in system
        assert "at most 80 words" in system and "no lists" in system
        [message] = compact_turn_messages(self.BRIEF, "Cars   pollute.\nBan them.")
        text = message["content"]
        assert 'Your opponent said: "Cars pollute. Ban them."' in text
        assert "closing speech" in text and "against the motion" in text
        assert "[" not in text and "<speech>" not in text and "PRO" not in text
        opening = SpeakerBrief(**{**self.BRIEF.__dict__, "position": "pro", "round": 1})
        [first] = compact_turn_messages(opening, None)
        assert first["content"] == "Open the debate: give two reasons for the motion."

    def test_asked_again_it_is_the_same_turn_in_its_own_words_without_the_opponent(self):
        [closing] = compact_own_words_messages(self.BRIEF, "Cars pollute.")
        assert closing["content"] == ("This is your closing speech: sum up, in your own "
                                      "words, why you are against the motion.")
        middle = SpeakerBrief(**{**self.BRIEF.__dict__, "rounds": 3})
        [again] = compact_own_words_messages(middle, "Cars pollute.")
        assert "one more reason against" in again["content"] and "Cars" not in again["content"]
        opening = SpeakerBrief(**{**self.BRIEF.__dict__, "position": "pro", "round": 1})
        [first] = compact_own_words_messages(opening, None)
        assert "two reasons for the motion" in first["content"]

    @pytest.mark.parametrize(("reply", "speech"), [
        ("[Round 1] Your opponent (PRO): cars pollute\nBuses exist, so cars can go.",
         "Buses exist, so cars can go."),
        ('Speech: "We should not ban cars."', "We should not ban cars."),
        ("**Rebuttal:** Cars matter to nurses.", "Cars matter to nurses."),
        ("<speech>Tagged anyway.</speech>", "Tagged anyway."),
        ("1. Cars help. They are fast.\n2. Cars help. They are safe.\n10.",
         "Cars help. They are fast. They are safe."),
        ("Open the debate: give two reasons for the motion. Cars are bad.", "Cars are bad."),
        ("Reason against the motion: The discussion should focus on health.",
         "The discussion should focus on health."),
        ("Cars pollute the air. Buses pollute less.", "Buses pollute less."),
        ("I'll rephrase it for you: \"The debate is about health. Cars harm it",
         "The debate is about health. Cars harm it"),
        ("Sure! Here is my speech: Cars are useful.", "Cars are useful."),
        ("Sure, cars are useful.", "Cars are useful."),
        ("I will argue three points: cars are useful.", "I will argue three points: cars are "
                                                        "useful."),
        ('He said "no" to cars.', 'He said "no" to cars.'),
        ("The motion: The first reason is health.", "The first reason is health."),
        ("The motion is flawed: cars help.", "The motion is flawed: cars help."),
    ])
    def test_the_reply_is_one_paragraph_without_what_was_echoed_or_repeated(self, reply, speech):
        prompt = ["Open the debate: give two reasons for the motion.",
                  'Your opponent said: "Cars pollute the air. Ban them." Answer their point.']
        parsed = parse_compact(reply, prompt=prompt)
        assert parsed.speech == speech and not parsed.tags_missing
        assert parsed.reflection == parsed.critique == ""
