"""Math answer equivalence: the tool against the math-verify library alone on the shipped labelled pairs, and
the documented rules (percent, hedging, number spam, choice letters) on cases of their own."""

from __future__ import annotations

import json

import pytest

from rlar.app.cli import main
from rlar.benchmarks.math import load_pairs, run
from rlar.tools import ToolInput, builtin_specs, make_tool
from tests.support.env import REPO

DATA = REPO / "data"


@pytest.fixture(scope="module")
def math_tool():
    return make_tool(next(s for s in builtin_specs() if s.name == "math_verify").sealed())


def test_shipped_pairs_cover_the_public_formats():
    pairs = load_pairs(DATA / "math_pairs.jsonl")
    held_out = load_pairs(DATA / "math_pairs_heldout.jsonl")
    assert len(pairs) >= 150 and len(held_out) >= 50
    for rows in (pairs, held_out):
        assert {p["source"] for p in rows} == {"gsm8k", "math", "aime", "svamp", "mc"}
        labels = [p["label"] for p in rows]
        assert 0.3 < sum(labels) / len(labels) < 0.8  # both kinds of pair, not a one-sided set
    keys = {(p["reference"], p["response"]) for p in pairs}
    assert not keys & {(p["reference"], p["response"]) for p in held_out}


@pytest.mark.parametrize(
    "name",
    [
        "math_pairs.jsonl",
        "math_pairs_heldout.jsonl",
        "math_pairs_heldout2.jsonl",
        "math_pairs_heldout3.jsonl",
    ],
)
def test_the_tool_is_never_below_the_library_alone(name):
    doc = run(DATA / name)
    assert doc["library_right_tool_wrong"] == 0, doc["tool_misses"]
    assert doc["tool_accuracy"] > doc["library_accuracy"]
    for source, row in doc["by_source"].items():
        assert row["tool"] >= row["library"], source
    for kind, row in doc["by_class"].items():
        assert row["tool"] >= row["library"], kind
    if name in ("math_pairs_heldout2.jsonl", "math_pairs_heldout3.jsonl"):
        assert set(doc["by_class"]) == CLASSES


