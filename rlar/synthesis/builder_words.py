"""The words a built response is made of (:mod:`rlar.synthesis.builder`): vocabularies by language (function
words so the language detector knows the text), words that keep the letter and length rules, the one-word
answers (a letter count, a word with a given beginning or ending, a length in characters) and the answers a rule
fixes whole (JSON, one of several options, "only a number", an identifier in a style)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from rlar.constraints.checks import LANGUAGES, syllables
from rlar.constraints.vocabulary import COUNT_RULES
from rlar.synthesis.forms import json_array_text

_EN = (
    "stone light calm path tree rain wind sun moon bird leaf road hill lake snow sea sky cloud rock field bread "
    "milk salt fish door wall desk lamp book song ship town park gate bridge"
).split()
_CONTENT = {
    "de": "Hund Katze Haus Baum Wasser Brot Garten Stadt Weg Licht Morgen Fenster".split(),
    "fr": "chien chat maison arbre eau pain jardin ville chemin lumière matin fenêtre".split(),
    "es": "perro gato casa árbol agua pan jardín ciudad camino luz mañana ventana".split(),
    "it": "cane gatto casa albero acqua pane giardino città strada luce mattina finestra".split(),
    "pt": "cão gato casa árvore água pão jardim cidade caminho luz manhã janela".split(),
    "nl": "hond kat huis boom water brood tuin stad weg licht ochtend raam".split(),
}
_SCRIPT_WORDS = {
    "ru": "это очень хороший день мы идём домой вместе сегодня".split(),
    "el": "αυτή είναι μια πολύ καλή μέρα για όλους μας".split(),
    "ar": "هذا يوم جميل جدا ونحن نذهب إلى البيت".split(),
    "he": "זה יום יפה מאוד ואנחנו הולכים הביתה".split(),
    "hi": "यह बहुत अच्छा दिन है हम घर जाते हैं".split(),
    "ja": "今日は とても いい 天気 です ね".split(),
    "ko": "오늘은 날씨가 아주 좋은 날 입니다".split(),
    "zh": "今天 天气 很 好 我们 一起 去 公园".split(),
    "th": "วันนี้ อากาศ ดี มาก เรา ไป บ้าน".split(),
}
_OTHER_LANGUAGE = {"en": "de"}


def _pick(lo: int | None, hi: int | None, default: int) -> int:
    """A count inside [lo, hi], one step inside each bound when the range allows it."""
    lo_ = lo if lo is not None else 0
    hi_ = hi if hi is not None else max(default, lo_ + 2)
    if hi_ < lo_:
        return lo_
    want = min(max(default, lo_), hi_)
    if hi_ - lo_ >= 2:
        want = min(max(want, lo_ + 1), hi_ - 1)
    return want


def _function_words(lang: str) -> list[str]:
    """Function words owned by ``lang`` alone (so the language detector recognises the text)."""
    mine = LANGUAGES.get(lang, "").split()
    others = {w for code, vocab in LANGUAGES.items() if code != lang for w in vocab.split()}
    return [w for w in mine if w not in others and len(w) > 1]


def _vocab(rules: Mapping[str, dict[str, Any]], query: str) -> list[str]:
    lang = rules.get("language", {}).get("lang", "en")
    if lang in _SCRIPT_WORDS:
        words = list(_SCRIPT_WORDS[lang])
    elif lang != "en":
        fw, content = _function_words(lang), _CONTENT.get(lang, [])
        words = [w for pair in zip(fw, content * 3, strict=False) for w in pair]
    elif "language" in rules:  # English asked for: its function words, so the detector knows it
        words = [w for pair in zip(_function_words("en"), _EN, strict=False) for w in pair]
    else:
        words = list(_EN)
    banned = {w.lower() for c in rules.values() if c["rule"] == "exclude" for w in c["words"]}
    banned |= {str(c["text"]).lower() for c in rules.values() if c["rule"] == "occurs" and c.get("max") == 0}
    no_letters = {
        ch
        for c in rules.values()
        if c["rule"] == "letter" and c.get("max") == 0
        for ch in str(c["letter"]).lower()
    }
    max_letters = rules.get("letters/word", {}).get("max")
    max_chars = rules.get("chars/word", {}).get("max")
    if "syllables/line" in rules or "syllables/sentence" in rules:
        words = [w for w in words if syllables(w) == 1]
    out = []
    for w in words:
        lw = w.lower()
        if lw in banned or any(ch in lw for ch in no_letters):
            continue
        if max_letters is not None and sum(ch.isalpha() for ch in w) > max_letters:
            continue
        if max_chars is not None and len(w) > max_chars:
            continue
        out.append(w)
    if not out:
        allowed = _allowed_letters(rules)
        n = len(allowed)
        out = (
            [allowed[i % n] + allowed[(i + 1) % n] + allowed[(i + 2) % n] for i in range(12)] if n else ["ok"]
        )
    return out


def _allowed_letters(rules: Mapping[str, dict[str, Any]]) -> str:
    no = {
        ch
        for c in rules.values()
        if c["rule"] == "letter" and c.get("max") == 0
        for ch in str(c["letter"]).lower()
    }
    return "".join(ch for ch in "tnrslmdpkbghcfvwyzjqxaeiou" if ch not in no)


def _letters_only(rules: Mapping[str, dict[str, Any]]) -> str | None:
    """A one-word answer when a letter count is the only size the rules give ("Write 4 letters, no vowels")."""
    sized = ("letters", "capitals") if any(k in rules for k in ("letters", "capitals")) else ()
    others = [k for k in rules if k.split("/")[0] in COUNT_RULES and k not in sized]
    only = rules.get("only", {}).get("what", "letters")
    if not sized or others or only not in ("letters", "capitals", "lowercase_letters") or "one_of" in rules:
        return None
    c = rules.get("capitals") or rules["letters"]
    n = _pick(c.get("min"), c.get("max"), c.get("min") or 3)
    allowed = _allowed_letters(rules)
    if not allowed or n <= 0:
        return None
    need = "".join(
        str(c["letter"])[0] * int(c["min"]) for c in rules.values() if c["rule"] == "letter" and c.get("min")
    )
    word = (need + allowed * (n // len(allowed) + 1))[:n]
    return word.upper() if "capitals" in rules or "uppercase" in rules else word


def _affixed_word(rules: Mapping[str, dict[str, Any]]) -> str | None:
    """A one-word answer with a given beginning or ending and a letter count ("one word of 6 letters that ends in
    'ing'", "a word of at least 9 letters starting with 'un'"): the affixes with filler letters between them."""
    one = rules.get("words", {})
    if one.get("min") != 1 or one.get("max") != 1 or ("letters" not in rules and "letters/word" not in rules):
        return None
    sized = {"words", "letters", "letters/word"}
    if any(k.split("/")[0] in COUNT_RULES and k not in sized for k in rules):
        return None
    pre = str(rules.get("starts_with", {}).get("text", ""))
    suf = str(rules.get("ends_with", {}).get("text", ""))
    if not (pre or suf) or not re.fullmatch(r"[A-Za-z]*", pre + suf):
        return None
    c = rules.get("letters") or rules["letters/word"]
    n = _pick(c.get("min"), c.get("max"), max(c.get("min") or 0, len(pre) + len(suf) + 2))
    fill = _allowed_letters(rules).replace("x", "").replace("q", "") or "t"
    if n < len(pre) + len(suf):
        return None
    middle = (fill * (n // len(fill) + 1))[: n - len(pre) - len(suf)]
    return pre + middle + suf


def _fit_chars(text: str, n: int, vocab: list[str]) -> str:
    """``text`` grown or cut by whole words, then its last word stretched or shortened, to ``n`` characters (its
    final mark kept)."""
    body, mark = (text[:-1], text[-1]) if text[-1:] in ".!?" else (text, "")
    words = body.split()
    i = 0
    while len(" ".join(words)) + len(mark) < n:
        words.append(vocab[i % len(vocab)].lower())
        i += 1
    while len(words) > 1 and len(" ".join(words[:-1])) + len(mark) + 2 > n:
        words.pop()
    head = " ".join(words[:-1])
    room = n - len(mark) - (len(head) + 1 if head else 0)
    last = (words[-1] * (room // max(1, len(words[-1])) + 1))[: max(1, room)]
    return (f"{head} {last}" if head else last) + mark


_TYPE_VALUES: dict[str, Any] = {
    "string": "sample text",
    "integer": 7,
    "number": 2.5,
    "boolean": True,
    "list": ["a", "b"],
    "list_of_strings": ["alpha", "beta"],
    "list_of_numbers": [1, 2],
    "object": {"k": "v"},
    "null": None,
}


def _terminal(rules: Mapping[str, dict[str, Any]]) -> dict[str, Any] | None:
    """A response for rules that fix the whole answer (JSON, options, 'only ...'), else None."""
    if "one_of" in rules:
        return {"text": str(rules["one_of"]["options"][0])}
    if "json_array" in rules:
        return {"text": json_array_text(rules["json_array"])}
    if "json_keys" in rules or "json" in rules:
        jk = rules.get("json_keys")
        obj = (
            {str(k): _TYPE_VALUES.get((jk.get("types") or {}).get(k, "string"), "x") for k in jk["keys"]}
            if jk
            else {"answer": "sample"}
        )
        return {"text": json.dumps(obj)}
    if "only" in rules:
        what = rules["only"]["what"]
        bound = rules.get("capitals" if what == "capitals" else "letters", {})
        n = _pick(bound.get("min"), bound.get("max"), 3)
        styles = {
            "snake_case": "quiet_river",
            "screaming_snake": "QUIET_RIVER",
            "camel_case": "quietRiver",
            "pascal_case": "QuietRiver",
            "kebab_case": "quiet-river",
        }
        if what in styles:
            return {"text": styles[what]}
        text = {
            "number": "42",
            "integer": "7",
            "digits": "123",
            "word": "stone",
            "letters": "abc"[:1] * 0 + "stone"[: max(1, n)],
            "lowercase_letters": "stone"[: max(1, n)],
            "capitals": "ABCDEFGHIJ"[: max(1, n)] if n <= 10 else "A" * n,
        }[what]
        return {"text": text}
    return None
