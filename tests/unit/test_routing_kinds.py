"""What the reference is (issue 24): the kinds read from references as datasets ship them, and the routes they
imply — by rules, before any exemplar votes (a bag-of-words embedding, no model needed)."""

from __future__ import annotations

import pytest

from rlar.routing.exemplars import ExemplarBank
from rlar.routing.matching import OfflineRouter
from rlar.routing.query import RoutingQuery
from rlar.routing.rules import eligibility, unread_by_record_rules
from rlar.routing.scorer import ScorerModel, feature_names
from tests.support.embedding import bag_of_words
from tests.support.routing import SPECS, eligible, format_chat


def kind(query: str, reference: object, metadata: dict[str, object] | None = None) -> str:
    return RoutingQuery("t", query, reference, metadata=metadata or {}).features().reference_kind


@pytest.mark.parametrize(
    ("query", "reference", "metadata", "expected"),
    [
        ("Which is right?\n1) a cat\n2) a dog\n3) a fish", "2", {}, "index"),
        ("Review: great food.\nLabel (0: negative, 1: positive):", 1, {}, "index"),
        ("Pick the better ending.", 0, {"ending0": "x", "ending1": "y"}, "index"),
        # Digits the query maps to labels or options, two or more of them: a reference among them is a label.
        ("Which drug? a) X b) Y c) Z. Reply with the index (0 = a, 1 = b, 2 = c).", 2, {}, "index"),
        (
            "Normal range? A. 1-2 B. 3-4 C. 5-6 D. 7-8 Answer with the option number (A=0 ... D=3).",
            "3",
            {},
            "index",
        ),
        ("Same sense in both sentences? Label 1 if the same meaning, 0 if different.", 0, {}, "index"),
        ("Does 'it' refer to the box? 1 for yes, 0 for no.", 1, {}, "index"),
        ("Do span1 and span2 corefer? (0/1)", "1", {}, "index"),
        ("True, False or Neither? (label ids: 0 true, 1 false, 2 neither)", 2, {}, "index"),
        ("Question type (ABBR=0, ENTY=1, DESC=2, HUM=3):", 1, {}, "index"),
        # One mapping, or a digit outside the mapped ones, is not a label: a value the query gives or asks for.
        ("If x = 3, what is 2x?", 6, {}, ""),
        ("If AB = 5 and BC = 3, what is AB + BC?", 8, {}, ""),
        ("How many legs do 3 spiders have? Options: none", "24", {}, ""),
        ("What is 7 + 5?", 12, {}, ""),
        ("Q: who wrote it?", {"spans": ["A. Author"], "types": ["span"]}, {}, "span_object"),
        ("Tokens: the big dog", ["DET", "ADJ", "NOUN"], {"tokens": ["the", "big", "dog"]}, "tag_sequence"),
        ("Tag each word: New York is big", [5, 6, 0, 0], {}, "tag_sequence"),
        ("List the tags.", ["python", "numpy arrays", "indexing"], {}, "item_list"),
        ("Use 2 3 5 7 once each to make 17.", "17", {}, "target"),
        ("A train travels 17 km in 2 hours then 3 km more. How far did it go?", "20", {}, ""),
        ("Solve the puzzle.", "123456789123456789", {}, "grid"),
        ("Fill the 3x3 grid.", "ABC\nDEF\nGHI", {}, "grid"),
        ("How long is the rod?", "2.5 m", {}, "quantity"),
        ("How much does it cost?", "$4.50", {}, ""),
        ("Decode: KHOOR ZRUOG", "HELLO WORLD", {}, "transformation"),
        ("Who painted the Mona Lisa?", "Leonardo da Vinci", {}, ""),
        ("Write a haiku about frogs.", None, {}, "form"),
        ("Write a story about frogs.", None, {}, ""),
    ],
)
def test_the_reference_kind_is_read_from_the_reference_and_what_the_query_says_of_it(
    query: str, reference: object, metadata: dict[str, object], expected: str
) -> None:
    assert kind(query, reference, metadata) == expected


def test_an_option_index_is_never_scored_by_math_equivalence_or_partial_credit() -> None:
    got = eligible("Which is right?\n1) a cat\n2) a dog", "2")
    assert "math_verify" not in got and "contains_match" not in got and "llm_judge" not in got
    assert {"exact_match", "normalized_match"} <= got
    assert "math_verify" in eligible("What is 7 + 5?", "12"), "a plain number still goes to math"