def test_bench_math_prints_both_accuracies_as_json(capsys, tmp_path):
    data = tmp_path / "pairs.jsonl"
    rows = [
        {"id": "a", "source": "gsm8k", "reference": "#### 5", "response": "1 2 3 4 5", "label": False},
        {"id": "b", "source": "math", "reference": "x+3", "response": "$\\boxed{3+x}$", "label": True},
    ]
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert main(["bench", "math", "--data", str(data), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert doc["pairs"] == 2 and doc["tool_accuracy"] == 1.0 and doc["library_accuracy"] == 0.0
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"reference": "1", "response": "1", "label": "yes"}\n')
    with pytest.raises(ValueError, match="line 1: label must be true or false"):
        load_pairs(bad)


@pytest.mark.parametrize(
    ("reference", "response", "score"),
    [
        # percent: X% equals X and X/100; a bare number equals only itself
        ("40\\%", "\\boxed{0.4}", 1.0),
        ("40\\%", "40 percent", 1.0),
        ("40", "40%", 1.0),
        ("0.4", "40%", 1.0),
        ("40", "0.4", 0.0),
        # hedging and spam, when the reference is one value
        ("#### 12", "It is 12 or 13.", 0.0),
        ("#### 12", "Final answer: 12 or 14", 0.0),
        ("12", "10 11 12 13 14", 0.0),
        ("7", "8 7", 0.0),  # two bare numbers, no marker: a list, not the last one
        ("7", "7, 8", 0.0),
        ("7", "3 + 4 = 7", 1.0),
        ("12", "between 11 and 13", 0.0),
        ("#### 10", "The price went from 5 to 10.", 1.0),
        ("#### 10", "It needs to be 10.", 1.0),
        ("12", "The answer is 12 (twelve).", 1.0),
        ("-5, 5", "$\\boxed{5, -5}$", 1.0),  # a list reference is not hedged against
        # numbers written in other ways
        ("#### 3400", "three thousand four hundred", 1.0),
        ("#### 3400", "3.4 thousand", 1.0),
        ("#### 3400", "3,400 km", 1.0),
        ("4\\frac{1}{3}", "$\\boxed{\\frac{13}{3}}$", 1.0),
        ("#### 0.002", "2e-3", 1.0),
        ("#### 0.002", "2 \\times 10^{-3}", 1.0),
        ("007", "The answer is 7.", 1.0),
        # choice letters
        ("(D)", "I choose option d.", 1.0),
        ("(D)", "The answer is (B).", 0.0),
        ("D", "Either A or D.", 0.0),
        # structured answers go to math-verify, wrapped
        ("(2, 5]", "$\\boxed{(2,5]}$", 1.0),
        ("(2, 5]", "$\\boxed{5}$", 0.0),
        ("\\{3, 4\\}", "$\\boxed{\\{4,3\\}}$", 1.0),
        ("2x^2-8", "$\\boxed{2(x-2)(x+2)}$", 1.0),
        # \boxed without braces (MATH's own solutions): the boxed token is the answer, not a number before it
        ("9", "$(2+1)(2+1) = \\boxed 9$ divisors.", 1.0),
        ("8", "$(2+1)(2+1) = \\boxed 9$ divisors.", 0.0),
        ("12", "so $x = \\boxed 12$.", 1.0),
        ("\\pi", "the area is $\\boxed\\pi$", 1.0),
    ],
)
async def test_documented_rules(math_tool, reference, response, score):
    res = await math_tool.score(ToolInput("q", response, reference))
    assert res.status == "ok" and res.score == score, res


CLASSES = {
    "interval",
    "solution_set",
    "named",
    "pm",
    "repeating",
    "polynomial",
    "matrix",
    "gsm8k_sentence",
    "multi_answer",
}


def test_the_second_held_out_set_covers_every_class_of_issue_24_both_ways():
    pairs = load_pairs(DATA / "math_pairs_heldout2.jsonl")
    assert len(pairs) >= 60
    for name in CLASSES:
        rows = [p for p in pairs if p["class"] == name]
        assert len(rows) >= 5, name
        assert any(p["label"] for p in rows) and not all(p["label"] for p in rows), name
    training = load_pairs(DATA / "math_pairs.jsonl")
    assert {p.get("class") for p in training} >= CLASSES
    keys = {(p["reference"], p["response"]) for p in training}
    assert not keys & {(p["reference"], p["response"]) for p in pairs}


async def _score(tool, reference, response):
    res = await tool.score(ToolInput("q", response, reference))
    assert res.status == "ok", res
    return res.score


@pytest.mark.parametrize(
    ("reference", "response", "score"),
    [
        ("(-\\infty, 0] \\cup (4, \\infty)", "$\\boxed{x \\le 0 \\text{ or } x > 4}$", 1.0),
        ("(-\\infty, 0] \\cup (4, \\infty)", "$\\boxed{x < 0 \\text{ or } x > 4}$", 0.0),  # 0 left out
        ("x \\ge -2", "The answer is $x \\in [-2, \\infty)$.", 1.0),
        ("x \\ge -2", "The answer is $x \\in (-2, \\infty)$.", 0.0),
        ("[3, 6)", "Final Answer: The final answer is $3 \\leq t < 6$. I hope it is correct.", 1.0),
        ("[3, 6)", "$\\boxed{3 < t < 6}$", 0.0),
        ("(-1, 1) \\cup (1, 3)", "$\\boxed{-1 < x < 3 \\text{ and } x \\neq 1}$", 1.0),
        ("(-\\infty, -3) \\cup (3, \\infty)", "$\\boxed{|x| > 3}$", 1.0),
        ("(-\\infty, -3) \\cup (3, \\infty)", "$\\boxed{|x| \\ge 3}$", 0.0),
        # "or" between two inequalities is a union, not a hedge
        ("(-\\infty, -5] \\cup [2, \\infty)", "So $x \\le -5$ or $x \\ge 2$.", 1.0),
        ("(-\\infty, -5] \\cup [2, \\infty)", "So $x \\le -5$ or $x > 2$.", 0.0),
    ],
)
async def test_intervals_and_inequalities_that_describe_the_same_set_are_equivalent(
    math_tool, reference, response, score
):
    assert await _score(math_tool, reference, response) == score


@pytest.mark.parametrize(
    ("reference", "response", "score"),
    [
        ("-7, 3", "Factoring, $(x+7)(x-3) = 0$, so $x = 3$ or $x = -7$.", 1.0),
        ("-7, 3", "$\\boxed{x=3 \\text{ or } x=7}$", 0.0),  # wrong sign
        ("-1, 0, 4", "$\\boxed{\\{4, -1, 0\\}}$", 1.0),
        ("-1, 0, 4", "$\\boxed{-1, 4}$", 0.0),  # a solution missing
        ("-1, 0, 4", "$\\boxed{-1, 0, 4, 5}$", 0.0),  # an extra one
        ("\\frac{1}{3}, 2", "The roots are $\\frac13$ and $2$.", 1.0),
        ("\\frac{1}{3}, 2", "The roots are 2 and 1/3.", 1.0),
    ],
)
async def test_solution_sets_in_any_order_or_form_are_equivalent(math_tool, reference, response, score):
    assert await _score(math_tool, reference, response) == score


@pytest.mark.parametrize(
    ("reference", "response", "score"),
    [
        ("(6, -2)", "$\\boxed{y = -2, x = 6}$", 1.0),
        ("(6, -2)", "$\\boxed{y = 6, x = -2}$", 0.0),  # the names decide the order
        ("(6, -2)", "So $x = 6$ and $y = -2$.", 1.0),
        ("(0, 1, -1)", "$\\boxed{(a, b, c) = (0, 1, -1)}$", 1.0),
        ("(0, 1, -1)", "$\\boxed{a = 0, b = 1}$", 0.0),  # a component missing
        ("p = 2, q = 5", "$\\boxed{(5, 2)}$", 0.0),
        ("p = 2, q = 5", "$\\boxed{(2, 5)}$", 1.0),
    ],
)
async def test_named_components_equal_the_ordered_tuple_in_the_order_of_their_names(
    math_tool, reference, response, score
):
    assert await _score(math_tool, reference, response) == score


@pytest.mark.parametrize(
    ("reference", "response", "score"),
    [
        ("\\pm 4", "$\\boxed{-4, 4}$", 1.0),
        ("\\pm 4", "$\\boxed{4}$", 0.0),
        ("-2 \\pm \\sqrt{6}", "$\\boxed{-2+\\sqrt{6}, -2-\\sqrt{6}}$", 1.0),
        ("-2 \\pm \\sqrt{6}", "$\\boxed{2 \\pm \\sqrt{6}}$", 0.0),
        ("\\frac{5 \\pm \\sqrt{17}}{4}", "$\\boxed{\\frac{5+\\sqrt{17}}{4}, \\frac{5-\\sqrt{17}}{4}}$", 1.0),
        ("1, 9", "$\\boxed{5 \\pm 4}$", 1.0),
        ("1, 9", "x = 4 ± 5", 0.0),
    ],
)
async def test_plus_minus_forms_stand_for_both_values(math_tool, reference, response, score):
    assert await _score(math_tool, reference, response) == score


@pytest.mark.parametrize(
    ("reference", "response", "score"),
    [
        ("\\frac{4}{9}", "$\\boxed{0.\\overline{4}}$", 1.0),
        ("\\frac{4}{9}", "$\\boxed{0.(4)}$", 1.0),
        ("\\frac{4}{9}", "The answer is 0.444...", 1.0),
        ("\\frac{4}{9}", "The answer is 0.444", 0.0),  # truncated, not repeating
        ("\\frac{13}{90}", "$\\boxed{0.1\\overline{4}}$", 1.0),
        ("\\frac{13}{90}", "$\\boxed{0.\\overline{14}}$", 0.0),
        ("0.\\overline{27}", "$\\boxed{\\frac{3}{11}}$", 1.0),
        ("0.\\overline{27}", "$\\boxed{\\frac{27}{100}}$", 0.0),
    ],
)
async def test_repeating_decimals_equal_their_fractions(math_tool, reference, response, score):
    assert await _score(math_tool, reference, response) == score


def test_repeating_decimals_are_rewritten_as_exact_fractions():
    from rlar.tools.math_forms import repeating_to_fraction

    assert repeating_to_fraction("0.\\overline{3}") == "\\frac{1}{3}"
    assert repeating_to_fraction("-1.2\\overline{45}") == "-\\frac{137}{110}"
    assert repeating_to_fraction("0.1666...") == "\\frac{1}{6}"
    assert repeating_to_fraction("0.142857142857...") == "\\frac{1}{7}"
    assert repeating_to_fraction("0.999...") == "1"
    assert repeating_to_fraction("3.14...") == "3.14..."  # no block repeats: left as written
    assert repeating_to_fraction("f(0.5)(3)") == "f(0.5)(3)"


@pytest.mark.parametrize(
    ("reference", "response", "score"),
    [
        ("(x-4)(x+2)", "$\\boxed{x^2-2x-8}$", 1.0),
        ("(x-4)(x+2)", "$\\boxed{x^2+2x-8}$", 0.0),
        ("x^3+27", "$\\boxed{(x+3)(x^2-3x+9)}$", 1.0),
        ("x^3+27", "$\\boxed{(x+3)(x^2+3x+9)}$", 0.0),  # a different factor
        ("5(x-1)^2", "$f(x) = 5x^2 - 10x + 5$", 1.0),
    ],
)
async def test_factorised_and_expanded_polynomials_are_equivalent(math_tool, reference, response, score):
    assert await _score(math_tool, reference, response) == score


@pytest.mark.parametrize(
    ("reference", "response", "score"),
    [
        (
            "\\begin{pmatrix} 4 & -8 \\\\ 12 & 0 \\end{pmatrix}",
            "$\\boxed{4\\begin{pmatrix} 1 & -2 \\\\ 3 & 0 \\end{pmatrix}}$",
            1.0,
        ),
        (
            "\\begin{pmatrix} 4 & -8 \\\\ 12 & 0 \\end{pmatrix}",
            "$\\boxed{4\\begin{pmatrix} 1 & 2 \\\\ 3 & 0 \\end{pmatrix}}$",
            0.0,
        ),
        (
            "\\frac{1}{4}\\begin{pmatrix} 1 \\\\ -3 \\end{pmatrix}",
            "$\\boxed{\\begin{pmatrix} 0.25 \\\\ -0.75 \\end{pmatrix}}$",
            1.0,
        ),
        (
            "\\frac{1}{4}\\begin{pmatrix} 1 \\\\ -3 \\end{pmatrix}",
            "$\\boxed{\\begin{pmatrix} 1 \\\\ -3 \\end{pmatrix}}$",
            0.0,
        ),
    ],
)
async def test_a_matrix_with_a_scalar_factor_pulled_out_is_the_same_matrix(
    math_tool, reference, response, score
):
    assert await _score(math_tool, reference, response) == score


@pytest.mark.parametrize(
    ("reference", "response", "score"),
    [
        (
            "Each bag has 6, so 5 bags hold 5 * 6 = <<5*6=30>>30.\n#### 30",
            "So there are 30 oranges in the 5 bags.",
            1.0,
        ),
        ("#### 5", "So there are 30 oranges in the 5 bags.", 0.0),
        ("#### 64", "He reads 16 pages a day, so 16 * 4 = 64.\nHe reads 64 pages in 4 days.", 1.0),
        ("#### 4", "He reads 16 pages a day, so 16 * 4 = 64.\nHe reads 64 pages in 4 days.", 0.0),
        ("#### 11", "After spending $9 of her $20, Mia has $11 left.", 1.0),
        ("#### 9", "After spending $9 of her $20, Mia has $11 left.", 0.0),
    ],
)
async def test_a_gsm8k_reference_matches_the_value_a_sentence_states(math_tool, reference, response, score):
    assert await _score(math_tool, reference, response) == score


@pytest.mark.parametrize(
    ("reference", "response"),
    [
        ("7", "$\\boxed{7, -7}$"),
        ("7", "$\\boxed{\\pm 7}$"),
        ("7", "The answer is 7 and -2."),
        ("3\\sqrt{2}", "$\\boxed{3\\sqrt{2} \\text{ or } -3\\sqrt{2}}$"),
        ("(2, 3)", "$\\boxed{(2, 3), (3, 2)}$"),
        ("10", "The answer is $\\boxed{5, 6, 7, 8, 9, 10, 11}$."),
        ("10", "$\\boxed{8}$, $\\boxed{9}$, $\\boxed{10}$"),
        ("x-1", "$\\boxed{x+1}$ $\\boxed{x}$ $\\boxed{x-1}$"),
        ("9", "The answer is 6, 7, 8, 9."),  # the reference last in the list
        ("#### 9", "Answer: 7 8 9"),
    ],
)
async def test_a_response_with_extra_solutions_or_many_candidates_is_refused(math_tool, reference, response):
    assert await _score(math_tool, reference, response) == 0.0


async def test_one_solution_stated_where_one_is_asked_still_scores_one(math_tool):
    assert await _score(math_tool, "7", "Only the positive root fits, so $\\boxed{7}$.") == 1.0
    assert await _score(math_tool, "7", "I tried 5, 6, 7 and 8; the answer is $\\boxed{7}$.") == 1.0
    assert await _score(math_tool, "7, -7", "$\\boxed{\\pm 7}$") == 1.0
