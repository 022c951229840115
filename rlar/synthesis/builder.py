"""Writing responses to order: one that satisfies a set of constraints, and ones that break exactly one of them.

``build(constraints, query)`` renders a response meant to satisfy every constraint (the vocabulary of
:mod:`rlar.constraints.vocabulary`): it picks a structure (bullets, numbered items, lines, paragraphs or sentences)
with counts one step inside each bound, sizes units to the per-unit and total bounds, draws words from a
vocabulary that respects excluded words and letters, word lengths and the language, and then applies the
word-level edits (required words, occurrences, letters, numbers, punctuation, capitals, highlights,
placeholders, hashtags), the position edits (start, end, per unit) and the wrappers (title, P.S., quotes, code
block, case). Terminal forms (JSON, one of several options, "only a number") are rendered directly.

``violations(constraints, query)`` gives ``(why, response)`` pairs, each built to break one constraint clearly
(counts two past a bound, a required word missing, an excluded word used, the wrong language, ...).

A set with a composed rule (``each``, ``order``, ``total``, ``spell``, ``table``, ``yaml_keys``) is built by
:mod:`rlar.synthesis.shapes` (units that pass tests and keep relations), whose violations are added.

Neither is trusted: callers check every response with :func:`rlar.constraints.checks.holds` and drop what does
not come out as intended (a combination the builder cannot satisfy is reported, not guessed).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from rlar.constraints.checks import holds
from rlar.constraints.vocabulary import COUNT_RULES, canonical
from rlar.synthesis.builder_layouts import build_layout
from rlar.synthesis.builder_marks import DECOR_UNITS, decorate, marked, word_hints
from rlar.synthesis.builder_misses import layout_violations
from rlar.synthesis.builder_words import (
    _EN,
    _OTHER_LANGUAGE,
    _affixed_word,
    _fit_chars,
    _letters_only,
    _pick,
    _terminal,
    _vocab,
)
from rlar.synthesis.forms import FORM_RULES, apply_forms, form_hints, form_violations, json_array_text
from rlar.synthesis.shapes import build_shaped, is_shaped
from rlar.synthesis.shapes_violations import shaped_violations

__all__ = ["build", "violations"]

_STRUCTURES = ("bullets", "numbered", "items", "lines", "paragraphs", "sentences")
_WRONG_TYPE: dict[str, Any] = {
    "string": 7,
    "integer": "seven",
    "number": "2.5",
    "boolean": "yes",
    "list": "a",
    "list_of_strings": [1, 2],
    "list_of_numbers": ["a"],
    "object": "v",
    "null": "none",
}


def _key(c: Mapping[str, Any]) -> str:
    return str(c["rule"]) + (f"/{c['per']}" if c.get("per") else "")


def _bounds(rules: Mapping[str, dict[str, Any]], key: str) -> tuple[int | None, int | None]:
    c = rules.get(key, {})
    return c.get("min"), c.get("max")


def _sentence_words(rules: Mapping[str, dict[str, Any]], scope: str, default: int) -> int:
    """Words per sentence, inside the per-scope word and syllable bounds that apply to a sentence."""
    k = default
    for key in (f"words/{scope}", "words/sentence"):
        if key in rules:
            k = _pick(*_bounds(rules, key), k)
    for key in (f"syllables/{scope}", "syllables/sentence"):
        if key in rules:  # one-syllable words: one word per syllable
            k = _pick(*_bounds(rules, key), k)
    return max(1, k)


def build(
    constraints: Sequence[Mapping[str, Any]], query: str = "", *, overrides: Mapping[str, Any] | None = None
) -> str:
    """A response meant to satisfy ``constraints`` (check it with ``holds``). ``overrides`` maps a rule key
    (``rule`` or ``rule/per``) to replacement parameters, or None to drop the rule. Words or letters at a
    position (``at``) are put in place last, then the forms of the whole answer (:mod:`rlar.synthesis.forms`)."""
    cons = canonical(constraints)
    placed = [c for c in cons if c["rule"] == "at"]
    forms = [c for c in cons if c["rule"] in FORM_RULES and (overrides or {}).get(c["rule"], 0) is not None]
    cons = [c for c in cons if c["rule"] not in FORM_RULES] + form_hints(forms)
    marks = [c for c in _overridden(cons, overrides) if marked(c)]
    laid = build_layout(_overridden([c for c in cons if c["rule"] != "at"], overrides))
    if laid is not None:  # a layout (builder_layouts): the whole answer is laid out, then marked
        text = decorate(laid, marks)
        for c in placed:
            text = _place(text, c)
        return apply_forms(text, forms)
    cons = [c for c in cons if not marked(c)]
    if any(_title_word(c) for c in cons) and not any(
        c["rule"] in ("order", "spell", "total") or (c["rule"] == "each" and not _title_word(c)) for c in cons
    ):  # every word with a capital first, and nothing else composed: built as title case
        cons = [c for c in cons if not _title_word(c)] + [{"rule": "title_case"}]
    if marks:
        cons += word_hints(marks)
    one_word = any(
        c["rule"] == "words" and not c.get("per") and c.get("min") == c.get("max") == 1 for c in cons
    )
    if one_word and not any(c["rule"] == "letters" and c.get("per") for c in cons):
        # one word: its letters are the answer's, which the word-length sizing below knows how to build
        cons += [{**c, "per": "word"} for c in cons if c["rule"] == "letters" and not c.get("per")]
    text = decorate(
        _build([c for c in cons if c["rule"] != "at"], query, overrides=_unmarked(overrides)), marks
    )
    for c in placed:
        text = _place(text, c)
    return apply_forms(text, forms)


def _overridden(
    cons: Sequence[Mapping[str, Any]], overrides: Mapping[str, Any] | None
) -> list[dict[str, Any]]:
    """``cons`` with the ``overrides`` of :func:`build` applied (a rule key to new parameters, or None: dropped)."""
    out = [dict(c) for c in cons if (overrides or {}).get(_key(c), 0) is not None]
    for key, params in (overrides or {}).items():
        if params is None:
            continue
        rule, _, per = key.partition("/")
        out = [c for c in out if _key(c) != key]
        out.append({"rule": rule, **({"per": per} if per else {}), **params})
    return out


def _title_word(c: Mapping[str, Any]) -> bool:
    return (
        c["rule"] == "each" and c.get("unit") == "word" and c.get("test") in ("starts_upper", "capitalized")
    )


def _unmarked(overrides: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The overrides the general builder applies (the counted marks are :func:`decorate`'s)."""
    if overrides is None:
        return None
    return {k: v for k, v in overrides.items() if k.split("/")[0] not in DECOR_UNITS}


