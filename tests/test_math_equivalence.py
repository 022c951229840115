"""Math answer equivalence: the tool against the math-verify library alone on the shipped labelled pairs, and
the documented rules (percent, hedging, number spam, choice letters) on cases of their own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlar.benchmarks.math import load_pairs, run
from rlar.cli import main
from rlar.tools import ToolInput, builtin_specs, make_tool

DATA = Path(__file__).resolve().parents[1] / "data"


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


@pytest.mark.parametrize("name", ["math_pairs.jsonl", "math_pairs_heldout.jsonl"])
def test_the_tool_is_never_below_the_library_alone(name):
    doc = run(DATA / name)
    assert doc["library_right_tool_wrong"] == 0, doc["tool_misses"]
    assert doc["tool_accuracy"] > doc["library_accuracy"]
    for source, row in doc["by_source"].items():
        assert row["tool"] >= row["library"], source


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
    ],
)
async def test_documented_rules(math_tool, reference, response, score):
    res = await math_tool.score(ToolInput("q", response, reference))
    assert res.status == "ok" and res.score == score, res
