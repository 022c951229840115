"""Public dataset formats as tasks: GSM8K, MATH, HumanEval, MBPP, IFEval, WMT/FLORES, chat, as published."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rlar.tasks import TaskConfig, TaskDataError, build_mix, load_task
from rlar.tasks.formats import boxed_answer, detect_format, gsm8k_final_answer, load_format
from tests.support.env import REPO

DATA = REPO / "data" / "formats"


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _rows(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines() if line.strip()]


@pytest.mark.parametrize(
    ("name", "fmt", "n", "first_id", "first_reference"),
    [
        ("gsm8k_sample.jsonl", "gsm8k", 8, "gsm8k_sample-1", "12"),
        ("math_sample.jsonl", "math", 8, "math_sample-1", "$\\dfrac{7}{8}$"),
        ("math500_sample.jsonl", "math", 3, "test/number_theory/101.json", "$\\frac{1}{3}$"),
        ("humaneval_sample.jsonl", "humaneval", 3, "Sample/0", None),
        ("mbpp_sample.jsonl", "mbpp", 3, "601", None),
        ("mbpp_sanitized_sample.jsonl", "mbpp", 3, "2", None),
        ("ifeval_sample.jsonl", "ifeval", 7, "1000", None),
        ("wmt_sample.jsonl", "wmt", 6, "wmt_sample-1", "Das Haus ist klein."),
        ("flores_eng_Latn-deu_Latn.jsonl", "flores", 4, "1", None),
        (
            "flores_devtest",
            "flores",
            4,
            "1",
            "Der Ausschuss traf sich am Dienstag, um den Haushalt zu besprechen.",
        ),
        ("chat_sample.jsonl", "chat", 3, "c1", "Bubbles, Goldie or Finn are friendly choices."),
        ("sharegpt_sample.jsonl", "chat", 2, "sg1", "Red is a primary colour."),
        ("alpaca_eval_sample.jsonl", "alpaca", 3, "alpaca_eval_sample-1", None),
    ],
)
def test_each_published_layout_is_detected_and_loads(
    name: str, fmt: str, n: int, first_id: str, first_reference: Any
) -> None:
    path = DATA / name
    assert detect_format(path) == fmt
    ds = load_task({"name": "t", "source": "auto", "path": str(path)})
    explicit = load_task({"name": "t", "source": fmt, "path": str(path)})
    assert [r.to_dict() for r in ds] == [r.to_dict() for r in explicit]
    assert len(ds) == n and ds[0].id == first_id and ds.spec.name == "t"
    if first_reference is not None:
        assert ds[0].reference == first_reference


def test_gsm8k_final_answers_lose_thousands_separators_and_keep_signs_and_decimals() -> None:
    assert gsm8k_final_answer("2 + 2 = <<2+2=4>>4\n#### 1,250") == "1250"
    assert gsm8k_final_answer("#### 1,000,000") == "1000000"
    assert gsm8k_final_answer("#### -5") == "-5"
    assert gsm8k_final_answer("#### 0.125") == "0.125"
    assert gsm8k_final_answer("a #### 3 then #### 7") == "7"
    for bad in ("no marker at all", "####   "):
        with pytest.raises(ValueError):
            gsm8k_final_answer(bad)
    refs = [
        r.reference
        for r in load_task({"name": "g", "source": "gsm8k", "path": str(DATA / "gsm8k_sample.jsonl")})
    ]
    assert refs == ["12", "2750", "1000000", "0", "-5", "0.125", "20", "75"]


def test_gsm8k_prompt_carries_the_instruction_unless_it_is_switched_off(tmp_path: Path) -> None:
    path = DATA / "gsm8k_sample.jsonl"
    ds = load_task({"name": "g", "source": "gsm8k", "path": str(path)})
    assert ds[0].prompt.endswith('output the final answer after "####".')
    assert ds[0].metadata["solution"].endswith("#### 12")
    bare = load_task({"name": "g", "source": "gsm8k", "path": str(path), "options": {"instruction": ""}})
    assert bare[0].prompt == _rows("gsm8k_sample.jsonl")[0]["question"]


def test_a_gsm8k_row_without_a_final_answer_names_the_file_and_line(tmp_path: Path) -> None:
    path = _write_jsonl(
        tmp_path / "g.jsonl", [{"question": "q?", "answer": "#### 1"}, {"question": "q2", "answer": "x"}]
    )
    with pytest.raises(TaskDataError, match=r"g\.jsonl, line 2: gsm8k: .*####"):
        load_format("gsm8k", path)


@pytest.mark.parametrize(
    ("solution", "answer"),
    [
        ("so $\\boxed{\\frac{1}{2}}$.", "\\frac{1}{2}"),
        ("first \\boxed{1} then \\boxed{\\dfrac{\\sqrt{3}}{2}}", "\\dfrac{\\sqrt{3}}{2}"),
        ("$\\boxed{\\text{(C)}}$", "\\text{(C)}"),
        ("interval $\\boxed{[1, \\infty)}$", "[1, \\infty)"),
        ("$(2+1)(2+1) = \\boxed 9$ divisors.", "9"),
        ("\\fbox{x^{2}}", "x^{2}"),
        ("set $\\boxed{\\{1, 2\\}}$", "\\{1, 2\\}"),
        ("nothing boxed", None),
        ("unclosed \\boxed{1", None),
    ],
)
def test_boxed_answers_match_braces(solution: str, answer: str | None) -> None:
    assert boxed_answer(solution) == answer


def test_math_references_are_latex_in_math_delimiters_with_level_and_type() -> None:
    ds = load_task({"name": "m", "source": "math", "path": str(DATA / "math_sample.jsonl")})
    assert [r.reference for r in ds] == [
        "$\\dfrac{7}{8}$",
        "$\\sqrt{2}$",
        "$(-2, 2)$",
        "$\\text{m}/\\text{s}$",
        "$\\frac{1}{3}$",
        "$9$",
        "$3, -3$",
        "$\\frac{4}{9}$",
    ]
    assert ds[2].metadata["level"] == "Level 3" and ds[2].metadata["type"] == "Algebra"
    assert ds[0].prompt.endswith("within \\boxed{}.")
    m500 = load_task({"name": "m", "source": "math", "path": str(DATA / "math500_sample.jsonl")})
    assert m500[1].reference == "$[1,\\infty)$" and m500[1].metadata["subject"] == "Algebra"


def test_humaneval_rows_become_code_references_the_one_converter_accepts(tmp_path: Path) -> None:
    from rlar.sandbox import parse_code_tests

    ds = load_task({"name": "h", "source": "humaneval", "path": str(DATA / "humaneval_sample.jsonl")})
    tests = parse_code_tests(ds[0].reference)
    assert tests.style == "humaneval" and tests.entry_point == "add_even" and tests.prompt == ds[0].prompt
    assert ds.spec.default_tools == (("code_tests", 1.0),)
    assert "sum(" in ds[0].metadata["canonical_solution"]
    row = _rows("humaneval_sample.jsonl")[0]
    broken = _write_jsonl(tmp_path / "he.jsonl", [{**row, "entry_point": ""}])
    with pytest.raises(TaskDataError, match=r"line 1: humaneval: column 'entry_point'"):
        load_format("humaneval", broken)


def test_mbpp_prompts_show_the_tests_and_references_keep_setup_code_and_test_imports() -> None:
    ds = load_task({"name": "m", "source": "mbpp", "path": str(DATA / "mbpp_sample.jsonl")})
    assert ds[1].reference == {
        "test_list": _rows("mbpp_sample.jsonl")[1]["test_list"],
        "test_setup_code": "from collections import Counter",
    }
    assert (
        ds[0].prompt.startswith("You are an expert Python programmer")
        and "assert max_of_three" in ds[0].prompt
    )
    sanitized = load_task({"name": "s", "source": "mbpp", "path": str(DATA / "mbpp_sanitized_sample.jsonl")})
    assert (
        sanitized[2].reference["test_imports"] == ["import math"]
        and "test_setup_code" not in sanitized[2].reference
    )
    challenge = load_task(
        {
            "name": "m",
            "source": "mbpp",
            "path": str(DATA / "mbpp_sample.jsonl"),
            "options": {"challenge_tests": True, "include_tests": False},
        }
    )
    assert (
        len(challenge[2].reference["test_list"]) == 5
        and challenge[2].prompt == _rows("mbpp_sample.jsonl")[2]["text"]
    )


def test_unknown_options_and_options_on_plain_files_are_refused() -> None:
    with pytest.raises(ValueError, match="has no option"):
        load_task(
            {"name": "m", "source": "mbpp", "path": str(DATA / "mbpp_sample.jsonl"), "options": {"shots": 3}}
        )
    with pytest.raises(ValueError, match="options apply to"):
        TaskConfig.model_validate({"name": "x", "source": "jsonl", "path": "x.jsonl", "options": {"a": 1}})
    with pytest.raises(ValueError, match="fields apply to"):
        TaskConfig.model_validate(
            {"name": "x", "source": "gsm8k", "path": "x.jsonl", "fields": {"prompt": "q"}}
        )


def test_ifeval_parquet_with_null_filled_kwargs_loads_like_the_jsonl(tmp_path: Path) -> None:
    rows = _rows("ifeval_sample.jsonl")
    keys = sorted(
        {k for r in rows for kw in r["kwargs"] for k in kw} | {"num_highlights", "capital_relation"}
    )
    filled = [{**r, "kwargs": [{k: kw.get(k) for k in keys} for kw in r["kwargs"]]} for r in rows]
    path = tmp_path / "train-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist(filled), path)
    assert detect_format(path) == "ifeval"
    from_parquet = load_task({"name": "i", "source": "auto", "path": str(path)})
    from_jsonl = load_task({"name": "i", "source": "ifeval", "path": str(DATA / "ifeval_sample.jsonl")})
    assert [r.reference for r in from_parquet] == [r.reference for r in from_jsonl]
    assert from_parquet[2].reference == {
        "instruction_id_list": ["detectable_format:number_bullet_lists", "startend:end_checker"],
        "kwargs": [{"num_bullets": 3}, {"end_phrase": "Any other questions?"}],
    }


def test_ifeval_rows_with_unknown_instructions_or_missing_kwargs_fail_loading(tmp_path: Path) -> None:
    base = {"key": 1, "prompt": "p"}
    for bad, reason in [
        ({"instruction_id_list": ["made:up"], "kwargs": [{}]}, "unknown IFEval instruction"),
        (
            {"instruction_id_list": ["length_constraints:number_words"], "kwargs": [{"num_words": 5}]},
            "relation",
        ),
        ({"instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}, {}]}, "one dict per"),
    ]:
        path = _write_jsonl(tmp_path / "i.jsonl", [{**base, **bad}])
        with pytest.raises(TaskDataError, match=reason):
            load_format("ifeval", path)


def test_gsm8k_and_mbpp_parquet_files_load_like_their_jsonl(tmp_path: Path) -> None:
    for name, fmt in [("gsm8k_sample.jsonl", "gsm8k"), ("mbpp_sample.jsonl", "mbpp")]:
        path = tmp_path / f"{fmt}-test.parquet"
        pq.write_table(pa.Table.from_pylist(_rows(name)), path)
        a = load_task({"name": fmt, "source": "auto", "path": str(path)})
        b = load_task({"name": fmt, "source": fmt, "path": str(DATA / name)})
        assert [(r.prompt, r.reference) for r in a] == [(r.prompt, r.reference) for r in b]


def test_wmt_direction_defaults_to_english_first_and_follows_the_option() -> None:
    path = str(DATA / "wmt_sample.jsonl")
    en_de = load_task({"name": "w", "source": "wmt", "path": path})
    assert en_de[0].reference == "Das Haus ist klein." and "English text into German" in en_de[0].prompt
    de_en = load_task({"name": "w", "source": "wmt", "path": path, "options": {"direction": "de-en"}})
    assert de_en[0].reference == "The house is small." and de_en[0].metadata == {
        "source": "Das Haus ist klein.",
        "source_lang": "de",
        "target_lang": "en",
    }
    with pytest.raises(TaskDataError, match="language 'fr'"):
        load_task({"name": "w", "source": "wmt", "path": path, "options": {"direction": "de-fr"}})


def test_wmt_rows_with_no_english_side_need_a_direction(tmp_path: Path) -> None:
    path = _write_jsonl(tmp_path / "x.jsonl", [{"translation": {"cs": "Ahoj.", "de": "Hallo."}}])
    with pytest.raises(TaskDataError, match="set the direction"):
        load_format("wmt", path)
    assert load_format("wmt", path, options={"direction": "cs-de"})[0].reference == "Hallo."


def test_flores_per_language_files_align_by_position_and_take_iso_codes(tmp_path: Path) -> None:
    ds = load_task(
        {
            "name": "f",
            "source": "flores",
            "path": str(DATA / "flores_devtest"),
            "options": {"direction": "de-en"},
        }
    )
    assert ds[0].reference.startswith("The committee met") and ds[0].metadata["source_lang"] == "deu_Latn"
    pair = load_task({"name": "f", "source": "flores", "path": str(DATA / "flores_eng_Latn-deu_Latn.jsonl")})
    assert [r.reference for r in pair] == (
        DATA / "flores_devtest" / "deu_Latn.devtest"
    ).read_text().splitlines()
    short = tmp_path / "flores"
    short.mkdir()
    (short / "eng_Latn.devtest").write_text("One.\nTwo.\n")
    (short / "fra_Latn.devtest").write_text("Un.\n")
    with pytest.raises(TaskDataError, match=r"1 sentences, but eng_Latn\.devtest has 2"):
        load_format("flores", short)
    (short / "fra_Latn.devtest").write_text("Un.\nDeux.\n")
    (short / "deu_Latn.devtest").write_text("Eins.\nZwei.\n")
    with pytest.raises(TaskDataError, match="set the direction"):
        load_format("flores", short)
    assert load_format("flores", short, options={"direction": "fr-de"})[1].reference == "Zwei."


def test_chat_turns_split_into_prompt_and_final_assistant_reference() -> None:
    ds = load_task({"name": "c", "source": "chat", "path": str(DATA / "chat_sample.jsonl")})
    assert ds[1].prompt == [
        {"role": "system", "content": "You are a concise tutor."},
        {"role": "user", "content": "Explain recursion in one sentence."},
    ]
    assert ds[1].reference is None
    assert (
        ds[2].prompt[-1] == {"role": "user", "content": "And in French?"} and ds[2].reference == "Bonjour !"
    )
    sharegpt = load_task({"name": "s", "source": "chat", "path": str(DATA / "sharegpt_sample.jsonl")})
    assert sharegpt[1].prompt[0] == {"role": "system", "content": "Answer briefly."}
    alpaca = load_task({"name": "a", "source": "alpaca", "path": str(DATA / "alpaca_eval_sample.jsonl")})
    assert alpaca[1].prompt == "Rewrite the sentence in passive voice.\n\nThe cat chased the mouse."
    assert alpaca[0].metadata == {"generator": "text_davinci_003", "dataset": "helpful_base"}


def test_a_chat_without_a_user_turn_is_refused(tmp_path: Path) -> None:
    path = _write_jsonl(tmp_path / "c.jsonl", [{"messages": [{"role": "assistant", "content": "Hi"}]}])
    with pytest.raises(TaskDataError, match="no user turn"):
        load_format("chat", path)


def test_detection_names_the_candidates_when_ambiguous_and_the_columns_when_unknown(tmp_path: Path) -> None:
    both = _write_jsonl(
        tmp_path / "both.jsonl", [{"question": "q", "answer": "#### 1", "problem": "p", "solution": "s"}]
    )
    with pytest.raises(TaskDataError, match=r"ambiguous format.*gsm8k and math"):
        detect_format(both)
    with pytest.raises(TaskDataError, match="ambiguous"):
        load_task({"name": "x", "source": "auto", "path": str(both)})
    assert len(load_task({"name": "x", "source": "math", "path": str(both)})) == 1
    odd = _write_jsonl(tmp_path / "odd.jsonl", [{"q": "x", "a": "y"}])
    with pytest.raises(TaskDataError, match=r"no known dataset format has columns \['a', 'q'\]"):
        detect_format(odd)
    own = _write_jsonl(tmp_path / "own.jsonl", [{"prompt": "x", "reference": "y"}])
    assert (
        detect_format(own) == "jsonl"
        and load_task({"name": "o", "source": "auto", "path": str(own)})[0].reference == "y"
    )


def test_training_takes_the_same_files_as_a_mix(tmp_path: Path) -> None:
    mix = build_mix(
        [
            {"name": "gsm8k", "source": "gsm8k", "path": "formats/gsm8k_sample.jsonl", "weight": 2.0},
            {"name": "mbpp", "source": "auto", "path": "formats/mbpp_sample.jsonl"},
            {
                "name": "ifeval",
                "source": "ifeval",
                "path": "formats/ifeval_sample.jsonl",
                "spec": {"description": "Follow the instructions."},
            },
        ],
        seed=0,
        base_dir=DATA.parent,
    )
    seen = {next(mix).task.name for _ in range(40)}
    assert seen == {"gsm8k", "mbpp", "ifeval"}
    specs = {ds.name: ds.spec for ds in mix.datasets}
    assert specs["ifeval"].description == "Follow the instructions." and specs["ifeval"].default_tools == (
        ("ifeval", 1.0),
    )
    assert specs["gsm8k"].domain == "math" and specs["mbpp"].domain == "code"
