"""Which language a text is in, as standard-library Python (part of the source every composed verifier
embeds): Latin-script languages by their frequent function words and letters, the others by script."""

import re
import unicodedata

LANGUAGES = {
    "en": "the a an and or but is are was were be been am i you he she it we they me him her us them my your his its"
    " our their this that these those of to in on at by for with from about not no do does did have has had will"
    " would can could should what which who when where how there here all some any very also just today",
    "de": "der die das den dem des ein eine einer eines einem und oder aber ist sind war waren bin bist hat haben"
    " habe nicht kein keine ich du er sie es wir ihr mit von zu auf für bei nach aus über unter auch noch schon"
    " sehr heute morgen gut wie was wer wo dass wenn weil so doch mal nur leider zeit",
    "fr": "le la les l un une des du de d et est sont suis es être avoir ai as a ont je j tu il elle on nous vous"
    " ils elles ne n pas plus que qu qui quoi où dans pour par sur avec sans sous ce c cette ces mon ma mes ton ta"
    " son sa ses leur mais ou donc car très bien tout tous aussi comme y en au aux",
    "es": "el la los las un una unos unas y o pero es son está están estoy soy era de del al en con por para sin"
    " sobre que qué como cuando donde muy más no sí se lo le les me te nos mi tu su yo tú él ella hay ser estar"
    " tiene tengo hoy mañana bien también ya",
    "it": "il lo la i gli le un uno una e o ma è sono sei siamo era di del della dei delle al alla in con per su"
    " da tra fra che chi come quando dove molto più non sì si mi ti ci vi io tu lui lei noi voi loro ho ha hanno"
    " oggi domani bene anche già questo questa",
    "pt": "o a os as um uma uns umas e ou mas é são está estão sou era de do da dos das ao à em no na nos nas com"
    " por para sem sobre que como quando onde muito mais não sim se me te eu tu ele ela nós você vocês tem tenho"
    " hoje amanhã bem também já isso esta este",
    "nl": "de het een en is van ik je jij u niet dat die met op te zijn voor er maar ook naar wat hij zij wij we"
    " ze hem haar ons mijn jouw geen nog al als bij door om uit over dan dit deze wel heel veel kan moet wil"
    " gaat heb hebben heeft was waren worden wordt morgen",
}
LANGUAGE_LETTERS = {
    "de": "äöüß",
    "fr": "çêèàâîôûœ",
    "es": "ñ¿¡áíóú",
    "it": "àèìòù",
    "pt": "ãõçâêô",
    "nl": "ĳ",
}
SCRIPTS = {
    "ru": ("CYRILLIC",),
    "el": ("GREEK",),
    "ar": ("ARABIC",),
    "he": ("HEBREW",),
    "hi": ("DEVANAGARI",),
    "ja": ("HIRAGANA", "KATAKANA"),
    "ko": ("HANGUL",),
    "zh": ("CJK",),
    "th": ("THAI",),
}


def detect_language(text):
    """A language code, or None when the text is too short or unclear."""
    counts: dict[str, int] = {}
    for ch in text:
        if ch.isalpha():
            name = unicodedata.name(ch, "")
            for code, scripts in SCRIPTS.items():
                if any(name.startswith(s) for s in scripts):
                    counts[code] = counts.get(code, 0) + 1
    letters = sum(1 for ch in text if ch.isalpha())
    if letters and counts:
        code, n = max(counts.items(), key=lambda kv: kv[1])
        if n >= 0.5 * letters:
            if code == "zh" and (counts.get("ja", 0) > 0):
                return "ja"
            return code
    toks = re.findall(r"[^\W\d_]+", text.lower())
    if len(toks) < 3:
        return None
    owners: dict[str, set[str]] = {}
    for code, vocab in LANGUAGES.items():
        for w in vocab.split():
            owners.setdefault(w, set()).add(code)
    # A function word shared by k languages counts 1/k for each of them.
    scores = dict.fromkeys(LANGUAGES, 0.0)
    for t in toks:
        for code in owners.get(t, ()):
            scores[code] += 1.0 / len(owners[t])
    for code in scores:
        extra = sum(1 for ch in text.lower() if ch in LANGUAGE_LETTERS.get(code, ""))
        scores[code] = scores[code] / len(toks) + 0.1 * min(extra, 3)
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    if ranked[0][1] < 0.1 or ranked[0][1] - ranked[1][1] < 0.03:
        return None
    return ranked[0][0]