def test_each_structure_reader_is_eligible_only_for_its_kind() -> None:
    assert "set_f1" in eligible("Q?", {"spans": ["a", "b"], "types": ["span", "span"]})
    assert "set_f1" not in eligible("Q?", "Paris")
    assert "sequence_match" in eligible("Solve.", "123456789123456789") and "math_verify" not in eligible(
        "Solve.", "123456789123456789"
    )
    quantity = eligible("How long?", "2.5 m")
    assert "quantity_match" in quantity and not {"math_verify", "normalized_match", "exact_match"} & quantity


def router(records: list[dict[str, object]]) -> OfflineRouter:
    bank = ExemplarBank.from_records(records, bag_of_words)
    model = ScorerModel([0.0] * len(feature_names(bank.tools)), bank.tools)
    return OfflineRouter(bag_of_words, bank=bank, model=model)


BANK = [
    {
        "id": "a",
        "type": "a",
        "task": "a",
        "query": "what is 2 plus 2",
        "reference": "4",
        "acceptable": ["math_verify"],
    },
    {
        "id": "b",
        "type": "b",
        "task": "b",
        "query": "write a poem",
        "reference": "",
        "acceptable": ["llm_judge"],
    },
]


def test_a_target_only_reference_gets_a_verifier_not_a_tool_the_bare_target_would_satisfy() -> None:
    m = router(BANK).decide(RoutingQuery("g", "Use 4 7 8 8 once each to make 24.", "24"), SPECS)
    assert m.none_fit and m.path == "rule:target_only"


def test_structured_references_go_to_the_tool_that_reads_them() -> None:
    r = router(BANK)
    drop = r.decide(RoutingQuery("d", "Who led?", {"spans": ["A", "B"], "types": ["span", "span"]}), SPECS)
    tags = r.decide(RoutingQuery("n", "Tag: a b", ["O", "B-PER"], metadata={"tokens": ["a", "b"]}), SPECS)
    units = r.decide(RoutingQuery("p", "How fast?", "15 m/s"), SPECS)
    assert [m.tools[0]["name"] for m in (drop, tags, units)] == ["set_f1", "sequence_match", "quantity_match"]
    assert {m.path for m in (drop, tags, units)} == {"rule:reads_reference"}


def test_a_stated_verse_form_goes_to_a_judge_even_with_checkable_constraints() -> None:
    r = router(BANK)
    form = r.decide(RoutingQuery("l", "Write a limerick about tea in under 50 words.", None), SPECS)
    plain = r.decide(RoutingQuery("s", "Write about tea in under 50 words.", None), SPECS)
    assert form.tools and form.tools[0]["name"] == "llm_judge"
    assert plain.none_fit and plain.path == "rule:uncovered_constraints"


# -- reference-free format instructions a built-in checks (issue 24) -------------------------------------------

IFEVAL_ROW = {
    "key": 7,
    "instruction_id_list": ["change_case:english_lowercase", "punctuation:no_comma"],
    "kwargs": [{}, {}],
}


def test_an_ifeval_row_as_shipped_with_its_instructions_in_metadata_goes_to_ifeval() -> None:
    row = RoutingQuery(
        "if",
        "Describe a harbour at night in lowercase letters without commas.",
        None,
        metadata=dict(IFEVAL_ROW),
    )
    m = router(BANK).decide(row, SPECS)
    assert [t["name"] for t in m.tools] == ["ifeval"] and m.path == "rule:covering"
    bare = RoutingQuery("if", "Describe a harbour at night.", None, metadata=dict(IFEVAL_ROW))
    assert [t["name"] for t in router(BANK).decide(bare, SPECS).tools] == ["ifeval"]
    nothing = RoutingQuery("if", "Describe a harbour at night.", None, metadata={"key": 7})
    assert "ifeval" not in eligible(nothing.query, None, nothing.metadata)


