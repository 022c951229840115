"""Probe cases for validating a candidate verifier: known-good and known-bad responses, labelled by construction.

Probes are made by our code, never by the candidate's author, so a candidate cannot pass by agreeing with
itself. One group per example of the task (at most ``max_examples``; the task description stands in for a
query when there is none):

- reference-based tasks (the examples have references): good = the reference itself (and any good response
  an example supplies); bad = a blank response, "I don't know.", another example's reference, and corruptions
  of the reference by its shape — a different number for numeric answers; for text, the first half of the
  words, the words in reverse order, and the characters reversed for single words.
- constraint tasks (no reference; constraints from the description and the records' ``format_rules``): good
  = a response built to satisfy every constraint with margins (``satisfy``: e.g. three bullets of five words
  for "exactly three bullets, each under ten words"); bad = a blank response and, per constraint, a response
  built to break that one constraint clearly (two or five bullets; an item of 13 words; a missing required
  word; capitals where lowercase is required…).

``holds(constraint, text)`` is an independent, host-side oracle for the constraint vocabulary: every good
probe must satisfy every constraint and every constraint-breaking probe must break its own constraint, else
the probe is dropped (and a task whose good probe cannot be built fails with a reason). Bounds get margins
(bad counts are two past the limit; good item lengths stay one inside) so verifiers that read "under ten"
as ≤ 10 still separate good from bad.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rlar.tasks.constraints import canonical, from_metadata

__all__ = ["Probe", "ProbeSet", "holds", "make_probes", "satisfy"]

_FILLER = (
    "river stone quiet green morning light garden simple steady careful bright water path open calm clear "
    "gentle window orange winter summer little yellow forest table paper letter ocean valley friendly happy "
    "silver cotton maple meadow candle"
).split()
_STOP = set(
    "the a an and or of to in on for with what which who whom how why when where is are was were be been this "
    "that these those your you yours give list write answer must should each under over about into from as by "
    "it its their them they not no any all only exactly least most more than less three two four five".split()
)


@dataclass(slots=True)
class Probe:
    """One probe case. ``group`` ties probes of the same query/reference; ``why`` says how it was built."""

    query: str
    response: str
    reference: Any
    metadata: dict[str, Any]
    label: str  # good | bad
    why: str
    group: int

    def case(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "response": self.response,
            "reference": self.reference,
            "metadata": self.metadata,
        }

    def to_dict(self) -> dict[str, Any]:
        return {**self.case(), "label": self.label, "why": self.why, "group": self.group}


@dataclass(slots=True)
class ProbeSet:
    probes: list[Probe] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def good(self) -> list[Probe]:
        return [p for p in self.probes if p.label == "good"]

    @property
    def bad(self) -> list[Probe]:
        return [p for p in self.probes if p.label == "bad"]

    @property
    def usable(self) -> bool:
        """At least one group has both a good and a bad probe."""
        return any(
            any(p.label == "good" for p in self.probes if p.group == g)
            and any(p.label == "bad" for p in self.probes if p.group == g)
            for g in {p.group for p in self.probes}
        )


# -- the host-side oracle -------------------------------------------------------------------------------------
_BULLET = re.compile(r"^[ \t]*[-*\u2022][ \t]+(\S.*)$", re.M)
_NUMBERED = re.compile(r"^[ \t]*\d{1,3}[.)][ \t]+(\S.*)$", re.M)


def _items(text: str) -> list[str]:
    return _BULLET.findall(text) or _NUMBERED.findall(text) or [ln for ln in text.splitlines() if ln.strip()]


def _count(rule: str, text: str) -> int:
    if rule == "bullets":
        return len(_BULLET.findall(text))
    if rule == "numbered":
        return len(_NUMBERED.findall(text))
    if rule == "lines":
        return len([ln for ln in text.splitlines() if ln.strip()])
    if rule == "sentences":
        return len([p for p in re.split(r"(?<=[.!?])\s+", text.strip()) if re.search(r"\w", p)])
    if rule == "paragraphs":
        return len([p for p in re.split(r"\n[ \t]*\n", text.strip()) if p.strip()])
    if rule == "words":
        return len(text.split())
    if rule == "chars":
        return len(text.strip())
    raise ValueError(rule)


def _in(n: int, c: Mapping[str, Any]) -> bool:
    return (c.get("min") is None or n >= c["min"]) and (c.get("max") is None or n <= c["max"])


def _has_word(text: str, word: str) -> bool:
    return re.search(r"(?<!\w)" + re.escape(word.lower()) + r"(?!\w)", text.lower()) is not None


def holds(c: Mapping[str, Any], text: str) -> bool:
    """Whether ``text`` satisfies constraint ``c`` (the oracle probes are labelled by)."""
    rule = c["rule"]
    if rule in ("bullets", "numbered", "lines", "sentences", "paragraphs", "words", "chars"):
        return _in(_count(rule, text), c)
    if rule == "item_words":
        items = _items(text)
        return bool(items) and all(_in(len(it.split()), c) for it in items)
    if rule == "include":
        return all(_has_word(text, w) for w in c["words"])
    if rule == "exclude":
        return not any(_has_word(text, w) for w in c["words"])
    if rule == "lowercase":
        return bool(re.search(r"[^\W\d_]", text)) and text == text.lower()
    if rule == "uppercase":
        return bool(re.search(r"[^\W\d_]", text)) and text == text.upper()
    if rule == "no_commas":
        return "," not in text
    if rule == "starts_with":
        return text.strip().lower().startswith(str(c["text"]).lower())
    if rule == "ends_with":
        return text.strip().lower().endswith(str(c["text"]).lower())
    if rule == "json_keys":
        try:
            obj = json.loads(text.strip())
        except ValueError:
            return False
        return isinstance(obj, dict) and all(k in obj for k in c["keys"])
    raise ValueError(f"unknown rule {rule!r}")


# -- building responses ---------------------------------------------------------------------------------------
def _pick(lo: int | None, hi: int | None, default: int) -> int:
    """A count inside [lo, hi], one step inside each bound when the range allows it."""
    lo_, hi_ = lo if lo is not None else 0, hi if hi is not None else max(default, (lo or 0) + 2)
    if hi_ < lo_:
        return lo_
    want = min(max(default, lo_), hi_)
    if hi_ - lo_ >= 2:
        want = min(max(want, lo_ + 1), hi_ - 1)
    return want


def _vocab(query: str, banned: set[str]) -> list[str]:
    topic = [w.lower() for w in re.findall(r"[A-Za-z]{4,}", query) if w.lower() not in _STOP]
    seen: list[str] = []
    for w in [*topic, *_FILLER]:
        if w not in seen and w not in banned:
            seen.append(w)
    return seen


def satisfy(
    constraints: Sequence[Mapping[str, Any]], query: str = "", *, overrides: Mapping[str, Any] | None = None
) -> str:
    """A response meant to satisfy ``constraints`` (check with ``holds``). ``overrides`` replaces one rule's
    parameters (used to break exactly one constraint)."""
    rules: dict[str, dict[str, Any]] = {str(c["rule"]): dict(c) for c in constraints}
    for rule, params in (overrides or {}).items():
        if params is None:
            rules.pop(rule, None)
        else:
            rules[rule] = {"rule": rule, **params}
    banned = {w.lower() for w in rules.get("exclude", {}).get("words", [])}
    vocab = _vocab(query, banned)
    required = [str(w) for w in rules.get("include", {}).get("words", [])]
    if "json_keys" in rules:
        obj = {
            k: (required[i] if i < len(required) else vocab[i % len(vocab)])
            for i, k in enumerate(rules["json_keys"]["keys"])
        }
        return json.dumps(obj)
    structure, n = "sentences", 2
    for rule in ("bullets", "numbered", "lines", "paragraphs", "sentences"):
        if rule in rules:
            c = rules[rule]
            structure, n = rule, _pick(c.get("min"), c.get("max"), 3 if rule != "sentences" else 2)
            break
    iw = rules.get("item_words", {})
    k = _pick(iw.get("min", 1), iw.get("max"), 6)
    if "words" in rules:
        lo, hi = rules["words"].get("min"), rules["words"].get("max")
        total = _pick(lo, hi, n * k)
        # Spread the total over n units, keeping each unit's length inside the item bounds when possible.
        k = max(1, round(total / max(1, n)))
        if structure in ("sentences", "lines", "paragraphs") and not iw:
            if hi is not None and n * k > hi:
                n = max(1, hi // max(1, k))
            while lo is not None and n * k < lo:
                n += 1
    if "chars" in rules and rules["chars"].get("max") is not None:
        while k > 1 and n * k * 8 > rules["chars"]["max"]:
            k -= 1
    units: list[list[str]] = []
    cursor = 0
    for _ in range(max(1, n) if structure != "none" else 1):
        words = [vocab[(cursor + j) % len(vocab)] for j in range(max(1, k))]
        cursor += k
        units.append(words)
    if structure in ("bullets", "numbered") and n == 0:
        units = [[vocab[j % len(vocab)] for j in range(max(1, k))]]
    # Required words replace filler at the start of the first units, one per unit slot.
    slot = 0
    for w in required:
        unit = units[slot % len(units)]
        pos = (slot // len(units)) % len(unit)
        unit[pos] = w
        slot += 1
    lower = "lowercase" in rules
    upper = "uppercase" in rules
    rendered: list[str] = []
    for words in units:
        text = " ".join(words)
        if not lower and not upper:
            text = text[:1].upper() + text[1:]
        rendered.append(text)
    end = str(rules.get("ends_with", {}).get("text", ""))
    start = str(rules.get("starts_with", {}).get("text", ""))
    if structure == "bullets" and n > 0:
        body = "\n".join(f"- {t}" for t in rendered)
    elif structure == "numbered" and n > 0:
        body = "\n".join(f"{i + 1}. {t}" for i, t in enumerate(rendered))
    elif structure == "lines":
        body = "\n".join(rendered)
    elif structure == "paragraphs":
        body = "\n\n".join(t + "." for t in rendered)
    else:
        body = " ".join(t + "." for t in rendered)
    if end:
        body = body.rstrip(".") + (end if end in "?!." else " " + end)
    if start:
        body = f"{start} {body}" if structure in ("sentences", "paragraphs") else f"{start}\n{body}"
    if lower:
        body = body.lower()
    if upper:
        body = body.upper()
    return body


def _violations(cons: list[dict[str, Any]], query: str) -> list[tuple[str, str]]:
    """(why, response) pairs, each meant to break one constraint clearly."""
    out: list[tuple[str, str]] = []
    for c in cons:
        rule = c["rule"]
        lo, hi = c.get("min"), c.get("max")
        if rule in ("bullets", "numbered", "lines", "paragraphs", "sentences"):
            if hi is not None:
                out.append(
                    (
                        f"{rule}: {hi + 2} instead of at most {hi}",
                        satisfy(cons, query, overrides={rule: {"min": hi + 2, "max": hi + 2}}),
                    )
                )
            if lo is not None and lo >= 2:
                n_bad = max(1, lo - 2) if lo > 2 else lo - 1
                out.append(
                    (
                        f"{rule}: {n_bad} instead of at least {lo}",
                        satisfy(cons, query, overrides={rule: {"min": n_bad, "max": n_bad}}),
                    )
                )
            elif lo == 1 and rule in ("bullets", "numbered"):
                out.append(
                    (
                        f"{rule}: none",
                        satisfy(cons, query, overrides={rule: None, "sentences": {"min": 2, "max": 2}}),
                    )
                )
        elif rule == "item_words":
            if hi is not None:
                good = satisfy(cons, query)
                items = _items(good)
                if items:
                    long_item = items[0] + " " + " ".join(_FILLER[: hi + 4 - len(items[0].split())])
                    out.append(
                        (
                            f"item_words: one item of {len(long_item.split())} words (max {hi})",
                            good.replace(items[0], long_item, 1),
                        )
                    )
            if lo is not None and lo >= 3:
                out.append(
                    (
                        f"item_words: items of 1 word (min {lo})",
                        satisfy(cons, query, overrides={rule: {"min": 1, "max": 1}}),
                    )
                )
        elif rule == "words":
            if hi is not None:
                n_words = hi + max(5, hi // 5)
                over = {"words": {"min": n_words, "max": n_words}, "item_words": None}
                out.append((f"words: {n_words} (max {hi})", satisfy(cons, query, overrides=over)))
            if lo is not None and lo >= 4:
                n_words = max(1, lo // 2)
                out.append(
                    (
                        f"words: {n_words} (min {lo})",
                        satisfy(cons, query, overrides={"words": {"min": n_words, "max": n_words}}),
                    )
                )
        elif rule == "chars":
            if hi is not None:
                # Filler words are 4-7 letters: hi // 3 words is well past hi characters.
                n_words = hi // 3 + 5
                over = {"chars": None, "words": {"min": n_words, "max": n_words}, "item_words": None}
                out.append((f"chars: about {n_words * 6} (max {hi})", satisfy(cons, query, overrides=over)))
            if lo is not None and lo >= 20:
                over = {"chars": None, "words": {"min": 1, "max": 1}}
                out.append((f"chars: one word (min {lo})", satisfy(cons, query, overrides=over)))
        elif rule == "include":
            out.append(("include: required words missing", satisfy(cons, query, overrides={"include": None})))
        elif rule == "exclude":
            good = satisfy(cons, query)
            out.append(
                (
                    f"exclude: uses {c['words'][0]!r}",
                    good.replace(".", f" {c['words'][0]}.", 1) if "." in good else f"{good} {c['words'][0]}",
                )
            )
        elif rule == "lowercase":
            out.append(
                (
                    "lowercase: has capitals",
                    satisfy(cons, query, overrides={"lowercase": None}).replace(" ", " Also ", 1),
                )
            )
        elif rule == "uppercase":
            out.append(
                (
                    "uppercase: has lower-case letters",
                    satisfy(cons, query, overrides={"uppercase": None}).lower(),
                )
            )
        elif rule == "no_commas":
            out.append(("no_commas: has commas", satisfy(cons, query).replace(" ", ", ", 2)))
        elif rule == "starts_with":
            out.append(
                ("starts_with: missing opening", satisfy(cons, query, overrides={"starts_with": None}))
            )
        elif rule == "ends_with":
            good = satisfy(cons, query, overrides={"ends_with": None})
            out.append(("ends_with: missing ending", good.rstrip("?!.") + " Done."))
        elif rule == "json_keys":
            keys = list(c["keys"])
            out.append(("json_keys: not JSON", " ".join(f"{k}: value" for k in keys)))
            if len(keys) > 1:
                out.append(("json_keys: a key missing", json.dumps({k: "value" for k in keys[1:]})))
    return out


# -- reference corruptions ------------------------------------------------------------------------------------
_NUM = re.compile(r"-?\d+(?:\.\d+)?")


def _ref_text(reference: Any) -> str | None:
    if reference is None:
        return None
    if isinstance(reference, Mapping):
        for key in ("answers", "answer"):
            if key in reference:
                return _ref_text(reference[key])
        return None
    if isinstance(reference, list | tuple):
        return _ref_text(reference[0]) if reference else None
    text = str(reference)
    if "####" in text:
        text = text.rsplit("####", 1)[1]
    return text.strip() or None


def _corruptions(ref: str, others: list[str]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = [("blank", ""), ("refusal", "I don't know.")]
    numbers = _NUM.findall(ref)
    if numbers and len(ref.split()) <= 3:
        value = float(numbers[-1])
        wrong = value + 1 if value == int(value) else value * 1.5 + 1
        out.append(
            (
                "wrong number",
                ref.replace(numbers[-1], f"{int(wrong)}" if wrong == int(wrong) else f"{wrong:g}"),
            )
        )
        out.append(("another wrong number", ref.replace(numbers[-1], f"{int(value * 3 + 7)}")))
    else:
        words = ref.split()
        if len(words) >= 4:
            out.append(("first half only", " ".join(words[: len(words) // 2])))
            out.append(("words reversed", " ".join(reversed(words))))
        elif len(ref) >= 3 and ref[::-1] != ref:
            out.append(("characters reversed", ref[::-1]))
    for other in others:
        if other.strip().lower() != ref.strip().lower():
            out.append(("another example's reference", other))
            break
    return out


def make_probes(
    examples: Sequence[Mapping[str, Any]],
    constraints: Sequence[Mapping[str, Any]],
    *,
    description: str = "",
    reference_based: bool,
    max_examples: int = 4,
) -> ProbeSet:
    """Probes for a task; see the module docstring. ``examples``: ``{query, reference, metadata, response?}``."""
    chosen = list(examples)[:max_examples] or [{"query": description, "reference": None, "metadata": {}}]
    refs = [r for r in (_ref_text(e.get("reference")) for e in chosen) if r]
    out = ProbeSet()
    for g, ex in enumerate(chosen):
        query = str(ex.get("query") or description)
        reference = ex.get("reference")
        meta = dict(ex.get("metadata") or {})
        if reference_based:
            ref = _ref_text(reference)
            if ref is None:
                out.problems.append(f"example {g}: no usable reference")
                continue
            out.probes.append(Probe(query, ref, reference, meta, "good", "the reference", g))
            if isinstance(ex.get("response"), str) and ex["response"].strip():
                out.probes.append(
                    Probe(query, ex["response"], reference, meta, "good", "example's good response", g)
                )
            for why, text in _corruptions(ref, [r for r in refs if r != ref]):
                out.probes.append(Probe(query, text, reference, meta, "bad", why, g))
            continue
        cons = canonical([*constraints, *from_metadata(meta)])
        if not cons:
            out.problems.append(f"example {g}: no reference and no checkable constraint")
            continue
        good = satisfy(cons, query)
        broken = [c["rule"] for c in cons if not holds(c, good)]
        if broken:
            out.problems.append(f"example {g}: could not build a response satisfying {broken} together")
            continue
        out.probes.append(Probe(query, good, reference, meta, "good", "built to satisfy every constraint", g))
        out.probes.append(Probe(query, "", reference, meta, "bad", "blank", g))
        for why, text in _violations(cons, query):
            target = next(c for c in cons if why.startswith(c["rule"]))
            if not holds(target, text):
                out.probes.append(Probe(query, text, reference, meta, "bad", why, g))
    return out
