"""HTML lists: the whole answer is one ``<ul>`` or ``<ol>`` element holding only ``<li>`` items.

Rule: ``html_list`` (``tag`` ul | ol, lowercase as named; items ``min`` / ``max``; white space between items and
nothing else). Per-item rules (words per item, a capital first, a final mark) are the composed rules on the ``item``
unit, which counts the ``<li>`` texts.

Wordings: ``an HTML unordered list``, ``a <ul> element holding exactly three <li> items``, ``an ordered HTML list
(<ol>) of 5 steps``, ``4 list items in HTML``, and what they imply: ``with nothing outside the list``, ``every step
goes in its own <li>...</li>``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rlar.constraints.checks.units import within
from rlar.constraints.family import Family
from rlar.constraints.model import Constraint
from rlar.constraints.reading import WorkingClause
from rlar.constraints.responses import per_rule, phrase, pick, rules_of, test_rule

__all__ = ["FAMILY", "HtmlList"]


@dataclass(frozen=True, kw_only=True)
class HtmlList(Constraint):
    """The whole answer is one HTML ``tag`` (ul | ol) list of ``min`` / ``max`` ``<li>`` items."""

    RULES = ("html_list",)
    tag: str | None = None
    min: int | None = None
    max: int | None = None

    def _check(self) -> None:
        if self.tag not in ("ul", "ol"):
            raise ValueError(f"rule 'html_list' needs a tag ul|ol, got {self.to_dict()!r}")

    def describe(self) -> str:
        return f"an HTML <{self.tag}> list of {self._bounds()} <li> items and nothing else"


# -- the check (embedded in verifiers) ----------------------------------------------------------------------------
def html_list_ok(c, text):
    """The whole answer is one ``<ul>`` / ``<ol>`` element (lowercase, as named) holding only ``<li>`` elements
    (white space between them), ``min``..``max`` of them."""
    tag = str(c.get("tag") or "ul")
    inner = r"(?:(?!</?(?:li|ul|ol)\b).)*"
    m = re.fullmatch(rf"<{tag}>\s*((?:<li>{inner}</li>\s*)+)</{tag}>", text.strip(), re.S)
    if m is None:
        return False
    return within(len(re.findall(r"<li>", m.group(1))), c)


def html_list_score(c, text):
    return 1.0 if html_list_ok(c, text) else 0.0


# -- reading ------------------------------------------------------------------------------------------------------
_LIST = (
    r"\b(?:format\s+the\s+answer\s+as\s+|reply\s+with\s+(?:only\s+)?"
    r"|as\s+)?an?\s+(?=[a-z ]*html)(?:html\s+)?(?:(?:un)?ordered\s+)?(?:html\s+)?list"
    r"(?:\s*\(\s*<[ou]l>\s*\))?(?:\s+of\s+(?P<n>\d+)\s+(?:steps|items|entries|points))?"
    r"|\b(?:(?P<n2>\d+)\s+)list\s+items\s+in\s+html\b"
)
_ELEMENT = r":?\s*an?\s+<[ou]l>\s+element\s+holding\s+(?:exactly\s+)?(?P<n>\d+)\s+<li>\s+items\b"
_IMPLIED = (  # what an HTML list implies: read, nothing more to check
    r",?\s*(?:with\s+)?nothing\s+(?:else\s+)?outside\s+(?:the|that)\s+list\b|\bevery\s+(?:step"
    r"|item)\s+goes\s+in\s+its\s+own\s+<li>\.*</li>"
    r"|,?\s*wrapped\s+in\s+<[ou]l>\s+and\s+</[ou]l>\s+and\s+nothing\s+else\b|\bevery\s+<li>\s+text\b"
    r"|\binside\s+the\s+tag\b"
)


def _list(cl: WorkingClause, tag: str, m: re.Match[str]) -> bool:
    n = m.group("n") or m.group("n2")
    c: dict[str, Any] = {"rule": "html_list", "tag": tag}
    if n:
        c.update({"min": int(n), "max": int(n)})
    cl.add(c)
    return True


def _counted(cl: WorkingClause, n: int, tag: str) -> bool:
    for c in cl.found:
        if c["rule"] == "html_list":
            c.update({"min": n, "max": n})
            return True
    cl.add({"rule": "html_list", "tag": tag, "min": n, "max": n})
    return True


def read(cl: WorkingClause, sentence: str, whole: str) -> None:
    if not re.search(r"<[uo]l>|\bhtml\b", whole):
        return
    tag = "ol" if re.search(r"<ol>|\bordered\s+html\s+list|\bhtml\s+ordered\s+list", whole) else "ul"
    cl.memory["html_list"] = True
    cl.each(_LIST, lambda m: _list(cl, tag, m))
    named = any(x["rule"] == "html_list" for x in cl.found)
    cl.each(_ELEMENT, lambda m: _counted(cl, int(m.group("n")), tag))
    if named or any(x["rule"] == "html_list" for x in cl.found) or re.search(r"\bhtml\s+list|<[ou]l>", whole):
        cl.each(_IMPLIED, lambda m: True)


# -- a response that holds it -------------------------------------------------------------------------------------
def _item_texts(cons: Sequence[Mapping[str, Any]], n: int) -> list[str]:
    """Item texts that keep the per-item rules (words per item, a capital first, a final mark)."""
    k = pick(per_rule(cons, "words", "item"), 2)
    end = next((str(c["text"]) for c in rules_of(cons, "ends_with") if c.get("per") == "item"), "")
    out = []
    for i in range(n):
        text = phrase(i, k)
        if test_rule(cons, "item", "starts_upper") or end or not test_rule(cons, "item", "lowercase"):
            text = text.capitalize()
        out.append(text + end)
    return out


def build(cons: Sequence[Mapping[str, Any]]) -> str | None:
    c = next((x for x in cons if x.get("rule") == "html_list"), None)
    if c is None:
        return None
    tag = str(c.get("tag") or "ul")
    items = "".join(f"<li>{t}</li>" for t in _item_texts(cons, pick(c, 3)))
    return f"<{tag}>{items}</{tag}>"


# -- near misses --------------------------------------------------------------------------------------------------
def near_misses(c: Mapping[str, Any], good: str, cons: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    other = "ol" if c.get("tag") == "ul" else "ul"
    return [
        (
            "html_list: the other tag",
            good.replace(f"<{c['tag']}>", f"<{other}>").replace(f"</{c['tag']}>", f"</{other}>"),
        ),
        ("html_list: text outside", "Here it is:\n" + good),
    ]


FAMILY = Family(
    name="html_list",
    types=(HtmlList,),
    checks={"html_list": html_list_score},
    read=read,
    build=build,
    near_misses=near_misses,
    examples=(
        "Reply with an HTML unordered list of 4 items.",
        "Format the answer as an ordered HTML list (<ol>) of 3 steps, with nothing outside the list.",
    ),
)
