"""Rule tools on real inputs: math-verify equivalences, exact / normalised / contains match, format rules."""

from __future__ import annotations

import re
import time

import pytest

from rlar.tools import ToolInput, builtin_specs, make_tool
from rlar.tools.base import RewardTool
from rlar.tools.rules import normalize_text


def tool(name: str, **params) -> RewardTool:
    spec = next(s for s in builtin_specs() if s.name == name)
    return make_tool(spec.replace(params={**spec.params, **params}) if params else spec)


@pytest.fixture(scope="module")
def math_tool() -> RewardTool:
    return tool("math_verify")


@pytest.mark.parametrize(
    ("reference", "response"),
    [
        ("1/2", "0.5"),
        ("0.5", "1/2"),
        ("\\frac{1}{2}", "The answer is 0.5."),
        ("0.5", "So the probability is $\\frac{1}{2}$."),
        ("1/2", "Therefore \\boxed{\\frac12}."),
        ("1000", "1,000"),
        ("1,000", "1000"),
        ("1000", "The total is 1,000 dollars."),
        ("1000000", "\\boxed{1,000,000}"),
        ("72", "48 + 24 = 72, so she sold 72 clips."),
        ("Natalia sold 48/2 = 24 clips in May.\nAltogether 48+24 = 72 clips.\n#### 72", "#### 72"),
        ("12", "We get 3 apples and 9 pears, so \\boxed{12}. Check: 3 + 9 = 12"),
        ("5", "5.0"),
        ("\\sqrt{2}/2", "\\boxed{\\frac{\\sqrt{2}}{2}}"),
        ("-3", "x = -3"),
        ("18", "She makes \\$18 every day."),
        ("18", "18.00"),
        ("18", "**18**"),
    ],
)
async def test_math_answers_a_user_would_accept_score_one(math_tool, reference, response):
    res = await math_tool.score(ToolInput("q", response, reference))
    assert res.status == "ok" and res.score == 1.0, res


@pytest.mark.parametrize(
    ("reference", "response"),
    [
        ("3", "The answer is 4"),
        ("1/2", "0.25"),
        ("1000", "100"),
        ("18", "0.18"),
        ("72", "I am not sure."),
        ("72", ""),
        ("12", "\\boxed{13}. Earlier I wrote 12 by mistake"),  # boxed answer wins over stray numbers
    ],
)
async def test_wrong_or_missing_math_answers_score_zero(math_tool, reference, response):
    res = await math_tool.score(ToolInput("q", response, reference))
    assert res.status == "ok" and res.score == 0.0, res


async def test_math_accepts_any_of_several_references_and_abstains_without_one(math_tool):
    res = await math_tool.score(ToolInput("q", "x = 0.5", ["2", "1/2"]))
    assert res.score == 1.0 and res.details["matched"] == "1/2"
    assert (await math_tool.score(ToolInput("q", "4", None))).status == "abstain"
    unparsable = await math_tool.score(ToolInput("q", "4", "no number here"))
    assert unparsable.status == "abstain" and "not parseable" in unparsable.reason


async def test_exact_match_is_exact_after_stripping():
    t = tool("exact_match")
    assert (await t.score(ToolInput("q", "  Paris\n", "Paris"))).score == 1.0
    assert (await t.score(ToolInput("q", "paris", "Paris"))).score == 0.0
    assert (await t.score(ToolInput("q", "B", ["A", "B"]))).score == 1.0


async def test_exact_match_with_an_answer_pattern_uses_its_last_match():
    t = tool("exact_match", answer_pattern=r"Answer:\s*(\S+)")
    assert (await t.score(ToolInput("q", "Answer: A\nwait.\nAnswer: C", "C"))).score == 1.0
    none = await t.score(ToolInput("q", "C", "C"))
    assert none.score == 0.0 and none.reason == "no answer found"


async def test_normalized_match_ignores_case_punctuation_and_whitespace():
    t = tool("normalized_match")
    assert (await t.score(ToolInput("q", "  The Eiffel   Tower! ", "the eiffel tower"))).score == 1.0
    assert (await t.score(ToolInput("q", "Eiffel Tower", "the eiffel tower"))).score == 0.0
    articles = tool("normalized_match", remove_articles=True)
    assert (await articles.score(ToolInput("q", "Eiffel Tower", "the eiffel tower"))).score == 1.0
    assert normalize_text("Ｆｕｌｌ—width, «quotes»") == "full width quotes"


async def test_contains_match_needs_whole_words():
    t = tool("contains_match")
    assert (
        await t.score(ToolInput("q", "I believe it was Marie Curie, in 1903.", "marie curie"))
    ).score == 1.0
    assert (await t.score(ToolInput("q", "The answer is 112.", "12"))).score == 0.0
    assert (await t.score(ToolInput("q", "The answer is 12.", "12"))).score == 1.0
    assert (await t.score(ToolInput("q", "anything", None))).status == "abstain"


