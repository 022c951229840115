"""What kind of judge a request needs and a candidate is, and the hub searches that find them.

Kinds (:data:`KINDS`):

- ``scalar_rm``: a reward model with a scalar head — Bradley–Terry/preference models of any domain;
- ``qe_regression``: a translation quality estimator or metric (COMET-like, CometKiwi-like, xCOMET-like):
  one regression score for a source and its translation;
- ``safety_classifier``: a safety or toxicity classifier (safe/unsafe, toxic/not) of a response;
- ``generative_judge``: a language model that writes a verdict (Prometheus-like judges, generative guards);
- ``other``: a model that judges no response (sentiment, NLI, NER, embeddings, a plain language model);
- ``unknown``: the pages say too little to tell.

:func:`candidate_kind` reads the kind off a model's facts (pipeline tag, library, architectures, tags,
name, card text and its training data); :func:`request_kinds` lists the kinds that can serve a request,
the most suitable first: translation quality → QE, then translation reward models; safety or toxicity →
safety classifiers, then reward models; anything else → reward models. A generative judge can serve any
request in principle, but the retriever deploys scalar heads only (it would need a served language model:
the ``judge`` tool), so it is recorded as such and set aside with that reason.

:func:`search_queries` builds the hub searches from the request: the search terms of its kinds ("qe",
"comet", "quality estimation"; "safety", "guard", "toxic"; "reward", "rm", "pref"), its domain words
("translation", "code", "math", "summar", …), its language pair ("en-de"), then "judge". The hub matches
search terms against repository ids, so terms are the short words ids are made of.
"""

from __future__ import annotations

import re
from typing import Any

from rlar.retrieval.taskfit import COVERS, candidate_domains, request_domains, request_languages

KINDS = ("scalar_rm", "qe_regression", "safety_classifier", "generative_judge", "other", "unknown")
DEPLOYABLE_KINDS = frozenset({"scalar_rm", "qe_regression", "safety_classifier", "unknown"})
LABELS = {
    "scalar_rm": "a reward model",
    "qe_regression": "a translation quality estimator",
    "safety_classifier": "a safety/toxicity classifier",
    "generative_judge": "a generative judge",
    "other": "not a judge",
    "unknown": "of unknown kind",
}

_I = re.IGNORECASE
_JUDGE = re.compile(
    r"\bjudge\w*|evaluator|grader|grading|critique|rubric|llm[- ]as[- ]a[- ]judge|feedback and (?:a|an)? ?"
    r"(?:integer )?score|safety classifier|\bguard\w*|\b(?:safe|unsafe)\b",
    _I,
)
_QE = re.compile(
    r"quality[- ]estimation|\bqe\b|\bcomet\w*|\bkiwi\b|unbabel|translation (?:evaluation|quality|metric)|"
    r"\bmt (?:metric|evaluation)|direct assessment",
    _I,
)
_REWARD = re.compile(
    r"reward|\brm\b|preferen\w*|bradley|\brlhf\b|pairwise|comparisons?\b|which of two|human would prefer|"
    r"helpsteer|ultrafeedback|hh-rlhf|\bhh\b",
    _I,
)
_SAFETY = re.compile(
    r"safety|\bunsafe\b|harmful|toxic\w*|hate speech|jailbreak|offensive|abusive|guardrail", _I
)
_OTHER = (
    ("a sentiment classifier", re.compile(r"sentiment|positive/negative|\bsst-?2\b|emotion", _I)),
    ("a natural-language-inference model", re.compile(r"\bnli\b|\bmnli\b|entailment|inference", _I)),
    ("a named-entity recogniser", re.compile(r"\bner\b|named[- ]entity", _I)),
    ("a spam/topic classifier", re.compile(r"\bspam\b|topic classif", _I)),
)


def _text(model_id: str, facts: dict[str, Any]) -> str:
    name = re.sub(r"[-_/.]+", " ", model_id)
    tags = " ".join(str(t) for t in facts.get("tags") or [] if ":" not in str(t))
    data = " ".join(str(d) for d in facts.get("datasets") or [])
    return f"{name} {model_id} {tags} {data} {facts.get('card_excerpt') or ''}"


def candidate_kind(model_id: str, facts: dict[str, Any]) -> tuple[str, str]:
    """(kind, why) of one candidate from what its pages state (see the module docstring)."""
    tag = str(facts.get("pipeline_tag") or "")
    lib = str(facts.get("library_name") or "")
    archs = [str(a) for a in facts.get("architectures") or []]
    text = _text(model_id, facts)
    generative = tag in ("text-generation", "text2text-generation") or any(
        a.endswith(("ForCausalLM", "ForConditionalGeneration")) for a in archs
    )
    if generative:
        if _JUDGE.search(text):
            return "generative_judge", f"a {tag or 'generative'} model whose card describes judging"
        return "other", f"a {tag or 'generative'} model that is not described as a judge"
    if tag in ("feature-extraction", "sentence-similarity") or lib == "sentence-transformers":
        return "other", f"an embedding model ({tag or lib})"
    if tag == "token-classification" or any(a.endswith("ForTokenClassification") for a in archs):
        return "other", "a token classifier (tags tokens; gives no score for a response)"
    if archs and all(a.endswith("Model") for a in archs):
        return "other", f"a model without a scoring head ({', '.join(archs)})"
    if _QE.search(text) or "comet" in lib:
        return "qe_regression", "its card or tags describe translation quality estimation"
    if _REWARD.search(text):
        return "scalar_rm", "its card or tags describe a reward/preference model"
    if _SAFETY.search(text):
        return "safety_classifier", "its card or tags describe safety/toxicity classification"
    for what, rx in _OTHER:
        if rx.search(text):
            return "other", what
    return "unknown", "its pages do not say what it judges"