async def test_ifeval_scores_a_row_from_the_instructions_in_its_metadata() -> None:
    from rlar.tools.base import ToolInput, make_tool

    tool = make_tool(next(s for s in SPECS if s.name == "ifeval"))
    good = await tool.score(ToolInput("q", "quiet water and soft lights", None, dict(IFEVAL_ROW)))
    bad = await tool.score(ToolInput("q", "Quiet water, soft lights", None, dict(IFEVAL_ROW)))
    assert (good.status, good.score, bad.score) == ("ok", 1.0, 0.0)
    assert (await tool.score(ToolInput("q", "quiet", None, {"key": 7}))).status == "abstain"


def test_record_rules_that_read_every_stated_constraint_route_to_format_rules() -> None:
    whole = format_chat(
        "Answer in lowercase and without commas: why is the sky blue?",
        [{"rule": "lowercase"}, {"rule": "no_commas"}],
    )
    m = router(BANK).decide(whole, SPECS)
    assert [t["name"] for t in m.tools] == ["format_rules"] and m.path == "rule:covering"
    assert unread_by_record_rules(whole) == []


@pytest.mark.parametrize(
    ("text", "rules", "unread"),
    [
        (
            "In a cheerful tone, give exactly 3 bullet points on studying.",
            [{"rule": "bullets", "min": 3, "max": 3}],
            "tone",
        ),
        (
            "Describe a harbour at dawn in under 40 words, all in lowercase.",
            [{"rule": "words", "max": 40}],
            "lowercase",
        ),
    ],
)
def test_record_rules_that_leave_a_style_or_a_stated_constraint_unread_do_not_cover_the_instruction(
    text: str, rules: list[dict[str, object]], unread: str
) -> None:
    q = format_chat(text, rules)
    left = unread_by_record_rules(q)
    assert left and any(unread in x for x in left), left
    m = router(BANK).decide(q, SPECS)
    assert m.none_fit and m.path == "rule:uncovered_constraints", (m.tools, m.path)


@pytest.mark.parametrize(
    ("reference", "shape"),
    [("9 (apples)", "number"), ("15 (red balls)", "number"), ("Paris (France)", "short_text")],
)
def test_a_number_with_what_it_counts_in_parentheses_is_a_number(reference: str, shape: str) -> None:
    """ASDiv writes its answers so: "9 (apples)" is the number 9, read by math equivalence."""
    q = RoutingQuery(
        "t", "Seven red apples and two green apples are in the basket. How many apples?", reference
    )
    assert q.features().reference_shape == shape


def chat(system: str, user: str) -> RoutingQuery:
    return RoutingQuery.from_record(
        {"query": [{"role": "system", "content": system}, {"role": "user", "content": user}], "reference": 3}
    )


