"""``set_f1``: the reference is a set of items, or names of one answer, and the response says which.

The reference's shapes: DROP's ``{"spans", "types"}`` (or its ``{"number", "date", "spans"}`` answer), KP20k/Inspec
keyphrase lists (``keyphrases``, ``keywords``, ``tags``, ``labels``, ``items``: always items), WebQuestions' and
NQ-open's answer lists, CoQA's ``{"input_text", ...}``, QuAC's ``{"texts", ...}`` and SQuAD's ``{"text": [...]}``
(annotators' alternatives), TriviaQA's ``{"value", "aliases"}`` (alternatives), QAMPARI's list of answer objects
(``{"answer_text", "aliases"}``: items, each given by any of its names), Qasper's ``extractive_spans``, a
``;``-separated string or words joined by commas without spaces (bAbI's ``football,apple``) (items).

A plain list (or ``answers`` / ``answer`` holding one) is either aliases of one answer (["Paris", "Paris, France",
"City of Paris"]) or items that must all be given (["red", "yellow", "blue"]); ``list_reading`` decides:

- a pool when the query asks for fewer items than the list holds ("Name two noble gases" against six): any two
  of them are the answer; items when it asks for as many or more ("Name the three ...");
- aliases when its entries name one thing — the words of one within another's, initials, the same number in words
  and digits, all connected — or the query asks about one thing ("What is the capital of France?");
- items when there is another query (a list asked for: "What are ...", "List ..."; an instruction);
- ambiguous when there is no query: both readings are scored; where they disagree and one of them is full marks
  the tool abstains, else the items' score counts.

Scoring: against alternatives, 1 when what the response states (``answer_text.statements``: an answer statement,
the first sentence's complement, the whole response) is one of them after normalisation, or when every item it
lists is one of them; else 0 — a list with another name in it is a list of candidates. Against items, the F1 of
the response's items (``answer_text.listed_items``: a JSON list, an answer statement, bullets, numbered lines, the
list after a colon or a verb "to be", split at commas, semicolons and "and") and the reference's, after SQuAD-style
normalisation (case, punctuation, articles, whitespace; the sign of a number kept), duplicates counted once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from rlar.number_words import NUMBER_WORDS
from rlar.tools.answer_text import asked_count, asks_for_one, listed_items, statements
from rlar.tools.base import RewardTool, ToolInput, ToolKind, ToolResult, ToolSpec
from rlar.tools.rules import normalize_text

__all__ = [
    "Reading",
    "SetF1Tool",
    "alias_score",
    "decoded_reference",
    "list_reading",
    "reference_item_sets",
    "reference_reading",
    "response_items",
    "set_f1",
    "synonym_groups",
]


def _strings(value: Any) -> list[str]:
    if value is None or isinstance(value, bool):
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, int | float):
        return [str(value)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


def decoded_reference(reference: Any) -> Any:
    """A reference given as JSON text (a list or an object) decoded; anything else as it is."""
    if isinstance(reference, str) and reference.lstrip()[:1] in ("[", "{"):
        try:
            return json.loads(reference)
        except ValueError:
            return reference
    return reference


def reference_item_sets(reference: Any, query: str = "") -> list[list[str]]:
    """The reference as alternatives, each a list of items that together make the answer ([] when it has no
    items: see the module docstring). A plain list is read by :func:`list_reading` (aliases or items); a pool
    ("Name two of ...") is returned as its items."""
    return reference_reading(reference, query).alternatives


@dataclass(frozen=True)
class Reading:
    """How a reference is read: ``alternatives`` (each a list of items); ``pick`` > 0 when the answer is any
    ``pick`` of the one alternative's items (a pool); ``ambiguous`` when a plain list could be aliases of one
    answer or items that must all be given and nothing says which (both readings are scored)."""

    alternatives: list[list[str]]
    pick: int = 0
    ambiguous: bool = False
    aliases: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Each item's other names (QAMPARI's answer objects: an item given by any of its names counts as given)."""

    def canonical(self, items: Sequence[str]) -> list[str]:
        """``items`` with each one that names an item by one of its aliases replaced by the item."""
        names = {
            normalize_text(a, remove_articles=True): item
            for item, other in self.aliases
            for a in (item, *other)
        }
        return [names.get(normalize_text(i, remove_articles=True), i) for i in items]


def synonym_groups(reference: Any) -> bool:
    """``reference`` is a list of synonym lists, one per item (BioASQ's ``exact_answer``: ``[["oxytocin"],
    ["vasopressin", "ADH"]]``; a factoid is one such list), not a grid (three or more rows of one length ≥ 2)."""
    if not isinstance(reference, list | tuple) or not reference:
        return False
    if not all(
        isinstance(g, list | tuple) and g and all(isinstance(x, str) and x.strip() for x in g)
        for g in reference
    ):
        return False
    lengths = {len(g) for g in reference}
    return not (len(reference) >= 3 and len(lengths) == 1 and min(lengths) >= 2)