_TOXIC_REQUEST = re.compile(r"toxic\w*|polite\w*|offensive|abusive|insult\w*|rude\w*|hate\b", _I)


def request_kinds(req: Any) -> list[str]:
    """The kinds that can serve ``req``, the most suitable first (see the module docstring)."""
    domains = request_domains(req)
    text = " ".join(str(getattr(req, k, "") or "") for k in ("description", "domain", "task_type"))
    if "translation" in domains:
        return ["qe_regression", "scalar_rm"]
    if "safety" in domains or _TOXIC_REQUEST.search(text):
        return ["safety_classifier", "scalar_rm"]
    return ["scalar_rm"]


def check_kind(needed: list[str], kind: str, why: str) -> str:
    """``pass`` when ``kind`` can serve a request needing ``needed`` (an unknown kind passes: the fit gate
    and validation decide); else the reason."""
    if kind == "unknown" or kind in needed:
        return "pass"
    if kind == "generative_judge":
        return (
            f"{LABELS[kind]} ({why}): the retriever deploys scalar heads only; a generative judge needs a "
            "served language model (the judge tool)"
        )
    wanted = " or ".join(LABELS[k] for k in needed)
    return f"{LABELS[kind]} ({why}); the task needs {wanted}"


def fit_evidence(req: Any, model_id: str, facts: dict[str, Any], kind: str) -> str:
    """Why the card alone shows that the candidate fits the request, or "" when it does not (then the
    similarity margin of the ``fit`` gate decides). Evidence: its kind is the one the request needs most
    and is not a plain reward model (a QE model for translation quality, a safety classifier for safety);
    or it is a reward model whose card describes a domain covering the request's specific domains; or the
    request is a general one (no domain but dialogue) and the reward model's card describes nothing more
    specific than dialogue and safety."""
    needed = request_kinds(req)
    if kind not in needed:
        return ""
    if kind != "scalar_rm":
        return f"{LABELS[kind]}: the kind of judge the task needs" if kind == needed[0] else ""
    stated = candidate_domains(model_id, facts)
    covered: set[str] = set().union(*(COVERS.get(d, frozenset({d})) for d in stated)) if stated else set()
    specific = [d for d in request_domains(req) if d != "dialogue"]
    if specific:
        hits = covered & set(specific)
        if hits:
            return (
                f"a reward model whose card describes {', '.join(stated)} (covers {', '.join(sorted(hits))})"
            )
        return ""
    if set(stated) <= {"dialogue", "general", "safety"}:
        what = f"its card describes {', '.join(stated)}" if stated else "its card names no narrower domain"
        return f"a general preference reward model for a general request ({what})"
    return ""


# Search terms per kind and per domain: the short words repository ids are made of.
KIND_TERMS: dict[str, tuple[str, ...]] = {
    "qe_regression": ("qe", "comet", "quality estimation"),
    "safety_classifier": ("safety", "guard", "toxic"),
    "scalar_rm": ("reward", "rm", "pref"),
}
DOMAIN_TERMS: dict[str, tuple[str, ...]] = {
    "translation": ("translation", "mt"),
    "dialogue": ("hh", "chat"),
    "code": ("code",),
    "math": ("math",),
    "summarization": ("summar",),
    "safety": (),
    "creative": ("poem", "story"),
    "factuality": ("fact",),
}


def search_queries(req: Any, limit: int) -> list[str]:
    """Hub search strings for a request, most specific first (see the module docstring)."""
    kinds = request_kinds(req)
    domains = request_domains(req)
    primary = list(KIND_TERMS[kinds[0]])
    if kinds[0] == "safety_classifier" and _TOXIC_REQUEST.search(str(getattr(req, "description", ""))):
        primary = ["toxic", *[t for t in primary if t != "toxic"]]
    qs: list[str] = []
    qs += primary
    own = str(getattr(req, "domain", "") or "").strip().lower().split()
    qs += own[:1]
    for d in domains:
        qs += DOMAIN_TERMS.get(d, ())
    langs, _ = request_languages(req)
    if len(langs) >= 2:
        qs.append(f"{langs[0]}-{langs[1]}")
    for k in kinds[1:]:
        qs += KIND_TERMS[k]
    qs += ["judge", "reward model"]
    return list(dict.fromkeys(q for q in qs if q))[:limit]


__all__ = [
    "DEPLOYABLE_KINDS",
    "KINDS",
    "LABELS",
    "candidate_kind",
    "check_kind",
    "fit_evidence",
    "request_kinds",
    "search_queries",
]