@pytest.mark.parametrize(
    ("query", "reference", "metadata", "expected"),
    [
        # Options named after a word or two ("Middle option 2:"), or after a letter ("A2:").
        (
            "Start: rain.\nEnd: wet shoes.\nMiddle option 1: sun.\nMiddle option 2: a storm.\nWhich?",
            2,
            {},
            "index",
        ),
        ("Q: How did she feel?\nA0: calm\nA1: angry\nA2: bored\nLabel:", 1, {}, "index"),
        # Option fields in metadata count when they hold something; an empty list "[]" holds nothing.
        ("Which ending?", 1, {"hypothesis_1": "x", "hypothesis_2": "y"}, "index"),
        ("A 3 kg cart is pushed with 9 N. Its acceleration in m/s^2?", 3, {"options": "[]"}, ""),
        ("Tabular problem: what is the mean of 4, 6, 8?", "6", {"choices": None}, ""),
        # A list of label names in metadata numbers the labels.
        (
            "The <e1>cup</e1> is in the <e2>box</e2>.",
            4,
            {"relation_names": ["a", "b", "c", "d", "e"]},
            "index",
        ),
        # A binary label asked for at the end, in any language; examples of values are no labels.
        ("这两句话意思相同吗？请回答 0 或 1。", 0, {}, "index"),
        ("Ces deux phrases disent-elles la même chose ? Réponds 0 ou 1.", 1, {}, "index"),
        (
            "Answer with an integer and give the final value, e.g., 1, 2, 3, at the end. How many hats?",
            2,
            {},
            "",
        ),
        (
            "Is the message spam? Output 1 if it is spam (any kind of unsolicited advert), otherwise 0.",
            1,
            {},
            "index",
        ),
        # Lists of label ids: one per item is a tag sequence, otherwise a set of labels.
        (
            "Acts (1 inform, 2 question, 3 directive), one per turn:\n1. Hi?\n2. Go.",
            [2, 3],
            {},
            "tag_sequence",
        ),
        (
            "Assign all applicable topic ids.\n0: POLITICS\n1: LAW\n2: TRADE\n12: TRANSPORT\n\nAct text",
            [1, 12],
            {},
            "item_list",
        ),
        ("Multi-label tagging. Labels:\n0: A\n1: B\n2: C", [0, 2], {}, "item_list"),
        ("Regulation text\nlabels:", [1, 3], {"label_names": ["p", "q", "r", "s"]}, "item_list"),
        # Ids the query lists its passages under: the passages chosen.
        (
            "Query: tea\n[88123] Tea is a drink.\n[55410] Rocks are hard.\nReturn the relevant docids.",
            ["88123"],
            {},
            "item_list",
        ),
        # Spans of one answer written several ways are alternatives, not a set; "git" is no word of "git-branch".
        ("Where was it held?", ["Cardiff", "at a ceremony in Cardiff"], {}, ""),
        ("Tags:", ["git", "git-branch", "merge"], {}, "item_list"),
        # References no built-in compares faithfully.
        (
            "Fix the bug.",
            "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n",
            {},
            "patch",
        ),
        (
            "Rate how related the two sentences are, from 0 (unrelated) to 5 (same).\nA: x\nB: y",
            3.4,
            {},
            "rating",
        ),
        ("What is 1.5 + 2.25 on a number line from 0 to 5?", "3.75", {}, ""),
        # Two-digit ids the query maps; ids mapped to names in metadata; options as metadata fields.
        ("Intent ids: 4 time, 5 weather, 32 timer, 42 oos. Answer with the id only.", 32, {}, "index"),
        (
            "Énoncé : réveille-moi à six heures\nIntent id:",
            48,
            {"intent_names": "{'13': 'weather', '48': 'alarm'}"},
            "index",
        ),
        ("Story ...\nQuestion: When did it happen?", 0, {"answers": "['Before', 'After', 'Never']"}, "index"),
        (
            "다음 중 전송 계층 프로토콜은?\n정답 번호:",
            2,
            {"A": "IP", "B": "UDP", "C": "ARP", "D": "ICMP"},
            "index",
        ),
        ("A 3 kg cart is pushed with 36 N. Its acceleration?", 12, {}, ""),
        ("How many legs do 7 spiders have?", 56, {"choices": "[]"}, ""),
        # A whole number on an integer scale the query states, negative ones too; a star rating as a float.
        (
            "Output overall_preference: an integer from -3 to 3, negative if response1 is better.",
            -2,
            {},
            "index",
        ),
        ("How many stars (1-5) did this reviewer give?\nText: Great!", 5.0, {}, "index"),
        ("Rate how related they are, from 0 to 5.", 3.4, {}, "rating"),
        # One amount written several ways is one answer, not a set.
        ("What is the total on the invoice?", ["$1,250.00", "1,250.00", "$1250"], {}, ""),
    ],
)
def test_what_the_reference_is_in_formats_written_by_other_hands(
    query: str, reference: object, metadata: dict[str, object], expected: str
) -> None:
    assert kind(query, reference, metadata) == expected


def test_a_label_mapping_in_the_system_message_makes_the_digit_a_label() -> None:
    q = chat(
        "Classify the relation. Output the id.\n0: Cause\n1: Part\n2: Origin\n3: Other",
        "The wheel of the cart.",
    )
    assert q.features().reference_kind == "index"
    f = q.features()
    allowed = {s.name for s in SPECS if not eligibility(s, q, f)}
    assert "math_verify" not in allowed and {"exact_match", "normalized_match"} <= allowed


def test_a_patch_or_a_graded_score_gets_a_verifier_not_a_metric_that_cannot_check_it() -> None:
    r = router(BANK)
    patch = r.decide(
        RoutingQuery("p", "Fix it.", "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-x\n+y\n"), SPECS
    )
    score = r.decide(RoutingQuery("s", "Rate how similar, from 0 to 1.\nA: x\nB: y", 0.42), SPECS)
    assert patch.none_fit and score.none_fit
    assert {patch.path, score.path} == {"rule:uncomparable_reference"}