async def test_format_rules_check_patterns_phrases_and_lengths():
    t = tool(
        "format_rules",
        required_patterns=[r"^Answer: .+$"],
        forbidden_phrases=["As an AI"],
        max_words=12,
        min_chars=10,
    )
    good = await t.score(ToolInput("q", "Reasoning here.\nAnswer: 42"))
    assert good.score == 1.0 and good.reason == "all checks passed"
    bad = await t.score(
        ToolInput("q", "As an AI language model I cannot say. The answer is forty two probably.")
    )
    assert bad.score == 0.0
    assert "requires /^Answer: .+$/" in bad.reason and "forbids phrase 'as an ai'" in bad.reason
    assert "max_words=12" in bad.reason
    fraction = tool("format_rules", required_patterns=["<think>"], max_words=3, scoring="fraction")
    res = await fraction.score(ToolInput("q", "<think> a b c d e"))
    assert res.score == pytest.approx(0.5)


def test_format_rules_reject_bad_params_at_build_time():
    with pytest.raises(ValueError):
        tool("format_rules", scoring="sometimes")
    with pytest.raises(re.error):
        tool("format_rules", required_patterns=["(unclosed"])


async def test_rule_tool_throughput_in_process():
    rates = {}
    inputs = [ToolInput("q", f"After some work, the answer is {i}.", str(i % 5)) for i in range(500)]
    for name in ("exact_match", "normalized_match", "contains_match", "format_rules", "math_verify"):
        t = tool(name, required_patterns=[r"answer is \d+"]) if name == "format_rules" else tool(name)
        t0 = time.perf_counter()
        results = await t.score_batch(inputs)
        rates[name] = len(inputs) / (time.perf_counter() - t0)
        assert all(r.status == "ok" for r in results)
    print("in-process scores/s:", {k: round(v) for k, v in rates.items()})
    assert rates["normalized_match"] > 1000 and rates["math_verify"] > 20


async def test_format_rules_checks_the_rules_a_chat_record_carries_in_its_metadata() -> None:
    from rlar.tasks import builtin_task
    from rlar.tools import ToolInput, builtin_specs, make_tool

    tool = make_tool(next(s for s in builtin_specs() if s.name == "format_rules"))
    rec = next(
        r
        for r in builtin_task("chat", "train")
        if any(x["rule"] == "bullets" for x in r.metadata["format_rules"])
    )
    rules = rec.metadata["format_rules"]
    good = await tool.score(
        ToolInput(query="q", response=str(rec.reference), reference=None, metadata={"format_rules": rules})
    )
    assert good.status == "ok" and good.score == 1.0, good.reason
    bad = await tool.score(
        ToolInput(
            query="q", response="no bullets here at all", reference=None, metadata={"format_rules": rules}
        )
    )
    assert bad.status == "ok" and bad.score == 0.0 and "bullets" in bad.reason
    three = [{"rule": "bullets", "min": 3, "max": 3}, {"rule": "exclude", "words": ["banana"]}]
    r = await tool.score(
        ToolInput(query="q", response="- a\n- b\n- c", reference=None, metadata={"format_rules": three})
    )
    assert r.score == 1.0
    r = await tool.score(
        ToolInput(query="q", response="- a\n- banana", reference=None, metadata={"format_rules": three})
    )
    assert r.score == 0.0


@pytest.mark.parametrize(
    ("response", "score"),
    [
        ("Paris", 1.0),
        ("The capital of France is Paris.", 1.0),
        ("It is Paris, a city on the Seine, known for its museums.", 1.0),
        ("Paris, France", 1.0),
        ("Paris, London, Berlin, Rome, Madrid", 0.0),
        ("Paris or London", 0.0),
        ("It is either Lyon or Paris.", 0.0),
        ("Paris London Berlin Rome Madrid Vienna", 0.0),
        ("- Lyon\n- Paris\n- Nice\n- Lille", 0.0),
    ],
)
async def test_contains_match_resists_the_answer_that_lists_everything(response, score):
    res = await tool("contains_match").score(ToolInput("Capital of France?", response, "Paris"))
    assert res.status == "ok" and res.score == score, res


async def test_whole_answer_tools_never_match_a_list_and_lists_can_be_allowed():
    listing = "12, 13, 14, 15"
    for name in ("exact_match", "normalized_match", "contains_match"):
        assert (await tool(name).score(ToolInput("q", listing, "13"))).score == 0.0, name
    base = next(s for s in builtin_specs() if s.name == "contains_match")
    lenient = make_tool(base.replace(params={**base.params, "allow_lists": True}).sealed())
    assert (await lenient.score(ToolInput("q", listing, "13"))).score == 1.0


def test_record_rules_read_included_words_as_words_and_numbered_items_in_order() -> None:
    from rlar.tools.rules import record_rule_checks

    def ok(text: str, rule: dict[str, object]) -> bool:
        return all(record_rule_checks(text, [rule]).values())

    include = {"rule": "include", "words": ["cat"]}
    assert ok("The cat sat.", include) and not ok("A category of things.", include)
    exclude = {"rule": "exclude", "words": ["cat"]}
    assert ok("A category of things.", exclude) and not ok("The Cat sat.", exclude)
    three = {"rule": "numbered", "min": 3, "max": 3}
    assert ok("1. a\n2. b\n3. c", three) and not ok("1. a\n1. b\n1. c", three)
    assert not ok("1. a\n2. b", three)