def reference_reading(reference: Any, query: str = "") -> Reading:
    """The reference's :class:`Reading` (module docstring); ``query`` decides a plain list's reading."""
    ref = decoded_reference(reference)
    if isinstance(ref, Mapping):
        if "spans" in ref:  # DROP
            spans = _strings(ref.get("spans"))
            if spans:
                return Reading([spans])
            number = _strings(ref.get("number"))
            if number:
                return Reading([number])
            date = ref.get("date")
            if isinstance(date, Mapping):
                parts = [str(date.get(k, "")).strip() for k in ("day", "month", "year")]
                return Reading([[" ".join(p for p in parts if p)]] if any(parts) else [])
            return Reading([])
        if "value" in ref and "aliases" in ref:  # TriviaQA: alternatives
            return Reading([[a] for a in _strings([ref["value"], *(ref.get("aliases") or [])])])
        for key in ("texts", "text"):  # QuAC, SQuAD: annotators' alternatives
            if key in ref:
                return Reading([[a] for a in _strings(ref[key])])
        if "extractive_spans" in ref:  # Qasper
            spans = _strings(ref.get("extractive_spans"))
            free = _strings(ref.get("free_form_answer"))
            return Reading([spans] if spans else ([free[:1]] if free else []))
        if "input_text" in ref:  # CoQA
            return Reading([_strings(ref["input_text"])[:1]] if _strings(ref["input_text"]) else [])
        for key in ("keyphrases", "keywords", "tags", "labels", "items"):
            if key in ref:
                items = _strings(ref[key])
                return Reading([items] if items else [])
        for key in ("answers", "answer"):
            if key in ref:
                return reference_reading(ref[key], query)
        return Reading([])
    if synonym_groups(ref):
        if len(ref) == 1:  # one answer and its synonyms: alternatives
            return Reading([[a] for a in ref[0]])
        return Reading([[g[0] for g in ref]], aliases=tuple((g[0], tuple(g[1:])) for g in ref))
    if isinstance(ref, list | tuple) and len(ref) >= 2 and all(_named_object(r) for r in ref):
        # QAMPARI: several answer objects, each an item with its own aliases — all of them are the answer.
        named = [(_strings(r[_name_key(r)])[0], tuple(_strings(r.get("aliases")))) for r in ref]
        return Reading([[n for n, _ in named]], aliases=tuple(named))
    if isinstance(ref, str):
        # Items joined by ";" or lines, or by commas without spaces (bAbI's "football,apple").
        joined = re.fullmatch(r"[^\W\d_]{2,}(?:,[^\W\d_]{2,})+", ref.strip())
        items = [p.strip() for p in re.split(r"[;\n,]" if joined else r"[;\n]", ref) if p.strip()]
        return Reading([items] if items else [])
    return list_reading(_strings(ref), query)


_NAME_KEYS = ("answer_text", "answer", "value", "text", "name")


def _name_key(obj: Mapping[str, Any]) -> str:
    return next(k for k in _NAME_KEYS if _strings(obj.get(k)))


def _named_object(obj: Any) -> bool:
    """An answer object naming one item, with its aliases ({"answer_text": "Danube", "aliases": ["Donau"]})."""
    return isinstance(obj, Mapping) and "aliases" in obj and any(_strings(obj.get(k)) for k in _NAME_KEYS)


def _linked(a: str, b: str) -> bool:
    """Two names of one thing: the words of one within the other's ("Paris" / "City of Paris"), the initials of
    one the other ("USA" / "United States of America"), or the same number in words and digits ("7" / "seven")."""
    wa, wb = (set(normalize_text(x, remove_articles=True).split()) - {"of"} for x in (a, b))
    if wa and wb and (wa <= wb or wb <= wa):
        return True
    for short, long in ((a, b), (b, a)):
        words = [w for w in re.findall(r"[A-Za-z]+", long) if w.lower() not in ("of", "the", "and", "for")]
        if len(words) >= 2 and re.sub(r"\W", "", short).lower() == "".join(w[0] for w in words).lower():
            return True
    na, nb = (normalize_text(x) for x in (a, b))
    for word, digits in ((na, nb), (nb, na)):
        if word in NUMBER_WORDS and NUMBER_WORDS[word] == _int_or_none(digits):
            return True
    return False


def _int_or_none(text: str) -> int | None:
    return int(text) if re.fullmatch(r"\d+", text) else None


def _connected(items: list[str]) -> bool:
    seen, todo = {0}, [0]
    while todo:
        i = todo.pop()
        for j in range(len(items)):
            if j not in seen and _linked(items[i], items[j]):
                seen.add(j)
                todo.append(j)
    return len(seen) == len(items)