@pytest.mark.parametrize(
    ("query", "reference", "metadata", "expected"),
    [
        # labels each followed by their number, offered as alternatives
        ("Claim: the bridge opened in 1932. Is the claim supported (1) or contradicted (0)?", 0, {}, "index"),
        ("How many bridges are listed (1) in the table?", 4, {}, ""),
        # the correct option's text, the others listed as incorrect in metadata (GPQA, SciQ)
        (
            "Which gas is most abundant in air?",
            "nitrogen",
            {"Incorrect Answer 1": "oxygen", "Incorrect Answer 2": "argon"},
            "index",
        ),
        ("Which gas is most abundant in air?", "nitrogen", {"Incorrect Answer 1": "oxygen"}, ""),
        # one path between two ends the query names: other paths may be as right
        (
            "Change one letter at a time to get from 'SHIP' to 'DOCK'.",
            "SHIP,SHOP,CHOP,CHOCK,DOCK",
            {},
            "path",
        ),
        ("Give a route from Paris to Rome.", ["Paris", "Lyon", "Turin", "Rome"], {}, "path"),
        ("Sort these cities: Paris, Rome, Lyon.", ["Lyon", "Paris", "Rome"], {}, "item_list"),
        # one label id of a multi-label query, and items joined by commas without spaces
        ("Which topics apply? 0: sports; 1: politics; 2: science; 3: arts.", [2], {}, "item_list"),
        ("What is Anna holding?", "umbrella,leash", {}, "item_list"),
        ("How do you go from the hall to the den?", "n,w", {}, ""),
        # slot tags shipped as one string (ATIS, SNIPS)
        ("Tag each word (BIO): fly from rome to oslo", "O O B-from.city O B-to.city", {}, "tag_sequence"),
        ("Tag each word (BIO): fly home", "O O", {}, ""),
        # several answer objects, each with its aliases: items, not alternatives of one answer
        (
            "Which rivers flow through Koblenz?",
            [
                {"answer_text": "Rhine", "aliases": ["Rhein"]},
                {"answer_text": "Moselle", "aliases": ["Mosel"]},
            ],
            {},
            "item_list",
        ),
    ],
)
def test_kinds_of_the_fourth_round(
    query: str, reference: object, metadata: dict[str, object], expected: str
) -> None:
    assert kind(query, reference, metadata) == expected


@pytest.mark.parametrize(
    ("query", "reference", "metadata", "expected"),
    [
        # a one-element list holding the index of the correct choice (AGIEval's gold)
        (
            "Q: What is 3 + 4? Answer Choices: (A)6 (B)7 (C)8 A: Among A through C, the answer is",
            [1],
            {"choices": ["(A)6", "(B)7", "(C)8"]},
            "index",
        ),
        # symbolic action tokens in upper snake case (SCAN): a sequence, token by token
        ("IN: look twice OUT:", "I_LOOK I_LOOK", {}, "tag_sequence"),
        ("Command: turn left Actions:", "I_TURN_LEFT", {}, ""),
        # lists of synonyms, one per item (BioASQ): items; one such list is one answer's names
        ("Which hormones does the pancreas release?", [["insulin"], ["glucagon", "GCG"]], {}, "item_list"),
        ("Which enzyme is missing?", [["tyrosine hydroxylase", "TH"]], {}, ""),
    ],
)
def test_kinds_of_the_fifth_round(
    query: str, reference: object, metadata: dict[str, object], expected: str
) -> None:
    assert kind(query, reference, metadata) == expected


def test_a_path_between_named_ends_gets_a_verifier() -> None:
    d = router(BANK).decide(
        RoutingQuery("w", "Turn 'LOVE' into 'HATE' one letter at a time.", "LOVE,LAVE,HAVE,HATE"),
        SPECS,
    )
    assert d.none_fit and d.path == "rule:uncomparable_reference"


def test_a_top_semantic_parse_is_a_program() -> None:
    q = RoutingQuery("m", "Parse: remind me at 9", "[IN:CREATE_REMINDER [SL:DATE_TIME at 9 ] ]")
    assert q.features().reference_shape == "program"


