"""Discrimination probes (rlar.routing.discrimination, issue 39 item 4): before a tool scores a signature, the
signature's right answers — as written, in a sentence, in bold, with a full stop — must get its maximum and a wrong
answer of the reference's own form — the sign flipped, another value, another record's answer — must not. A tool
that cannot tell them apart is refused, and the probes it failed are recorded beside the hack probes'."""

from __future__ import annotations

from rlar.routing import RoutingQuery
from rlar.routing.discrimination import build_discrimination_probes, undiscriminated
from rlar.routing.probes import ProbeReport, ProbeScore, judge_probes, probed_answer
from rlar.routing.request import RouteAnswer
from rlar.tools.base import ToolSpec
from tests.support.routing import SUMS, builtin_spec


def probes(query: str, reference: object, others: list[object] | None = None) -> dict[str, str]:
    q = RoutingQuery(task="t", query=query, reference=reference)
    return {name: text for name, text, _ in build_discrimination_probes(q, others or [])}


def test_a_number_gets_its_written_forms_its_sign_flipped_and_another_value() -> None:
    got = probes("What is 17 + 7?", "24", ["31"])
    assert got == {
        "right": "24",
        "right_sentence": "The answer is 24.",
        "right_bold": "**24**",
        "right_period": "24.",
        "wrong_sign": "-24",
        "wrong_value": "25",
        "wrong_other": "31",
    }
    assert probes("Temperature after falling 9 degrees from 4?", "-5")["wrong_sign"] == "5"
    assert "wrong_sign" not in probes("What is 3 - 3?", "0")


def test_the_wrong_forms_keep_the_reference_s_form() -> None:
    assert probes("Which? (A) x (B) y (C) z", "B")["wrong_value"] == "C"
    assert probes("Is it raining?", "yes")["wrong_value"] == "no"
    assert probes("Simplify.", "\\frac{1}{3}")["wrong_value"] == "\\frac{2}{4}"
    assert probes("A GSM8K question?", "He pays 3 * 4 = 12.\n#### 12")["right"] == "12", (
        "a worked solution's answer"
    )
    assert probes("Capital of France?", "Paris", ["Lyon"])["wrong_other"] == "Lyon"
    assert "wrong_other" not in probes(
        "Capital of France?", "Paris", ["Paris", "The city of Paris is large."]
    )


def test_copies_transformations_long_texts_code_and_no_reference_get_no_full_stop_or_no_probes() -> None:
    assert "right_period" not in probes("Copy the text: hello world", "hello world"), (
        "the characters are the task"
    )
    assert (
        probes(
            "Translate to German: The dog sleeps in the garden all day.", "Der Hund schläft den ganzen Tag."
        )
        == {}
    )
    assert probes("Write a function.", ["assert f(1) == 2"]) == {}
    assert probes("Tell me a story.", None) == {}


def test_a_tool_is_refused_when_a_right_form_misses_its_maximum_or_a_wrong_form_gets_it() -> None:
    def told(**scores: float | None) -> list[ProbeScore]:
        return [ProbeScore(n, "ok" if v is not None else "abstain", v) for n, v in scores.items()]

    fine = told(right=1.0, right_sentence=1.0, wrong_sign=0.0, wrong_value=0.0)
    assert undiscriminated(fine, 1.0, 1e-6) == []
    assert undiscriminated(told(right=1.0, right_sentence=0.0), 1.0, 1e-6) == ["right_sentence"]
    assert undiscriminated(told(right=1.0, wrong_sign=1.0), 1.0, 1e-6) == ["wrong_sign"]
    assert undiscriminated(told(right=None, wrong_sign=None), 1.0, 1e-6) == [], "abstains are not counted"
    hack = [ProbeScore("empty", "ok", 0.0)]
    report = judge_probes("t", 3, (0.0, 1.0), hack, told(right=1.0, wrong_sign=1.0))
    assert report.refused and report.maxed == [] and report.undiscriminated == ["wrong_sign"]
    assert "cannot tell right from wrong answers (wrong_sign)" in report.reason
    assert report.short() == "t v3 (wrong_sign 1)"
    assert ProbeReport.from_dict(report.to_dict()).to_dict() == report.to_dict()
    assert judge_probes("t", 3, (0.0, 1.0), hack, fine).verdict == "eligible"


def test_a_graded_tool_must_score_the_written_forms_above_every_wrong_answer_not_at_its_maximum() -> None:
    metric = [
        ProbeScore("right", "ok", 1.0),
        ProbeScore("right_sentence", "ok", 0.62),
        ProbeScore("wrong_other", "ok", 0.2),
    ]
    assert undiscriminated(metric, 1.0, 1e-6, graded=True) == []
    assert undiscriminated(metric, 1.0, 1e-6) == ["right_sentence"], "a rule must read the sentence"
    blurred = [*metric[:2], ProbeScore("wrong_other", "ok", 0.7)]
    assert undiscriminated(blurred, 1.0, 1e-6, graded=True) == ["right_sentence"]
    assert undiscriminated([ProbeScore("right", "ok", 0.9)], 1.0, 1e-6, graded=True) == ["right"]


def test_most_records_decide_as_for_the_hack_probes() -> None:
    def sign(*maxed: bool) -> list[ProbeScore]:
        return [ProbeScore("wrong_sign", "ok", 1.0 if m else 0.0, record=i) for i, m in enumerate(maxed)]

    assert undiscriminated(sign(True, True, False), 1.0, 1e-6) == ["wrong_sign"]
    assert undiscriminated(sign(True, False, False), 1.0, 1e-6) == []


async def test_a_tool_refused_by_the_discrimination_probes_is_dropped_with_the_reason() -> None:
    specs = [builtin_spec("math_verify"), builtin_spec("exact_match")]
    ans = RouteAnswer(True, [specs[0].ref(0.5), specs[1].ref(0.5)], False, 0.9, "both")
    told = [ProbeScore("right", "ok", 1.0), ProbeScore("right_period", "ok", 0.0)]

    async def probe(chosen: list[ToolSpec]) -> list[ProbeReport]:
        return [
            judge_probes(
                s.name,
                1,
                (0.0, 1.0),
                [ProbeScore("empty", "ok", 0.0)],
                told if s.name == "exact_match" else [],
            )
            for s in chosen
        ]

    out, reports, again = await probed_answer(ans, specs, SUMS[0], probe)
    assert [t.tool for t in out.tools] == ["math_verify"] and again is None
    assert "probes refused exact_match v1 (right_period below 1)" in out.reason
    assert {r.tool: r.verdict for r in reports} == {"math_verify": "eligible", "exact_match": "refused"}
