"""Reference shapes and the reference's relation to its query, on references as datasets shape them."""

from __future__ import annotations

import json

import pytest

from rlar.routing import RoutingQuery
from rlar.routing.query import RELATION_SHAPES
from rlar.tasks.references import Relation, answer_strings, reference_relation, reference_shape, text_language
from rlar.tools.rules import reference_strings

HUMANEVAL_TEST = "def check(candidate):\n    assert candidate(2) == 4\n"


@pytest.mark.parametrize(
    ("reference", "metadata", "shape"),
    [
        (None, {}, "none"),
        ("", {}, "none"),
        ("  \n", {}, "none"),
        ([], {}, "none"),
        ([""], {}, "none"),
        ("assert f(1) == 2\nassert f(2) == 3", {}, "code_tests"),
        (["assert f(1) == 2"], {}, "code_tests"),
        (HUMANEVAL_TEST, {"entry_point": "f"}, "code_tests"),
        (json.dumps({"inputs": ["1\n"], "outputs": ["2\n"]}), {}, "code_tests"),
        ({"public_tests": {"input": ["1\n"], "output": ["2\n"]}}, {}, "code_tests"),
        ("Tom has 3. He buys 4.\n#### 7", {}, "number"),
        # the answer on the marker's line; a line after it restates it (MetaMathQA)
        ("Tom has 3. He buys 4.\n#### 7\nThe answer is: 7", {}, "number"),
        # a worked solution whose last line states the answer (MathInstruct's CoT rows)
        ("Speed = 120/8 = 15 m/s.\n15 m/s = 54 km/hr.\nThe answer is C", {}, "choice"),
        ("First 4 + 5 = 9.\nThen 9 * 2 = 18.\nAnswer: 18", {}, "number"),
        ("1,250", {}, "number"),
        ("$4.99", {}, "number"),
        ("25%", {}, "number"),
        ("3/8", {}, "number"),
        (8.0, {}, "number"),
        (["1867", "July 1, 1867"], {}, "number"),
        ("\\frac{1}{3}", {}, "number"),
        ("(-2, 2)", {}, "math"),
        ("3, -3", {}, "math"),
        ("x^2+2x+1", {}, "math"),
        ("so $x = \\boxed{4}$.", {}, "math"),
        ("B", {}, "choice"),
        ("(C)", {}, "choice"),
        (True, {}, "label"),
        ("false", {}, "label"),
        ("SELECT count(*) FROM singer", {}, "program"),
        ("os.path.exists(path)", {}, "program"),
        ({"text": ["Denver Broncos"], "answer_start": [177]}, {}, "short_text"),
        ({"value": "Canberra", "aliases": ["Canberra, Australia"]}, {}, "short_text"),
        ([{"answer": "Hanoi", "answer_id": "m.0f", "aliases": ["Ha Noi"]}], {}, "short_text"),
        ("SELECT ?x WHERE { wd:Q64 wdt:P1082 ?x }", {}, "program"),  # SPARQL
        ("MATCH (m:Movie) RETURN m.title", {}, "program"),  # Cypher
        ("cat ( x _ 1 ) AND sleep . agent ( x _ 2 , x _ 1 )", {}, "program"),  # a logical form
        ("東京で大雪となり、多くの列車が運休した。", {}, "text"),  # sized in letters: a sentence
        ("東京", {}, "short_text"),
        ("2021-03-04", {}, "short_text"),
        ("Die Regierung kündigte neue Maßnahmen an.", {}, "text"),
        ({"best_answer": "No", "correct_answers": [], "incorrect_answers": []}, {}, "structured"),
        ({"name": "Dana", "age": 34}, {}, "structured"),
    ],
)
def test_shapes(reference: object, metadata: dict[str, object], shape: str) -> None:
    assert reference_shape(reference, metadata) == shape


def test_a_test_string_without_its_entry_point_is_not_runnable_tests() -> None:
    assert reference_shape(HUMANEVAL_TEST) != "code_tests"


def test_answer_strings_read_qa_datasets_shapes() -> None:
    assert answer_strings({"text": ["Paris", "paris"], "answer_start": [0, 0]}) == ["Paris", "paris"]
    assert answer_strings({"value": "Fe", "aliases": ["Iron"]}) == ["Fe", "Iron"]
    assert answer_strings(["a", 1]) == ["a", "1"] and answer_strings({"x": 1}) is None