def test_a_worked_solution_without_a_marker_is_its_stated_number() -> None:
    q = RoutingQuery(
        "o",
        "A train 120 m long passes a pole in 12 seconds. How long does it take to pass a 300 m platform?",
        "Speed = 120 / 12 = 10 m/s.\nDistance = 120 + 300 = 420 m.\nTime = 420 / 10 = 42 s.\n"
        "So it takes 42 seconds.",
    )
    assert q.features().reference_shape == "number"
    proof = RoutingQuery(
        "p",
        "Prove that no rational squares to 12.",
        "Suppose (p/q)^2 = 12 ... Therefore no rational has square 12.",
    )
    assert proof.features().reference_shape == "text"


@pytest.mark.parametrize(
    ("query", "reference", "metadata", "expected"),
    [
        # the answer-format instruction ending its sentence with a full stop
        ("Which ending fits? Reply with 1 or 2.", 2, {}, "index"),
        # labels in any script after their digits
        ("주제를 고르세요. (0: 정치, 1: 경제, 2: 사회) 제목: 증시 반등", 1, {}, "index"),
        ("选择情感 (0：负面，1：正面)：这部电影很好看", 1, {}, "index"),
        # a label map in metadata: ids to names, or names to ids
        (
            "Headline: Shares slide after the profit warning",
            0,
            {"label_map": {"0": "down", "1": "up"}},
            "index",
        ),
        ("Headline: Shares slide", 1, {"label2id": {"down": 0, "up": 1}}, "index"),
        # options numbered by what they are, in the query or in metadata fields
        ("Response 1: It rains.\nResponse 2: The sun shines.\nWhich is more helpful?", 1, {}, "index"),
        ("故事：他迟到了。\n结尾1：他道歉了。\n结尾2：他飞走了。", 1, {}, "index"),
        ("Pick the better output.", 2, {"output_1": "a", "output_2": "b"}, "index"),
        (
            "Finish the story: She trained for months.",
            1,
            {"sentence_quiz1": "a", "sentence_quiz2": "b"},
            "index",
        ),
        # one label of a query that asks for every applicable one is a set of labels
        (
            "Return every applicable category id as a JSON list.",
            [3],
            {"label_names": ["a", "b", "c", "d"]},
            "item_list",
        ),
        ("List every moderation code that applies (S, H, V):", ["V"], {}, "item_list"),
        # a number the query gives is not a label when nothing maps it
        ("Compute the sum of 1 and 2.", 3, {}, ""),
    ],
)
def test_labels_in_any_script_and_options_numbered_by_what_they_are(
    query: str, reference: object, metadata: dict[str, object], expected: str
) -> None:
    assert kind(query, reference, metadata) == expected


@pytest.mark.parametrize(
    ("query", "reference", "expected"),
    [
        ("日本語から英語に翻訳してください：彼は明日来る。", "He will come tomorrow.", True),
        ("请把下面的句子翻译成英文：我喜欢茶。", "I like tea.", True),
        ("다음 문장을 영어로 번역하세요: 비가 온다.", "It is raining.", True),
        ("Traduce al inglés: El gato duerme.", "The cat is sleeping.", True),
        ("Übersetze ins Englische: Der Hund bellt.", "The dog barks.", True),
        ("Summarise: The council met and approved the budget.", "The budget was approved.", False),
    ],
)
def test_a_translation_asked_for_in_other_languages(query: str, reference: str, expected: bool) -> None:
    assert RoutingQuery("t", query, reference).features().translation is expected


@pytest.mark.parametrize(
    ("query", "reference", "metadata", "expected"),
    [
        # ids each set equal to a label, in any script
        ("Ist der Satz grammatisch? (0 = nein, 1 = ja)\nSatz: Der Hund bellt.", 1, {}, "index"),
        ("질문: 서울은 한국의 수도인가?\n답 (0 = 아니오, 1 = 예):", 1, {}, "index"),
        ("Solve the system: 3 = x + y, 1 = x - y. What is x?", 2, {}, ""),  # equations, not labels
        # label ids, one per token of a query that is itself the token list
        ('["Aspirin", "inhibits", "COX", "-", "1", "."]', [1, 0, 1, 2, 2, 0], {}, "tag_sequence"),
        ('["The", "cat", "sat"]', [0, 0], {}, ""),  # not one per token
    ],
)
def test_equated_label_ids_and_tags_for_a_tokenised_query(
    query: str, reference: object, metadata: dict[str, object], expected: str
) -> None:
    assert kind(query, reference, metadata) == expected