def list_reading(items: list[str], query: str = "") -> Reading:
    """A plain list reference read as aliases of one answer or as items (module docstring): a pool when the query
    asks for fewer items than the list holds ("Name two noble gases" against six), items when it asks for as many
    or more; else aliases when its entries name one thing (:func:`_linked`, all connected) or the query asks about
    one thing; else items when there is a query (a list asked for, an instruction); ambiguous (both readings)
    when there is none."""
    if not items:
        return Reading([])
    if len(items) == 1:
        return Reading([items])
    count = asked_count(query)
    if count and count < len(items):
        return Reading([items], pick=count)
    if count:
        return Reading([items])
    if _connected(items) or asks_for_one(query):
        return Reading([[a] for a in items])
    if query.strip():
        return Reading([items])
    return Reading([items], ambiguous=True)


def response_items(response: str, many: bool) -> list[str]:
    """The items a response gives (``answer_text.listed_items``: a JSON list, an answer statement, a bulleted or
    numbered block, a list after a colon or a verb "to be"); one item (its whole answer) when not ``many``."""
    if not many:
        text = response.strip()
        return [text] if text else []
    return listed_items(response)


def _norm_items(items: Sequence[str]) -> set[str]:
    return {n for n in (normalize_text(i, remove_articles=True) for i in items) if n}


def set_f1(predicted: Sequence[str], gold: Sequence[str], pick: int = 0) -> float:
    """F1 of two item sets after normalisation (duplicates count once; empty items dropped). ``pick`` > 0: the
    answer is any ``pick`` of ``gold`` (recall over ``pick``; more than ``pick`` given costs precision)."""
    p, g = _norm_items(predicted), _norm_items(gold)
    if not p or not g:
        return 0.0
    hit = len(p & g)
    if pick:
        hit = min(hit, pick)
    if not hit:
        return 0.0
    precision, recall = hit / len(p), hit / (pick or len(g))
    return 2 * precision * recall / (precision + recall)


def alias_score(response: str, aliases: Sequence[str]) -> tuple[float, str]:
    """1.0 when what the response states (``answer_text.statements``; or every item it lists) is one of the
    aliases, else 0.0 — with the reason."""
    names = _norm_items(aliases)
    for said in statements(response):
        if normalize_text(said, remove_articles=True) in names:
            return 1.0, f"states {said[:60]!r}, one of the aliases"
    listed = _norm_items(listed_items(response))
    if len(listed) > 1 and listed <= names:
        return 1.0, "every item listed is an alias of the answer"
    if len(listed & names) and len(listed) > 1:
        return 0.0, f"lists {len(listed)} candidates, {len(listed - names)} of them not the answer"
    return 0.0, "states none of the aliases"


class SetF1Tool(RewardTool):
    """F1 between the response's items and the reference's item set (see the module docstring)."""

    default_spec: ClassVar[ToolSpec] = ToolSpec(
        name="set_f1",
        kind=ToolKind.RULE,
        description=(
            "Set F1 between the items of the response and the items of a structured reference: answer-span"
            " objects (DROP spans with their types, CoQA input_text, QuAC texts), keyphrase lists, answer"
            " lists, ';'-separated items. Items are normalised (case, punctuation, articles); the score is"
            " the F1 of the two sets, best over the reference's alternatives. A plain list is alternatives"
            " (aliases) when its entries name one thing or the query asks about one thing, else items;"
            " the response's items are read from its answer sentence, bullets, numbered lines or JSON. Use"
            " for multi-span answers, keyphrase generation and list answers."
        ),
        task_types=["multi_span_qa", "keyphrases", "list_answer", "span_extraction"],
        answer_formats=["list", "spans", "items"],
        params={},
    )

    def _read(self, reading: Reading, response: str) -> tuple[float, str, list[str]]:
        if reading.pick or (len(reading.alternatives) == 1 and len(reading.alternatives[0]) > 1):
            gold = reading.alternatives[0]
            got = set_f1(reading.canonical(listed_items(response)), gold, reading.pick)
            pick = f" (any {reading.pick})" if reading.pick else ""
            return got, f"set F1 {got:.3f}{pick}", gold
        got, why = alias_score(response, [a for alt in reading.alternatives for a in alt])
        return got, why, [a for alt in reading.alternatives for a in alt]

    async def _score(self, inp: ToolInput) -> ToolResult:
        reading = reference_reading(inp.reference, inp.query)
        if not reading.alternatives:
            return ToolResult.abstain("no reference items")
        if reading.ambiguous:
            items, why_items, gold = self._read(reading, inp.response)
            aliases, _, _ = self._read(Reading([[a] for a in reading.alternatives[0]]), inp.response)
            if abs(items - aliases) > 1e-9 and max(items, aliases) >= 1.0:
                return ToolResult.abstain(
                    "the reference list reads as aliases of one answer or as items that must all be given, and"
                    f" the two readings disagree (aliases: {aliases:g}, items: {items:.3f}); no query says which"
                )
            return self.ok(round(items, 6), why_items, reference_items=gold)
        got, why, gold = self._read(reading, inp.response)
        return self.ok(round(got, 6), why, reference_items=gold)