def _place(text: str, c: Mapping[str, Any]) -> str:
    """``text`` with its ``index``-th word (or letter) replaced by the rule's text."""
    k = int(c["index"])
    if c["unit"] == "letter":
        spots = [i for i, ch in enumerate(text) if ch.isalpha()]
        i = k - 1 if k > 0 else len(spots) + k
        if not 0 <= i < len(spots):
            return text
        j = spots[i]
        ch = str(c["text"])[:1]
        return text[:j] + (ch.upper() if text[j].isupper() else ch.lower()) + text[j + 1 :]
    marker = re.compile(r"^(?:[-*\u2022]|\d{1,3}[.)])$")
    spans = []
    for line in re.finditer(r"[^\n]+", text):
        toks = list(re.finditer(r"\S+", line.group(0)))
        if toks and marker.match(toks[0].group(0)) and len(toks) > 1:
            toks = toks[1:]
        spans += [
            (line.start() + t.start(), line.start() + t.end())
            for t in toks
            if any(ch.isalnum() for ch in t.group(0))
        ]
    i = k - 1 if k > 0 else len(spans) + k
    if not 0 <= i < len(spans):
        return text
    a, b = spans[i]
    tok = text[a:b]
    core = re.search(r"\w[\w'-]*\w|\w", tok)
    if core is None:
        return text
    word = str(c["text"])
    return text[:a] + tok[: core.start()] + word + tok[core.end() :] + text[b:]


