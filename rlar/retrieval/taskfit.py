"""The task-fit gate: does a candidate reward model read the task's language and judge the task's domain?

Three checks, each "pass" or the reason it failed, recorded per candidate (``Candidate.filters``):

- ``language``: the languages the task needs (the request's ``language``; else the ones its description
  names as the language of the text: "German translation", "in Klingon", "English→German") against the
  languages the model's card states (its ``language`` metadata and ISO-code tags; else language names in
  the card text). A model that states languages and lacks one the task needs is refused; ``multilingual``
  counts as covering any language (validation on the task's probes is then the judge); a model that
  states none passes with that noted.
- ``domain``: the task's domains (its ``domain``, ``task_type`` and description) against those the card
  describes (tags, name, card text), over the vocabulary in :data:`DOMAINS`. A card that describes
  domains, none of which covers the task's, is refused. Dialogue (chat, helpfulness) reward models are
  general instruction-following judges: they cover instruction following, creative writing, summaries,
  factual QA and safety, not translation, code or math. "general-purpose" covers everything. Either side
  stating no domain passes.
- ``fit``: the card's similarity to the request, beyond that of a card saying only "a reward model", must
  reach ``RankingConfig.min_fit`` (computed in :mod:`rlar.retrieval.ranking`, which has the embeddings).

Language names and ISO 639-1/639-3 codes: :data:`LANGUAGES` (about 80 languages, Klingon included).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

# ISO 639-1 code (639-3 where there is none) → other codes and English/native names (lower case).
LANGUAGES: dict[str, tuple[str, ...]] = {
    "af": ("afr", "afrikaans"),
    "am": ("amh", "amharic"),
    "ar": ("ara", "arabic", "العربية"),
    "az": ("aze", "azerbaijani"),
    "be": ("bel", "belarusian"),
    "bg": ("bul", "bulgarian"),
    "bn": ("ben", "bengali", "bangla"),
    "bs": ("bos", "bosnian"),
    "ca": ("cat", "catalan"),
    "cs": ("ces", "cze", "czech", "čeština"),
    "cy": ("cym", "wel", "welsh"),
    "da": ("dan", "danish", "dansk"),
    "de": ("deu", "ger", "german", "deutsch"),
    "el": ("ell", "gre", "greek"),
    "en": ("eng", "english"),
    "eo": ("epo", "esperanto"),
    "es": ("spa", "spanish", "español", "castilian"),
    "et": ("est", "estonian"),
    "eu": ("eus", "baq", "basque"),
    "fa": ("fas", "per", "persian", "farsi"),
    "fi": ("fin", "finnish", "suomi"),
    "fil": ("tl", "tgl", "filipino", "tagalog"),
    "fr": ("fra", "fre", "french", "français"),
    "ga": ("gle", "irish"),
    "gl": ("glg", "galician"),
    "gu": ("guj", "gujarati"),
    "ha": ("hau", "hausa"),
    "he": ("heb", "iw", "hebrew"),
    "hi": ("hin", "hindi"),
    "hr": ("hrv", "croatian"),
    "hu": ("hun", "hungarian", "magyar"),
    "hy": ("hye", "arm", "armenian"),
    "id": ("ind", "indonesian", "bahasa indonesia"),
    "ig": ("ibo", "igbo"),
    "is": ("isl", "ice", "icelandic"),
    "it": ("ita", "italian", "italiano"),
    "ja": ("jpn", "japanese", "日本語"),
    "jv": ("jav", "javanese"),
    "ka": ("kat", "geo", "georgian"),
    "kk": ("kaz", "kazakh"),
    "km": ("khm", "khmer"),
    "kn": ("kan", "kannada"),
    "ko": ("kor", "korean", "한국어"),
    "ku": ("kur", "kurdish"),
    "ky": ("kir", "kyrgyz"),
    "la": ("lat", "latin"),
    "lo": ("lao", "lao"),
    "lt": ("lit", "lithuanian"),
    "lv": ("lav", "latvian"),
    "mk": ("mkd", "mac", "macedonian"),
    "ml": ("mal", "malayalam"),
    "mn": ("mon", "mongolian"),
    "mr": ("mar", "marathi"),
    "ms": ("msa", "may", "malay"),
    "mt": ("mlt", "maltese"),
    "my": ("mya", "bur", "burmese"),
    "ne": ("nep", "nepali"),
    "nl": ("nld", "dut", "dutch", "nederlands", "flemish"),
    "no": ("nor", "nb", "nob", "nn", "nno", "norwegian", "bokmål", "nynorsk"),
    "pa": ("pan", "punjabi"),
    "pl": ("pol", "polish", "polski"),
    "ps": ("pus", "pashto"),
    "pt": ("por", "portuguese", "português"),
    "ro": ("ron", "rum", "romanian"),
    "ru": ("rus", "russian", "русский"),
    "si": ("sin", "sinhala"),
    "sk": ("slk", "slo", "slovak"),
    "sl": ("slv", "slovenian", "slovene"),
    "so": ("som", "somali"),
    "sq": ("sqi", "alb", "albanian"),
    "sr": ("srp", "serbian"),
    "sv": ("swe", "swedish", "svenska"),
    "sw": ("swa", "swahili", "kiswahili"),
    "ta": ("tam", "tamil"),
    "te": ("tel", "telugu"),
    "th": ("tha", "thai"),
    "tlh": ("klingon", "tlhingan hol"),
    "tr": ("tur", "turkish", "türkçe"),
    "uk": ("ukr", "ukrainian"),
    "ur": ("urd", "urdu"),
    "uz": ("uzb", "uzbek"),
    "vi": ("vie", "vietnamese"),
    "xh": ("xho", "xhosa"),
    "yi": ("yid", "yiddish"),
    "yo": ("yor", "yoruba"),
    "zh": ("zho", "chi", "cmn", "chinese", "mandarin", "中文"),
    "zu": ("zul", "zulu"),
}
MULTILINGUAL = "multilingual"

_ALIAS: dict[str, str] = {}
for _code, _names in LANGUAGES.items():
    _ALIAS[_code] = _code
    for _n in _names:
        _ALIAS.setdefault(_n, _code)
_NAMES = sorted((n for n in _ALIAS if len(n) > 3 or not n.isascii()), key=len, reverse=True)
_NAME_RE = "|".join(re.escape(n) for n in _NAMES)
# A language name counts in free text only where it names the language of a text: before a noun such as
# "translation", after "in"/"into"/"from"/"to", or in a pair "English→German" / "English-to-German".
_TEXT_NOUNS = (
    r"translations?|texts?|sentences?|poems?|poetry|verses?|meter|metre|prose|speech|output|answers?|"
    r"responses?|repl(?:y|ies)|grammar|spelling|writing|summar(?:y|ies)|dialogues?|chat|language|words?|"
    r"haikus?|sonnets?|songs?|lyrics|source|target|conversations?|queries|questions|prompts?|documents?"
)
_IN_TEXT = re.compile(
    rf"(?:\b(?:in|into|from|to)\s+(?P<a>{_NAME_RE})\b)"
    rf"|(?:\b(?P<b>{_NAME_RE})(?:\s*(?:→|->|-to-|\s+to\s+|-|–|/)\s*(?P<c>{_NAME_RE}))?[\s-]+(?:{_TEXT_NOUNS})\b)"
    rf"|(?:\b(?P<d>{_NAME_RE})\s*(?:→|->|-to-|\s+to\s+)\s*(?P<e>{_NAME_RE})\b)",
    re.IGNORECASE,
)
_CODE_PAIR = re.compile(r"([a-z]{2,3})[-_–]([a-z]{2,3})", re.IGNORECASE)


def normalize_language(text: str) -> str | None:
    """ "German", "de", "deu", "de-DE", "Deutsch" → "de"; "Klingon", "tlh" → "tlh"; "multilingual" →
    "multilingual"; unknown → None."""
    t = text.strip().lower().replace("_", "-")
    if not t:
        return None
    if t in (MULTILINGUAL, "multi-lingual", "many languages"):
        return MULTILINGUAL
    if t in _ALIAS:
        return _ALIAS[t]
    base = t.split("-", 1)[0]
    return _ALIAS.get(base) if len(base) in (2, 3) else None


def parse_languages(value: Any) -> list[str]:
    """A language field as requests and cards give it: one name or code, a list, "en,de", "en→de",
    "English to German", "en-de" (a pair; "de-DE", with an upper-case region, is German). Unknown items
    are dropped."""
    items: Iterable[Any] = value if isinstance(value, list | tuple | set) else [value]
    out: list[str] = []
    for item in items:
        if not isinstance(item, str):
            continue
        for part in re.split(r"\s*(?:,|;|/|→|->|\bto\b|\band\b|\+)\s*", item.strip()):
            pair = _CODE_PAIR.fullmatch(part)
            if pair and pair.group(2).islower() and all(g.lower() in LANGUAGES for g in pair.groups()):
                codes = [pair.group(1).lower(), pair.group(2).lower()]
            else:
                code = normalize_language(part)
                codes = [code] if code else []
            out += [c for c in codes if c not in out]
    return out


def languages_in_text(text: str) -> list[str]:
    """Languages a free text names as the language of a text (see the module docstring)."""
    out: list[str] = []
    for m in _IN_TEXT.finditer(text or ""):
        for g in m.groups():
            code = normalize_language(g) if g else None
            if code and code not in out:
                out.append(code)
    return out


# Domain → pattern of words that name it (on cards, tags, model names and task descriptions).
DOMAINS: dict[str, str] = {
    "translation": r"translat\w*|machine[- ]translation|\bmt\b|quality[- ]estimation|bilingual|\bcomet\b",
    "dialogue": r"chat\w*|dialog\w*|conversation\w*|assistant|helpful\w*|harmless\w*|\brlhf\b|"
    r"instruction[- ]following|open[- ]ended",
    "code": r"\bcode\b|coding|programm\w*|software|python|\bsql\b|unit tests?",
    "math": r"\bmath\w*|arithmetic|gsm8k|theorem|proofs?\b|process reward|\bprm\b",
    "summarization": r"summar\w*",
    "safety": r"safety|harmful|toxic\w*|jailbreak\w*|refusals?",
    "creative": r"poem\w*|poetry|verses?\b|\bmeter\b|\bmetre\b|rhym\w*|creative|story|stories|fiction|"
    r"haikus?|sonnets?|lyrics",
    "factuality": r"factual\w*|hallucinat\w*|truthful\w*|fact[- ]check\w*",
    "general": r"general[- ]purpose|all[- ]domains?|multi[- ]domain|domain[- ]agnostic",
}
_DOMAIN_RE = {d: re.compile(p, re.IGNORECASE) for d, p in DOMAINS.items()}
# What a reward model of one domain can judge besides its own (see the module docstring).
COVERS: dict[str, frozenset[str]] = {
    "dialogue": frozenset({"dialogue", "creative", "summarization", "factuality", "safety"}),
    "general": frozenset(DOMAINS),
}


def domains_in_text(text: str) -> list[str]:
    return [d for d, rx in _DOMAIN_RE.items() if rx.search(text or "")]


def request_languages(req: Any) -> tuple[list[str], str]:
    """(languages the task needs, where they came from: ``request`` | ``description`` | "")."""
    stated = parse_languages(req.language) if getattr(req, "language", "") else []
    if stated:
        return stated, "request"
    found = languages_in_text(str(getattr(req, "description", "")))
    return found, ("description" if found else "")


def request_domains(req: Any) -> list[str]:
    text = " ".join(str(getattr(req, k, "") or "") for k in ("domain", "task_type", "description"))
    return [d for d in domains_in_text(text.replace("_", " ")) if d != "general"]


def candidate_languages(facts: dict[str, Any]) -> tuple[list[str], str]:
    """(languages the card states, source: ``metadata`` (card metadata / ISO tags) | ``card text`` | "")."""
    stated = parse_languages(list(facts.get("languages") or []))
    for tag in facts.get("tags") or []:
        t = str(tag).lower()  # language tags on the hub are bare ISO codes (and "multilingual")
        if (t in LANGUAGES or t == MULTILINGUAL) and t not in stated:
            stated.append(t)
    if stated:
        return stated, "metadata"
    text = str(facts.get("card_excerpt") or "")
    found = languages_in_text(text)
    if re.search(r"\bmultilingual\b", text, re.IGNORECASE):
        found.append(MULTILINGUAL)
    return found, ("card text" if found else "")


def candidate_domains(model_id: str, facts: dict[str, Any]) -> list[str]:
    tags = " ".join(str(t) for t in facts.get("tags") or [] if ":" not in str(t))
    name = re.sub(r"[-_/.]+", " ", model_id.split("/", 1)[-1])
    text = f"{name} {tags} {facts.get('card_excerpt') or ''}"
    return domains_in_text(text)


def check_language(needed: list[str], source: str, stated: list[str], stated_source: str) -> str:
    if not needed:
        return "pass"
    if not stated:
        return "pass"  # unstated: the probes (in the task's language) decide
    missing = [lang for lang in needed if lang not in stated]
    if not missing or MULTILINGUAL in stated:
        return "pass"
    return (
        f"the card ({stated_source}) states {', '.join(stated)}; the task ({source}) needs "
        f"{', '.join(missing)}"
    )


def check_domain(needed: list[str], stated: list[str]) -> str:
    if not needed or not stated:
        return "pass"
    covered = set().union(*(COVERS.get(d, frozenset({d})) for d in stated))
    if covered & set(needed):
        return "pass"
    return f"the card describes {', '.join(stated)}; the task is {', '.join(needed)}"


def check_fit(fit: float, min_fit: float) -> str:
    if fit >= min_fit:
        return "pass"
    return (
        f"task fit {fit:+.3f} < the minimum {min_fit:+.3f} (ranking.min_fit: similarity to the request "
        "beyond a card that says only 'a reward model')"
    )


def task_fit_filters(req: Any, model_id: str, facts: dict[str, Any]) -> dict[str, str]:
    """The ``language`` and ``domain`` checks of one candidate (``fit`` needs the matcher: see ranking)."""
    needed, source = request_languages(req)
    stated, stated_source = candidate_languages(facts)
    return {
        "language": check_language(needed, source, stated, stated_source),
        "domain": check_domain(request_domains(req), candidate_domains(model_id, facts)),
    }
