"""Cardinals in words in German, French, Spanish, Italian and Portuguese (``rlar.tools.foreign_numbers``): read in a
text of that language, never in English text whose words are number words elsewhere."""

from __future__ import annotations

import pytest

from rlar.tools.foreign_numbers import foreign_cardinals


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Die Antwort lautet dreiundvierzig.", "Die Antwort lautet 43."),
        (
            "Es sind insgesamt zweihundertzwölf Äpfel, also die Antwort ist zweihundertzwölf.",
            "Es sind insgesamt 212 Äpfel, also die Antwort ist 212.",
        ),
        ("La réponse est quatre-vingt-dix-sept.", "La réponse est 97."),
        (
            "Il y a vingt et un élèves, donc la réponse est vingt et un.",
            "Il y a 21 élèves, donc la réponse est 21.",
        ),
        ("La respuesta es ciento veintitrés y el total es mil.", "La respuesta es 123 y el total es 1000."),
        (
            "La risposta è trecentoquaranta, quindi il totale è duemila.",
            "La risposta è 340, quindi il totale è 2000.",
        ),
        ("A resposta é trinta e oito, então o total é cem.", "A resposta é 38, então o total é 100."),
        # articles alone are not 1; English words that are number words elsewhere stay words
        ("Il a un chat et la réponse est douze.", "Il a un chat et la réponse est 12."),
        (
            "Once the train is due, it takes six minutes and one cent.",
            "Once the train is due, it takes six minutes and one cent.",
        ),
        ("Elf and dos are words.", "Elf and dos are words."),
    ],
)
def test_number_words_are_read_in_their_language_only(text: str, expected: str) -> None:
    assert foreign_cardinals(text) == expected