def _build(
    constraints: Sequence[Mapping[str, Any]], query: str = "", *, overrides: Mapping[str, Any] | None = None
) -> str:
    rules: dict[str, dict[str, Any]] = {_key(c): dict(c) for c in canonical(constraints)}
    for key, params in (overrides or {}).items():
        if params is None:
            rules.pop(key, None)
        else:
            rules[key] = {
                "rule": key.split("/")[0],
                **({"per": key.split("/")[1]} if "/" in key else {}),
                **params,
            }
    cons = canonical(constraints)
    if "json_array" in rules:  # the whole answer, whatever order its numbers keep
        down = any(c["rule"] == "order" and c.get("rel") == "decreasing" for c in cons)
        text = json_array_text(rules["json_array"])
        return json.dumps(json.loads(text)[::-1]) if down else text
    if is_shaped(cons):  # composed rules share a key per rule: keep the list (several ``each`` tests)
        for key, params in (overrides or {}).items():
            cons = [c for c in cons if _key(c) != key]
            if params is not None:
                cons.append(dict(rules[key]))
        return build_shaped(cons, query)
    word = _letters_only(rules) or _affixed_word(rules)
    if word is not None:
        return word
    term = _terminal(rules)
    if term is not None:
        return str(term["text"])
    vocab = _vocab(rules, query)
    # a structure the answer must not have ("no bullet points") is not one to build it in
    structure = next((s for s in _STRUCTURES if s in rules and rules[s].get("max") != 0), None)
    if structure is None:
        scopes = {str(c.get("per")) for c in rules.values() if c.get("per") and c["rule"] in COUNT_RULES}
        structure = next(
            (
                st
                for sc, st in (("paragraph", "paragraphs"), ("item", "bullets"), ("line", "lines"))
                if sc in scopes
            ),
            "sentences",
        )
    scope = {
        "bullets": "item",
        "numbered": "item",
        "items": "item",
        "lines": "line",
        "paragraphs": "paragraph",
    }.get(structure, "sentence")
    n = _pick(*_bounds(rules, structure), 3 if structure != "sentences" else 2)
    if structure != "sentences" and "sentences" in rules and structure != "paragraphs":
        n = max(n, 1)
    per_unit = _pick(*_bounds(rules, f"sentences/{scope}"), 2 if structure == "paragraphs" else 1)
    if structure == "paragraphs" and "lines/paragraph" in rules:  # a stanza: one sentence per line
        per_unit = _pick(*_bounds(rules, "lines/paragraph"), per_unit)
    elif structure == "paragraphs" and "sentences" in rules and "sentences/paragraph" not in rules:
        # sentences counted over the whole answer: spread over the paragraphs
        per_unit = max(1, -(-_pick(*_bounds(rules, "sentences"), n * per_unit) // max(1, n)))
    k = _sentence_words(rules, scope, 5)
    if "words" in rules:  # total words: spread over the units
        total = _pick(*_bounds(rules, "words"), n * per_unit * k)
        if structure == "sentences":
            n = max(1, min(n, total)) if "sentences" not in rules else n
        k = max(1, round(total / max(1, n * per_unit)))
        if f"words/{scope}" not in rules and "words/sentence" not in rules:
            if structure == "sentences" and _bounds(rules, "sentences")[1] is None and total > n * k:
                n = max(n, total // max(1, k))
    for key in (f"chars/{scope}", "chars"):
        if key in rules and rules[key].get("max") is not None:
            limit = rules[key]["max"] // (1 if "/" in key else max(1, n * per_unit))
            while k > 1 and k * 7 > limit:
                k -= 1
    planned = _compose(vocab, rules, structure, n, per_unit, k)
    cons = list(rules.values())
    exact = rules.get("chars", {})
    if exact.get("min") is not None and exact.get("min") == exact.get("max"):  # a length in characters
        planned = _fit_chars(planned, int(exact["min"]), vocab)
    if all(holds(c, planned) for c in cons):
        return planned
    # The plan missed (interacting bounds: characters vs words, ...): search nearby sizes.
    fixed_n = structure in rules or "sentences" in rules
    for kk in [*range(k + 1, k + 41), *range(k - 1, 0, -1)]:
        # a fixed count still tries one unit fewer: a closing (opening) phrase may be a sentence of its own
        for nn in [n, max(1, n - 1)] if fixed_n else [n, n + 1, n + 2, max(1, n - 1)]:
            text = _compose(vocab, rules, structure, nn, per_unit, kk)
            if all(holds(c, text) for c in cons):
                return text
    return planned


def _compose(
    vocab: list[str], rules: Mapping[str, dict[str, Any]], structure: str, n: int, per_unit: int, k: int
) -> str:
    target = rules.get("letters/word", {}).get("min")
    units: list[list[list[str]]] = []
    cursor = 0
    for _ in range(max(1, n)):
        sents = []
        for _ in range(max(1, per_unit)):
            words = [vocab[(cursor + j) % len(vocab)] for j in range(k)]
            if target:
                words = [(w * (target // max(1, len(w)) + 1))[: max(target, len(w))] for w in words]
            sents.append(words)
            cursor += k
        units.append(sents)
    _edit_words(units, rules)
    return _render(units, rules, structure)


def _flat(units: list[list[list[str]]]) -> list[list[str]]:
    return [s for u in units for s in u]


def _edit_words(units: list[list[list[str]]], rules: Mapping[str, dict[str, Any]]) -> None:
    sents = _flat(units)
    slot = 0

    def put(word: str) -> None:
        nonlocal slot
        s = sents[slot % len(sents)]
        s[(slot // len(sents)) % len(s)] = word
        slot += 1

    for c in rules.values():
        if c["rule"] == "include":
            for w in c["words"]:
                put(str(w))
        elif c["rule"] == "occurs":
            for _ in range(_pick(c.get("min", 1), c.get("max"), max(1, c.get("min") or 1))):
                put(str(c["text"]))
        elif c["rule"] == "letter" and c.get("min"):
            put(str(c["letter"]) * int(c["min"]))
        elif c["rule"] == "numbers" and c.get("min"):
            for i in range(int(c["min"])):
                put(str(3 + i))
        elif c["rule"] == "placeholders" and c.get("min") and not c.get("per"):
            for i in range(_pick(c.get("min"), c.get("max"), c["min"])):
                put(f"[{('name', 'date', 'place', 'item', 'city')[i % 5]}]")
        elif c["rule"] == "hashtags" and c.get("min") and not c.get("per"):
            for i in range(_pick(c.get("min"), c.get("max"), c["min"])):
                put(f"#{('news', 'today', 'life', 'fun', 'now')[i % 5]}")
        elif c["rule"] == "highlights" and c.get("min") and not c.get("per"):
            for i in range(_pick(c.get("min"), c.get("max"), c["min"])):
                s = sents[i % len(sents)]
                j = max(0, len(s) - 1 - i // len(sents))
                s[j] = f"*{s[j]}*"
        elif c["rule"] == "capital_words" and c.get("min"):
            done = 0
            for s in sents:
                for j, w in enumerate(s):
                    if done < int(c["min"]) and len(re.sub(r"[^A-Za-z]", "", w)) >= 2:
                        s[j] = w.upper()
                        done += 1


def _sentence(words: list[str], end: str) -> str:
    text = " ".join(words)
    return text[:1].upper() + text[1:] + end


def _render(units: list[list[list[str]]], rules: Mapping[str, dict[str, Any]], structure: str) -> str:
    ends = ["."] * len(_flat(units))
    for rule, mark in (("questions", "?"), ("exclamations", "!")):
        want = rules.get(rule, {}).get("min") or 0
        for i in range(min(int(want), len(ends))):
            ends[-1 - i] = mark
    end_rule = rules.get("ends_with/sentence") or rules.get("ends_with/item") or rules.get("ends_with/line")
    if end_rule and str(end_rule["text"]) in "?!.":
        ends = [str(end_rule["text"])] * len(ends)
    if "punctuation" in rules and rules["punctuation"].get("max") == 0:
        ends = [""] * len(ends)
    commas = rules.get("commas", {})
    todo = (
        _pick(commas.get("min"), commas.get("max"), commas.get("min") or 0)
        if commas and not commas.get("per")
        else 0
    )
    for s in _flat(units):
        for j in range(len(s) - 1):
            if todo > 0:
                s[j] += ","
                todo -= 1
    for rule, mark in (("semicolons", ";"), ("colons", ":")):
        want = rules.get(rule, {})
        left = (
            _pick(want.get("min"), want.get("max"), want.get("min") or 0)
            if want and not want.get("per")
            else 0
        )
        for s in _flat(units):
            if left > 0 and len(s) > 1 and not s[0].endswith((",", ";", ":")):
                s[0] += mark
                left -= 1
    i = 0
    rendered: list[str] = []
    for u in units:
        parts = []
        for s in u:
            parts.append(_sentence(s, ends[i]))
            i += 1
        rendered.append(
            ("\n" if "lines/paragraph" in rules and structure == "paragraphs" else " ").join(parts)
        )
    for scope in ("item", "line", "paragraph"):
        en = rules.get(f"ends_with/{scope}")
        if en and re.search(r"\w$", str(en["text"])):
            rendered = [f"{r.rstrip('.?!')} {en['text']}." for r in rendered]
    for scope in ("sentence", "item", "line", "paragraph"):
        st = rules.get(f"starts_with/{scope}")
        if st:
            rendered = [f"{st['text']} {r[:1].lower()}{r[1:]}" for r in rendered]
    sep = rules.get("paragraphs", {}).get("separator")
    if structure == "bullets":
        body = "\n".join(f"- {r}" for r in rendered)
    elif structure == "numbered":
        body = "\n".join(f"{j + 1}. {r}" for j, r in enumerate(rendered))
    elif structure in ("lines", "items"):
        body = "\n".join(rendered)
    elif structure == "paragraphs":
        body = (f"\n{sep}\n" if sep else "\n\n").join(rendered)
    else:
        body = " ".join(rendered)
    sections = rules.get("sections")
    if sections and not sections.get("per"):
        marker = sections.get("marker") or "Section"
        count = _pick(sections.get("min"), sections.get("max"), sections.get("min") or 1)
        suffix = sections.get("suffix") or ""
        body = "\n".join(f"{marker} {j + 1}{suffix}\n{body}" for j in range(count))
    headings = rules.get("headings")
    if headings and not headings.get("per"):
        count = _pick(headings.get("min"), headings.get("max"), headings.get("min") or 1)
        body = "\n\n".join(f"## Part {j + 1}\n{body}" for j in range(count))
    start = rules.get("starts_with")
    if start:
        body = f"{start['text']} {body}"
    end = rules.get("ends_with")
    if end:
        text = str(end["text"])
        if text in "?!.":
            body = body.rstrip(".?!") + text
        elif rules.get("words", {}).get("max") == 1 and text.isalpha():  # one word: the ending is a suffix
            body = body.rstrip(".?!").rstrip() + text.lower()
        elif re.search(r"\w$", text) and body.rstrip().endswith(
            (".", "!", "?")
        ):  # a word: before the final mark
            body = f"{body.rstrip().rstrip('.?!')} {text}."
        else:
            body = f"{body} {text}"
    if "title" in rules:
        body = f"<<A Short Title>>\n{body}"
    ps = rules.get("postscript")
    if ps:
        body = f"{body}\n\n{ps.get('text') or 'P.S.'} {_EN[0]} {_EN[1]}."
    if "lowercase" in rules:
        body = body.lower()
    if "uppercase" in rules:
        body = body.upper()
    if "title_case" in rules:
        body = " ".join(w[:1].upper() + w[1:] for w in body.split(" "))
    caps = rules.get("capitals")
    if caps and not caps.get("per"):
        body = body.lower()
        want = _pick(caps.get("min"), caps.get("max"), caps.get("min") or 1)
        chars = list(body)
        for j in [j for j, ch in enumerate(chars) if ch.isalpha()][:want]:
            chars[j] = chars[j].upper()
        body = "".join(chars)
    if "quoted" in rules:
        body = f'"{body}"'
    if "code_block" in rules:
        body = f"```\n{body}\n```"
    return body


def _count_break(c: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    lo, hi = c.get("min"), c.get("max")
    out = []
    if hi is not None:
        out.append((f"{hi + 2} (max {hi})", {"min": hi + 2, "max": hi + 2}))
    if lo is not None and lo >= 1:
        bad = max(0, lo - 2) if lo > 2 else lo - 1
        out.append((f"{bad} (min {lo})", {"min": bad, "max": bad}))
    return out


def violations(constraints: Sequence[Mapping[str, Any]], query: str = "") -> list[tuple[str, str]]:
    """(why, response) pairs, each meant to break one constraint clearly (see the module docstring)."""
    cons = canonical(constraints)
    out: list[tuple[str, str]] = []
    laid = build_layout([c for c in cons if c["rule"] not in FORM_RULES and c["rule"] != "at"]) is not None
    if is_shaped(cons) and not laid:
        out += shaped_violations(cons, query)
    good = build(cons, query)
    out += form_violations(cons, good, lambda cs: build(cs, query))
    out += layout_violations(cons, good, lambda cs: build(cs, query))
    for c in cons:
        rule, key = str(c["rule"]), _key(c)
        if rule in COUNT_RULES:
            for why, params in _count_break(c):
                over: dict[str, Any] = {key: params}
                if not c.get("per") and rule == "words":
                    over.update({k: None for k in ("words/item", "words/sentence", "words/line", "chars")})
                out.append((f"{key}: {why}", build(cons, query, overrides=over)))
        elif rule in (
            "include",
            "title",
            "postscript",
            "quoted",
            "code_block",
            "starts_with",
            "lowercase",
            "uppercase",
            "title_case",
        ):
            broken = build(cons, query, overrides={key: None})
            if rule == "lowercase":
                broken = broken[:1].upper() + broken[1:] if broken[:1].isalpha() else "Also " + broken
            elif rule == "uppercase":
                broken = broken.lower()
            elif rule == "title_case":
                broken = broken + " and more"
            out.append((f"{key}: dropped", broken))
        elif rule == "exclude":
            out.append((f"{key}: uses {c['words'][0]!r}", f"{good} {c['words'][0]}"))
        elif rule in ("occurs", "letter"):
            lo, hi = c.get("min"), c.get("max")
            bad = (hi + 2) if hi is not None else max(0, (lo or 1) - 1)
            over = {
                key: {
                    **{k: v for k, v in c.items() if k not in ("rule", "min", "max", "per")},
                    "min": bad,
                    "max": bad,
                }
            }
            out.append((f"{key}: {bad} times", build(cons, query, overrides=over)))
        elif rule == "not_starts_with":
            out.append(
                (
                    f"{key}: starts with it",
                    build(
                        cons,
                        query,
                        overrides={
                            key: None,
                            f"starts_with/{c['per']}" if c.get("per") else "starts_with": {"text": c["text"]},
                        },
                    ),
                )
            )
        elif rule == "at":
            other = "zebra" if str(c["text"]).lower() != "zebra" else "yak"
            if c["unit"] == "letter":
                other = "q" if str(c["text"]).lower() != "q" else "x"
            moved = [x for x in cons if x is not c] + [{**c, "text": other}]
            out.append((f"at: the {c['index']} {c['unit']} is not {c['text']!r}", build(moved, query)))
        elif rule == "ends_with" and c.get("per") and re.search(r"\w$", str(c["text"])):
            text = build(cons, query)
            parts = re.split(r"(\n[ \t]*\n)" if c["per"] == "paragraph" else r"(\n)", text)
            last = max(i for i in range(0, len(parts), 2))
            if last >= 2 or c["per"] != "paragraph":
                parts[last] = re.sub(r"\S+\s*$", "done.", parts[last].rstrip())
            out.append((f"{key}: other ending", "".join(parts)))
        elif rule == "ends_with" and c.get("per") in ("item", "line") and str(c["text"]) in ".?!":
            rows = build(cons, query).split("\n")
            rows[0] = rows[0].rstrip(".?!") + ("," if str(c["text"]) != "," else ";")
            out.append((f"{key}: one unit without it", "\n".join(rows)))
        elif rule == "ends_with":
            out.append(
                (
                    f"{key}: other ending",
                    build(cons, query, overrides={key: None}).rstrip("?!.")
                    + (" done." if str(c["text"]).strip().lower() != "done" else " finished."),
                )
            )
        elif rule == "json":
            out.append(("json: plain text", "Here it is: " + good))
        elif rule == "json_keys":
            try:
                obj = json.loads(good)
            except ValueError:
                continue
            keys = list(c["keys"])
            if len(keys) >= 1 and isinstance(obj, dict):
                out.append(
                    ("json_keys: a key missing", json.dumps({k: v for k, v in obj.items() if k != keys[-1]}))
                )
                for k, t in (c.get("types") or {}).items():
                    out.append(
                        (f"json_keys: {k} of the wrong type", json.dumps({**obj, k: _WRONG_TYPE.get(t, "x")}))
                    )
                    break
                if c.get("exact"):
                    out.append(("json_keys: an extra key", json.dumps({**obj, "extra": 1})))
        elif rule == "language":
            other = _OTHER_LANGUAGE.get(str(c["lang"]), "en")
            out.append((f"language: {other}", build(cons, query, overrides={"language": {"lang": other}})))
        elif rule == "one_of":
            out.append(("one_of: something else", "something else entirely"))
        elif rule == "only":
            out.append(("only: words around it", f"The answer is {good} for sure."))
    return out
