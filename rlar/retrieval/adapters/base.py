"""What site adapters return: a listing item (one search result) and the facts of one model page.

Adapters isolate page structure: the pipeline never touches HTML. Each adapter gives URLs, a JavaScript
extraction function that runs inside the page (a function expression, evaluated by Playwright), and a
pure Python parser of what that function returned, so parsers are testable on saved extractions.

Every fact records where it came from (``props``: the JSON a page embeds; ``dom``: visible markup;
``listing``: a result page) and every field a model page did not state is listed in ``missing``.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field
from typing import Any

# Fields a model page should state for the pipeline to decide without guessing.
EXPECTED_FIELDS: tuple[str, ...] = (
    "pipeline_tag",
    "library_name",
    "license",
    "parameters",
    "downloads",
    "likes",
    "last_modified",
    "architectures",
)


@dataclass(slots=True)
class ListingItem:
    """One model in a search result page."""

    model_id: str
    downloads: int | None = None
    likes: int | None = None
    pipeline_tag: str | None = None
    parameters: int | None = None
    last_modified: str | None = None
    gated: bool | str | None = None
    source: str = "props"  # props | dom

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(slots=True)
class ModelFacts:
    """What one model page states. ``None`` = not stated (the field is then in ``missing``)."""

    model_id: str
    url: str
    pipeline_tag: str | None = None
    library_name: str | None = None
    license: str | None = None
    base_model: list[str] = field(default_factory=list)
    parameters: int | None = None
    dtype_params: dict[str, int] = field(default_factory=dict)
    downloads: int | None = None
    likes: int | None = None
    last_modified: str | None = None
    architectures: list[str] = field(default_factory=list)
    model_type: str | None = None
    tags: list[str] = field(default_factory=list)
    languages: list[str] = field(default_factory=list)  # the card's ``language`` metadata, as written
    datasets: list[str] = field(default_factory=list)  # the card's ``datasets`` metadata (training data)
    gated: bool | str | None = None
    card_excerpt: str = ""
    benchmark_scores: dict[str, float] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # page-shape surprises, recorded

    def set(self, name: str, value: Any, source: str) -> None:
        """Set a field unless already stated by an earlier (preferred) source."""
        if value is None or value == "" or value == [] or value == {}:
            return
        current = getattr(self, name)
        if current not in (None, "", [], {}):
            return
        setattr(self, name, value)
        self.sources[name] = source

    def finish(self) -> ModelFacts:
        self.missing = [f for f in EXPECTED_FIELDS if getattr(self, f) in (None, "", [], {})]
        return self

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d.pop("sources")
        d.pop("missing")
        d.pop("problems")
        return d


# -- parsing helpers shared by adapters ------------------------------------------------------------
_NUM = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?|[-+]?\.\d+")
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([kKmMbBtT])\b")
_SUFFIX = {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}


def parse_number(text: Any) -> float | None:
    """First number in ``text`` ("1,234" → 1234.0, "85.2%" → 85.2); None when there is none."""
    if isinstance(text, bool):
        return None
    if isinstance(text, int | float):
        return float(text) if math.isfinite(float(text)) else None
    if not isinstance(text, str):
        return None
    m = _NUM.search(text)
    if not m:
        return None
    try:
        return float(m.group(0).replace(",", ""))
    except ValueError:
        return None


def parse_count(text: Any) -> int | None:
    """A count with an optional k/M/B/T suffix ("7.5B" → 7_500_000_000, "12.3k" → 12_300)."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        return int(text)
    if not isinstance(text, str):
        return None
    m = _SIZE.search(text)
    if m:
        return int(float(m.group(1)) * _SUFFIX[m.group(2).lower()])
    n = parse_number(text)
    return int(n) if n is not None else None


_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*/[A-Za-z0-9][\w.\-]*$")


def looks_like_model_id(text: str) -> bool:
    return bool(_ID.match(text.strip()))