def test_answer_objects_give_their_names_as_alternatives_and_nothing_else() -> None:
    # FreebaseQA's answer objects (an id and its names), FreshQA's numbered answers, a span object with its
    # subjectivity annotations: every key names the answer or describes it
    assert answer_strings([{"AnswersMid": "m.0x", "AnswersName": ["berlin", "berlin, germany"]}]) == [
        "berlin",
        "berlin, germany",
    ]
    assert answer_strings({"answer_0": "206", "answer_1": "206 bones"}) == ["206", "206 bones"]
    span = {"text": ["nine hours"], "answer_start": [50], "answer_subj_level": [1], "ans_subj_score": [0.3]}
    assert answer_strings(span) == ["nine hours"] and reference_strings(span) == ["nine hours"]
    # a key that is neither (a field of a structured answer, an explanation) makes it no answer object
    assert answer_strings({"answer_0": "5", "reasoning": "2 + 3", "steps": 2, "unit": "m"}) is None
    assert reference_strings({"text": "a", "label": "b", "entities": []}) is None
    assert reference_strings({"text": "a", "grid": [[1, 2]]}) is None, (
        "a key ending in 'id' is not an id field"
    )
    assert reference_strings({"answer_id": 7, "text": "a"}) == ["a"]
    assert reference_shape([{"AnswersMid": "m.0x", "AnswersName": ["au"]}]) == "short_text"


def test_the_relation_of_an_answer_to_its_query() -> None:
    wmt = reference_relation(
        "Das Spiel wurde wegen starken Regens verschoben.",
        "Translate to German: The match was postponed because of heavy rain.",
    )
    assert wmt.language_shift and not wmt.extractive and wmt.overlap < 0.2
    squad = reference_relation(
        {"text": ["Denver Broncos"]}, "Context: The Denver Broncos won. Question: who won?"
    )
    assert squad.extractive and squad.overlap == 1.0 and not squad.language_shift
    gec = reference_relation("She doesn't like apples.", "Fix the grammar: She don't like apples.")
    assert gec.edit_similarity > 0.8 and -1 < gec.length_ratio < 0
    assert reference_relation(None, "anything") == reference_relation("", "x") == reference_relation("a", "")
    assert text_language("Die Katze ist nicht auf dem Tisch und das ist gut.") == "de"
    assert text_language("The cat is not on the table, and that is fine.") == "en"
    assert text_language("Зима в Москве была очень холодной.") == "cyrillic" and text_language("123") == ""


@pytest.mark.parametrize(
    ("answer", "language"),
    [
        ("Ich habe keine Zeit.", "de"),
        ("Nous sommes en retard.", "fr"),
        ("Yo soy de Chile.", "es"),
        ("Io sono qui.", "it"),
        ("Eu estou em casa.", "pt"),
        ("Ik ben thuis.", "nl"),
        ("Jag är hemma.", "sv"),
        ("Jestem w domu.", "pl"),
        ("We are late.", "en"),
        # Names are no sentence of any language, accents or not.
        ("Gabriel García Márquez", "latin"),
        ("Miguel de Cervantes", "latin"),
        ("Leonardo da Vinci", "latin"),
    ],
)
def test_short_sentences_are_told_apart_from_names(answer: str, language: str) -> None:
    assert text_language(answer) == language


def test_a_short_sentence_in_another_language_is_a_shift_and_a_short_name_is_not() -> None:
    assert reference_relation("Ich habe keine Zeit.", "Put into German: I have no time.").language_shift
    assert reference_relation("我们迟到了。", "Put into Chinese: We are late.").language_shift
    assert reference_relation(
        "We are late.", "Auf Englisch: Wir sind spät dran und ich bin müde."
    ).language_shift
    assert not reference_relation("鲁迅", "Who wrote the Diary of a Madman?").language_shift, "a name"
    assert not reference_relation("Gabriel García Márquez", "Who is the author of that novel?").language_shift


@pytest.mark.parametrize(
    ("query", "reference", "translation"),
    [
        ("Translate into Czech:\nThe shop is closed.", "Obchod je zavřený.", True),
        ("Please localize this button label for Greek users: Sign out", "Αποσύνδεση λογαριασμού", True),
        ("How would you say 'see you tomorrow' in Korean?", "내일 봐요", True),
        ("What is the Hindi version of the sign 'No parking'?", "पार्किंग निषेध", True),
        ("ukr: Where is my bag?\nvie:", "Túi của tôi ở đâu?", True),
        ("English caption: A dog runs on the beach.\nGerman caption:", "Ein Hund rennt am Strand.", True),
        # A script without spaces is sized in letters: one "word" of it is a phrase.
        ("Translate into Japanese: Thank you very much.", "ありがとうございます", True),
        ("Translate into Khmer: Thank you.", "អរគុណច្រើន", True),
        # One word is a lookup with one exact answer; a name, a label or a copied span is no translation.
        ("What is the Chinese character for 'water'?", "水", False),
        ("What is the Dutch word for 'cheese'?", "kaas", False),
        ("Who painted The Night Watch?", "Rembrandt van Rijn", False),
        ("Which language is this? 'Dzień dobry, jak się masz?'", "Polish", False),
        ("Q: What is the capital of Peru?\nA:", "Lima, Peru", False),
        ("Translate and then answer: where is 'la gare du Nord'?", "la gare du Nord", False),
    ],
)
def test_a_translation_request_is_read_from_the_query(query: str, reference: str, translation: bool) -> None:
    f = RoutingQuery.from_record({"task": "t", "query": query, "reference": reference}).features()
    assert f.translation is translation
    assert (f.answer_shape == "text") is (translation or f.reference_shape == "text")
    assert ("translation" in f.describe()) is translation