# -- benchmark scores written in prose on a model card ------------------------------------------------
_VAL = r"(?<![\w.])(?P<value>\d{1,3}(?:\.\d+)?|0?\.\d+)\s*(?P<pct>%|percent\b)?"
_BENCH = (
    r"(?P<name>(?:the\s+)?[\w][\w\-\.+]*(?:[ \t]+"
    r"(?!(?:and|with|while|which|but|for|when|after|using|by|at|is|was|of|to|than|compared)\b)"
    r"[\w\(\)][\w\-\.+\)]*){0,4})"
)
_METRIC = (
    r"(?:(?:overall|average|mean|total|final)\s+)?(?:accuracy|acc\.?|score|agreement|win[- ]rate|pass@1|f1)"
)
_VERB = (
    r"(?:reach(?:es|ed)?|achiev(?:es|ed)|scor(?:es|ed)|obtain(?:s|ed)|gets?|got|attains?|hits?|has|yields?)"
)
_PROSE = [
    # "89.6% accuracy on held-out EN-DE pairs", "scores 92.1 on RewardBench", "88% on RM-Bench"
    re.compile(
        rf"(?:(?P<verb>{_VERB})\s+(?:an?\s+)?)?{_VAL}(?:\s+(?P<metric>{_METRIC}))?\s+(?:on|in|for)\s+{_BENCH}",
        re.I,
    ),
    # "an accuracy of 0.91 on our test set", "an overall score of 88.2 on RewardBench"
    re.compile(rf"{_METRIC}\s+of\s+{_VAL}\s+(?:on|in|for)\s+{_BENCH}", re.I),
    # "RewardBench score: 85.4", "Accuracy on HelpSteer2: 74%", "RewardBench (overall) = 91.3"
    re.compile(rf"(?:{_METRIC}\s+(?:on|in)\s+)?{_BENCH}(?:\s+{_METRIC})?\s*[:=]\s*{_VAL}", re.I),
    # "On RewardBench, the model reaches 87.1"
    re.compile(
        rf"\b(?:on|in)\s+{_BENCH},\s+(?:the\s+model|it|we|this\s+model)\s+{_VERB}\s+(?:an?\s+)?"
        rf"(?:{_METRIC}\s+)?(?:of\s+)?{_VAL}",
        re.I,
    ),
]
_NOT_A_SCORE = re.compile(
    r"^\s*(?:[kKmMbBtT]\b|billion|million|thousand|params|parameters|steps|epochs|"
    r"samples|examples|pairs|tokens|layers|gb|mb|languages|hours|days|x\b)",
    re.I,
)
_NAME_STOP = re.compile(r"^(?:the|a|an|our|its|their|this|these)\s+", re.I)


def scores_in_prose(text: str) -> dict[str, float]:
    """Benchmark scores a model card states in sentences ("reaches 89.6% accuracy on RewardBench",
    "RewardBench score: 85.4"); name → value as written (a value ≤ 1 with a decimal point is a share).
    Numbers that are sizes or counts (7B, 300 steps, 20 languages) and years are not scores."""
    out: dict[str, float] = {}
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", text or ""):
        for rx in _PROSE:
            for m in rx.finditer(sentence):
                raw = m.group("value")
                tail = sentence[m.end("value") :] if not m.group("pct") else ""
                if _NOT_A_SCORE.match(tail):
                    continue
                value = float(raw)
                if not 0.0 <= value <= 100.0 or (value.is_integer() and 1900 <= value <= 2100):
                    continue
                groups = m.groupdict()
                said = re.search(rf"{_METRIC}|{_VERB}", sentence[: m.start("value")], re.I)
                if "verb" in groups and not (groups["verb"] or groups["metric"] or groups["pct"] or said):
                    continue  # "version 2 on the hub": a number before "on X" is a score only when said so
                name = re.sub(r"\s*\(.*$", "", m.group("name").strip(" .,:;"))
                name = re.sub(rf"\s+{_METRIC}$", "", _NAME_STOP.sub("", name), flags=re.I).strip()
                if not name or name.lower() in ("it", "we", "average", "overall", "score", "accuracy"):
                    continue
                if re.fullmatch(r"[\d.%\s]+", name):
                    continue
                out.setdefault(name, value)
    return out