def test_features_and_signatures_are_per_query() -> None:
    def q(**kw: object) -> RoutingQuery:
        return RoutingQuery.from_record({"task": "mixed", "query": "Solve it.", "description": "d", **kw})

    numeric, tests, empty, none = q(reference="42"), q(reference="assert f(1) == 1"), q(reference=""), q()
    assert numeric.features().reference_shape == "number" and tests.features().reference_shape == "code_tests"
    assert empty.features().reference_free and empty.signature() == none.signature()
    assert len({numeric.signature(), tests.signature(), none.signature()}) == 3
    assert q(reference="43").signature() == numeric.signature(), "alike queries share one decision"
    with_rules = q(query="List three fruits in exactly three bullet points.")
    assert with_rules.features().constraints and with_rules.signature() != none.signature()
    answered = q(query="List three fruits in exactly three bullet points.", reference="- a\n- b\n- c")
    assert answered.features().key()["constraints"] == "", "with a reference the constraints do not split"
    chat = RoutingQuery.from_record(
        {
            "task": "c",
            "query": [{"role": "system", "content": "Be Sherlock."}, {"role": "user", "content": "Deduce."}],
        }
    )
    assert chat.query == "Deduce." and chat.features().system and chat.features().turns == 1
    text = numeric.features().describe()
    assert "reference shape: a number" in text and "constraints" in text


@pytest.mark.parametrize(
    ("held", "apart"),
    [
        (("0+0=", "0"), ("3+3=", "6")),  # arithmetic whose answer happens to be in the query
        (("What is 1 times 1?", "1"), ("What is 2 times 3?", "6")),
        (("Which is larger, 5 or 3?", "5"), ("What is 5 minus 3?", "2")),
        (
            ("Pick one. (A) cat (B) dog. Which one barks?", "B"),
            ("Which animal purrs?\nA. dog\nB. fish\nC. cat", "C"),
        ),
        (
            ("Simplify \\frac{2}{4} to \\frac{1}{2}.", "\\frac{1}{2}"),
            ("Simplify \\frac{3}{9}.", "\\frac{1}{3}"),
        ),
        (("Is it true that 2 > 1? Answer true or false.", "true"), ("Is 1 > 2?", "false")),
    ],
)
def test_numbers_letters_and_latex_are_read_alike_whatever_their_query_holds(
    held: tuple[str, str], apart: tuple[str, str]
) -> None:
    """The router reads the reference's relation to the query only for answer texts: a number, letter, label or
    LaTeX answer that occurs in its query by coincidence is read as one that does not (the scorer reads no more
    of it than the cache key does)."""
    a, b = (
        RoutingQuery.from_record({"task": "t", "query": qq, "reference": r}).features()
        for qq, r in (held, apart)
    )
    assert a.reference_shape == b.reference_shape and a.reference_shape not in RELATION_SHAPES
    assert a.relation == b.relation == Relation() and a.key() == b.key()
    assert "copied from the query" not in a.describe()
    text = RoutingQuery.from_record(
        {"task": "t", "query": "Where is the Louvre? It is in Paris.", "reference": "Paris"}
    )
    assert text.features().relation.extractive and text.features().key()["relation"] == [True, False]


@pytest.mark.parametrize(
    ("reference", "shape"),
    [
        ("7d1f3b5c-fff8-0b3b-adc1-383d20783d88", "short_text"),  # a UUID: a string to match, not 3b - adc1
        (["0b3b4c5d-1111-2222-3333-444455556666"], "short_text"),
        ("a3f9c2e1b4d5", "short_text"),  # a hash
        ("3x + 2", "math"),
        ("123456789012", "number"),
    ],
)
def test_an_identifier_is_a_string_whatever_its_digits_and_letters(reference: object, shape: str) -> None:
    assert reference_shape(reference) == shape
