"""Write the real-model demo mix (``make run``): four small tasks SmolLM2-135M-Instruct can learn from in minutes.

Run ``python data/mix/generate.py`` to write the JSONL files beside this script (deterministic: a fixed seed, no
randomness from elsewhere); ``tests/unit/test_mix_data.py`` checks the shipped files are what it writes. Every record
has a ``split`` field (``train`` / ``test``): the test split is held out from training and is what ``make run``
evaluates the initial and the trained policy on.

Why these tasks (measured on the packaged model before training, see docs/benchmarks.md): each is read by a
different kind of reward tool, each has a base rate the model reaches sometimes but not reliably, so GRPO's groups
carry signal from the first steps, and each answer fits in 64 new tokens.
- ``arith_words.jsonl``: arithmetic asked in words ("What is 17 plus 25?", "Subtract 9 from 23."), operands
  2-40 (products 2-12 × 2-12); reference: the number. A reward reads the final number out of a sentence.
- ``format.jsonl``: short writing prompts with one or two checkable instructions, in IFEval's published layout
  (``key``, ``prompt``, ``instruction_id_list``, ``kwargs``): fewer than N words or sentences, N bullet points,
  keywords to include, a postscript, a word to avoid. Only instructions the model follows sometimes.
- ``capitals.jsonl``: "What is the capital of X?" in several wordings, reference: the capital's accepted names
  (an alias list: any one is right).
- ``code.jsonl``: small Python functions in MBPP's published layout (``task_id``, ``text``, ``code``,
  ``test_list``), with the assert tests the sandbox runs.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 20261206
TEST_FRACTION = 0.25
CODE_TEST_FRACTION = 0.5


def _split(rng: random.Random, fraction: float = TEST_FRACTION) -> str:
    return "test" if rng.random() < fraction else "train"


# ---------------------------------------------------------------------------------------------------------
# arithmetic in words

_PLUS = (
    "What is {a} plus {b}?",
    "Add {a} and {b}.",
    "What do you get when you add {b} to {a}?",
    "Compute {a} + {b}.",
)
_MINUS = (
    "What is {a} minus {b}?",
    "Subtract {b} from {a}.",
    "What do you get when you take {b} away from {a}?",
    "Compute {a} - {b}.",
)
_TIMES = (
    "What is {a} times {b}?",
    "Multiply {a} by {b}.",
    "What is the product of {a} and {b}?",
    "Compute {a} x {b}.",
)


def arith_words(rng: random.Random) -> list[dict]:
    rows, seen = [], set()
    while len(rows) < 400:
        op = rng.choice("+-*")
        if op == "*":
            a, b = rng.randint(2, 12), rng.randint(2, 12)
            q, ans = rng.choice(_TIMES).format(a=a, b=b), a * b
        else:
            a, b = rng.randint(2, 40), rng.randint(2, 40)
            if op == "-":
                a, b = max(a, b), min(a, b)
                q, ans = rng.choice(_MINUS).format(a=a, b=b), a - b
            else:
                q, ans = rng.choice(_PLUS).format(a=a, b=b), a + b
        if q in seen:
            continue
        seen.add(q)
        rows.append({"id": f"arith-{len(rows):03d}", "split": _split(rng), "question": q, "answer": str(ans)})
    return rows


# ---------------------------------------------------------------------------------------------------------
# instruction following (IFEval layout)

_TOPICS = (
    "the ocean",
    "autumn leaves",
    "a public library",
    "riding a bicycle",
    "green tea",
    "mountain hiking",
    "a rainy afternoon",
    "friendship",
    "the moon",
    "baking bread",
    "a busy train station",
    "honeybees",
    "learning a language",
    "a city park",
    "winter mornings",
    "old photographs",
    "a lighthouse",
    "board games",
    "the desert at night",
    "a farmers market",
    "recycling",
    "a thunderstorm",
    "street music",
    "a small garden",
    "the first day of school",
    "volcanoes",
    "a long road trip",
    "coffee shops",
    "penguins",
    "the night sky",
    "a snowy village",
    "homemade soup",
    "paper airplanes",
    "a museum visit",
    "sunflowers",
    "a quiet lake",
    "the wind",
    "kites",
    "an old bridge",
    "walking a dog",
)
_KEYWORDS = {
    "the ocean": ("waves", "salt"),
    "autumn leaves": ("orange", "fall"),
    "a public library": ("books", "quiet"),
    "riding a bicycle": ("wheels", "balance"),
    "green tea": ("leaves", "warm"),
    "mountain hiking": ("trail", "peak"),
    "a rainy afternoon": ("window", "clouds"),
    "friendship": ("trust", "laugh"),
    "the moon": ("night", "light"),
    "baking bread": ("oven", "flour"),
    "a busy train station": ("platform", "crowd"),
    "honeybees": ("flowers", "hive"),
    "learning a language": ("words", "practice"),
    "a city park": ("trees", "bench"),
    "winter mornings": ("cold", "frost"),
    "old photographs": ("memories", "faded"),
    "a lighthouse": ("ships", "beam"),
    "board games": ("dice", "friends"),
    "the desert at night": ("stars", "sand"),
    "a farmers market": ("fresh", "stalls"),
    "recycling": ("plastic", "bins"),
    "a thunderstorm": ("lightning", "rain"),
    "street music": ("guitar", "crowd"),
    "a small garden": ("seeds", "soil"),
    "the first day of school": ("teacher", "nervous"),
    "volcanoes": ("lava", "ash"),
    "a long road trip": ("map", "highway"),
    "coffee shops": ("espresso", "cozy"),
    "penguins": ("ice", "swim"),
    "the night sky": ("stars", "dark"),
    "a snowy village": ("snow", "roofs"),
    "homemade soup": ("vegetables", "bowl"),
    "paper airplanes": ("fold", "fly"),
    "a museum visit": ("paintings", "history"),
    "sunflowers": ("yellow", "sun"),
    "a quiet lake": ("water", "calm"),
    "the wind": ("trees", "blow"),
    "kites": ("string", "sky"),
    "an old bridge": ("stone", "river"),
    "walking a dog": ("leash", "park"),
}
_TASKS = ("Write about {t}.", "Describe {t}.", "Tell me about {t}.", "Write a short note about {t}.")


def _instruction(kind: str, topic: str, rng: random.Random) -> tuple[str, str, dict]:
    if kind == "words":
        n = rng.choice((12, 15, 20, 25))
        return (
            f"Answer with less than {n} words.",
            "length_constraints:number_words",
            {"relation": "less than", "num_words": n},
        )
    if kind == "sentences":
        n = rng.choice((2, 3))
        return (
            f"Your response should contain less than {n} sentences.",
            "length_constraints:number_sentences",
            {"relation": "less than", "num_sentences": n},
        )
    if kind == "bullets":
        n = rng.choice((2, 3, 4))
        text = (
            f"Your answer must contain exactly {n} bullet points. Use the markdown bullet points such as:\n"
            "* This is point 1."
        )
        return text, "detectable_format:number_bullet_lists", {"num_bullets": n}
    if kind == "keywords":
        words = list(_KEYWORDS[topic])
        return (
            f"Include the keywords {', '.join(repr(w) for w in words)} in the response.",
            "keywords:existence",
            {"keywords": words},
        )
    if kind == "postscript":
        return (
            "At the end of your response, please explicitly add a postscript starting with P.S.",
            "detectable_content:postscript",
            {"postscript_marker": "P.S."},
        )
    if kind == "forbidden":
        word = _KEYWORDS[topic][0]
        return (
            f"Do not include the word {word!r} in the response.",
            "keywords:forbidden_words",
            {"forbidden_words": [word]},
        )
    raise ValueError(kind)


def format_rows(rng: random.Random) -> list[dict]:
    rows = []
    kinds = ("words", "sentences", "bullets", "keywords", "postscript", "forbidden")
    for topic in _TOPICS:
        for kind in kinds:
            task = rng.choice(_TASKS).format(t=topic)
            text, iid, kwargs = _instruction(kind, topic, rng)
            ids, kws, parts = [iid], [kwargs], [text]
            if rng.random() < 0.25:  # a second instruction of another kind
                other = rng.choice([k for k in kinds if k not in (kind, "forbidden", "keywords")])
                text2, iid2, kw2 = _instruction(other, topic, rng)
                if iid2 not in ids:
                    ids.append(iid2)
                    kws.append(kw2)
                    parts.append(text2)
            rows.append(
                {
                    "key": 5000 + len(rows),
                    "split": _split(rng),
                    "prompt": " ".join([task, *parts]),
                    "instruction_id_list": ids,
                    "kwargs": kws,
                }
            )
    return rows


# ---------------------------------------------------------------------------------------------------------
# capitals

_CAPITALS = (
    ("France", ["Paris"]),
    ("Japan", ["Tokyo"]),
    ("Italy", ["Rome"]),
    ("Germany", ["Berlin"]),
    ("Spain", ["Madrid"]),
    ("Egypt", ["Cairo"]),
    ("Canada", ["Ottawa"]),
    ("Russia", ["Moscow"]),
    ("China", ["Beijing", "Peking"]),
    ("Greece", ["Athens"]),
    ("Kenya", ["Nairobi"]),
    ("Peru", ["Lima"]),
    ("Norway", ["Oslo"]),
    ("Poland", ["Warsaw"]),
    ("Cuba", ["Havana"]),
    ("Austria", ["Vienna"]),
    ("Portugal", ["Lisbon"]),
    ("Ireland", ["Dublin"]),
    ("Sweden", ["Stockholm"]),
    ("Finland", ["Helsinki"]),
    ("Denmark", ["Copenhagen"]),
    ("Belgium", ["Brussels"]),
    ("the Netherlands", ["Amsterdam"]),
    ("Switzerland", ["Bern", "Berne"]),
    ("Hungary", ["Budapest"]),
    ("the Czech Republic", ["Prague"]),
    ("Turkey", ["Ankara"]),
    ("India", ["New Delhi"]),
    ("Thailand", ["Bangkok"]),
    ("Vietnam", ["Hanoi"]),
    ("South Korea", ["Seoul"]),
    ("Indonesia", ["Jakarta"]),
    ("the Philippines", ["Manila"]),
    ("Australia", ["Canberra"]),
    ("New Zealand", ["Wellington"]),
    ("Argentina", ["Buenos Aires"]),
    ("Chile", ["Santiago"]),
    ("Colombia", ["Bogotá", "Bogota"]),
    ("Mexico", ["Mexico City"]),
    ("Brazil", ["Brasília", "Brasilia"]),
    ("Venezuela", ["Caracas"]),
    ("Morocco", ["Rabat"]),
    ("Nigeria", ["Abuja"]),
    ("Ghana", ["Accra"]),
    ("Ethiopia", ["Addis Ababa"]),
    ("Iran", ["Tehran", "Teheran"]),
    ("Iraq", ["Baghdad"]),
    ("Saudi Arabia", ["Riyadh"]),
    ("Israel", ["Jerusalem"]),
    ("Pakistan", ["Islamabad"]),
    ("Afghanistan", ["Kabul"]),
    ("Ukraine", ["Kyiv", "Kiev"]),
    ("Romania", ["Bucharest"]),
    ("Bulgaria", ["Sofia"]),
    ("Serbia", ["Belgrade"]),
    ("Croatia", ["Zagreb"]),
    ("Iceland", ["Reykjavik", "Reykjavík"]),
    ("Scotland", ["Edinburgh"]),
    ("Wales", ["Cardiff"]),
    ("England", ["London"]),
    ("the United Kingdom", ["London"]),
    ("the United States", ["Washington, D.C.", "Washington"]),
    ("Malaysia", ["Kuala Lumpur"]),
    ("Singapore", ["Singapore"]),
    ("Nepal", ["Kathmandu"]),
    ("Bangladesh", ["Dhaka"]),
    ("Sri Lanka", ["Colombo", "Sri Jayawardenepura Kotte"]),
    ("Syria", ["Damascus"]),
    ("Jordan", ["Amman"]),
    ("Lebanon", ["Beirut"]),
    ("Qatar", ["Doha"]),
    ("Kuwait", ["Kuwait City"]),
    ("Tunisia", ["Tunis"]),
    ("Algeria", ["Algiers"]),
    ("Libya", ["Tripoli"]),
    ("Sudan", ["Khartoum"]),
    ("Uganda", ["Kampala"]),
    ("Tanzania", ["Dodoma"]),
    ("Zimbabwe", ["Harare"]),
    ("Senegal", ["Dakar"]),
    ("Jamaica", ["Kingston"]),
    ("Ecuador", ["Quito"]),
    ("Bolivia", ["Sucre", "La Paz"]),
    ("Uruguay", ["Montevideo"]),
    ("Paraguay", ["Asunción", "Asuncion"]),
    ("Mongolia", ["Ulaanbaatar", "Ulan Bator"]),
    ("Estonia", ["Tallinn"]),
    ("Latvia", ["Riga"]),
    ("Lithuania", ["Vilnius"]),
    ("Slovakia", ["Bratislava"]),
    ("Slovenia", ["Ljubljana"]),
)
_CAPITAL_QUESTIONS = (
    "What is the capital of {c}?",
    "What is the capital city of {c}? Answer with the city's name.",
    "Name the capital of {c}.",
    "Which city is the capital of {c}?",
)


def capitals(rng: random.Random) -> list[dict]:
    rows = []
    for country, names in _CAPITALS:
        q = rng.choice(_CAPITAL_QUESTIONS).format(c=country)
        rows.append({"id": f"capital-{len(rows):03d}", "split": _split(rng), "question": q, "answers": names})
    return rows


# ---------------------------------------------------------------------------------------------------------
# code (MBPP layout)

_CODE = (
    (
        "Write a function add(a, b) that returns the sum of two numbers.",
        "def add(a, b):\n    return a + b",
        ["assert add(2, 3) == 5", "assert add(-1, 1) == 0"],
    ),
    (
        "Write a function is_even(n) that returns True when n is even and False otherwise.",
        "def is_even(n):\n    return n % 2 == 0",
        ["assert is_even(4) == True", "assert is_even(7) == False"],
    ),
    (
        "Write a function reverse_string(s) that returns the string s reversed.",
        "def reverse_string(s):\n    return s[::-1]",
        ["assert reverse_string('abc') == 'cba'", "assert reverse_string('') == ''"],
    ),
    (
        "Write a function max_of_three(a, b, c) that returns the largest of three numbers.",
        "def max_of_three(a, b, c):\n    return max(a, b, c)",
        ["assert max_of_three(1, 5, 3) == 5", "assert max_of_three(9, 2, 3) == 9"],
    ),
    (
        "Write a function count_vowels(s) that returns how many vowels (a, e, i, o, u) the lowercase string s has.",
        "def count_vowels(s):\n    return sum(c in 'aeiou' for c in s)",
        ["assert count_vowels('hello') == 2", "assert count_vowels('xyz') == 0"],
    ),
    (
        "Write a function square_list(xs) that returns a list of the squares of the numbers in xs.",
        "def square_list(xs):\n    return [x * x for x in xs]",
        ["assert square_list([1, 2, 3]) == [1, 4, 9]", "assert square_list([]) == []"],
    ),
    (
        "Write a function factorial(n) that returns n factorial.",
        "def factorial(n):\n    return 1 if n < 2 else n * factorial(n - 1)",
        ["assert factorial(5) == 120", "assert factorial(0) == 1"],
    ),
    (
        "Write a function first_char(s) that returns the first character of a non-empty string s.",
        "def first_char(s):\n    return s[0]",
        ["assert first_char('hello') == 'h'", "assert first_char('x') == 'x'"],
    ),
    (
        "Write a function is_palindrome(s) that returns True when the string s reads the same backwards.",
        "def is_palindrome(s):\n    return s == s[::-1]",
        ["assert is_palindrome('level') == True", "assert is_palindrome('abc') == False"],
    ),
    (
        "Write a function sum_list(xs) that returns the sum of the numbers in the list xs.",
        "def sum_list(xs):\n    return sum(xs)",
        ["assert sum_list([1, 2, 3]) == 6", "assert sum_list([]) == 0"],
    ),
    (
        "Write a function min_list(xs) that returns the smallest number in the non-empty list xs.",
        "def min_list(xs):\n    return min(xs)",
        ["assert min_list([4, 2, 8]) == 2", "assert min_list([7]) == 7"],
    ),
    (
        "Write a function celsius_to_fahrenheit(c) that converts degrees Celsius to Fahrenheit.",
        "def celsius_to_fahrenheit(c):\n    return c * 9 / 5 + 32",
        ["assert celsius_to_fahrenheit(0) == 32", "assert celsius_to_fahrenheit(100) == 212"],
    ),
    (
        "Write a function average(xs) that returns the mean of the numbers in the non-empty list xs.",
        "def average(xs):\n    return sum(xs) / len(xs)",
        ["assert average([1, 2, 3]) == 2", "assert average([4]) == 4"],
    ),
    (
        "Write a function count_words(s) that returns the number of words in the string s, split on spaces.",
        "def count_words(s):\n    return len(s.split())",
        ["assert count_words('hello big world') == 3", "assert count_words('') == 0"],
    ),
    (
        "Write a function to_upper(s) that returns the string s in upper case.",
        "def to_upper(s):\n    return s.upper()",
        ["assert to_upper('abc') == 'ABC'", "assert to_upper('Hi!') == 'HI!'"],
    ),
    (
        "Write a function last_element(xs) that returns the last element of the non-empty list xs.",
        "def last_element(xs):\n    return xs[-1]",
        ["assert last_element([1, 2, 3]) == 3", "assert last_element(['a']) == 'a'"],
    ),
    (
        "Write a function is_positive(n) that returns True when n is greater than zero.",
        "def is_positive(n):\n    return n > 0",
        [
            "assert is_positive(5) == True",
            "assert is_positive(0) == False",
            "assert is_positive(-2) == False",
        ],
    ),
    (
        "Write a function double_all(xs) that returns a list with every number in xs multiplied by 2.",
        "def double_all(xs):\n    return [2 * x for x in xs]",
        ["assert double_all([1, 2]) == [2, 4]", "assert double_all([]) == []"],
    ),
    (
        "Write a function string_length(s) that returns the number of characters in s.",
        "def string_length(s):\n    return len(s)",
        ["assert string_length('hello') == 5", "assert string_length('') == 0"],
    ),
    (
        "Write a function is_divisible(a, b) that returns True when a is divisible by b.",
        "def is_divisible(a, b):\n    return a % b == 0",
        ["assert is_divisible(10, 5) == True", "assert is_divisible(7, 2) == False"],
    ),
    (
        "Write a function remove_spaces(s) that returns s with every space removed.",
        "def remove_spaces(s):\n    return s.replace(' ', '')",
        ["assert remove_spaces('a b c') == 'abc'", "assert remove_spaces('ab') == 'ab'"],
    ),
    (
        "Write a function count_even(xs) that returns how many even numbers the list xs contains.",
        "def count_even(xs):\n    return sum(1 for x in xs if x % 2 == 0)",
        ["assert count_even([1, 2, 4, 5]) == 2", "assert count_even([]) == 0"],
    ),
    (
        "Write a function second_largest(xs) that returns the second largest distinct number in the list xs.",
        "def second_largest(xs):\n    return sorted(set(xs))[-2]",
        ["assert second_largest([4, 1, 7, 3]) == 4", "assert second_largest([5, 5, 2]) == 2"],
    ),
    (
        "Write a function fibonacci(n) that returns the n-th Fibonacci number, with fibonacci(0) == 0 and fibonacci(1) == 1.",
        "def fibonacci(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a",
        ["assert fibonacci(0) == 0", "assert fibonacci(1) == 1", "assert fibonacci(10) == 55"],
    ),
    (
        "Write a function is_prime(n) that returns True when n is a prime number.",
        "def is_prime(n):\n    return n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))",
        ["assert is_prime(7) == True", "assert is_prime(9) == False", "assert is_prime(1) == False"],
    ),
    (
        "Write a function capitalize_words(s) that returns s with the first letter of every word in upper case.",
        "def capitalize_words(s):\n    return ' '.join(w[:1].upper() + w[1:] for w in s.split(' '))",
        ["assert capitalize_words('hello world') == 'Hello World'", "assert capitalize_words('a') == 'A'"],
    ),
    (
        "Write a function unique(xs) that returns the distinct elements of xs in the order they first appear.",
        "def unique(xs):\n    out = []\n    for x in xs:\n        if x not in out:\n            out.append(x)\n    return out",
        ["assert unique([1, 2, 1, 3, 2]) == [1, 2, 3]", "assert unique([]) == []"],
    ),
    (
        "Write a function count_char(s, c) that returns how many times the character c occurs in s.",
        "def count_char(s, c):\n    return s.count(c)",
        ["assert count_char('banana', 'a') == 3", "assert count_char('abc', 'z') == 0"],
    ),
    (
        "Write a function gcd(a, b) that returns the greatest common divisor of two positive integers.",
        "def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a",
        ["assert gcd(12, 18) == 6", "assert gcd(7, 5) == 1"],
    ),
    (
        "Write a function digits_sum(n) that returns the sum of the decimal digits of the non-negative integer n.",
        "def digits_sum(n):\n    return sum(int(d) for d in str(n))",
        ["assert digits_sum(123) == 6", "assert digits_sum(0) == 0"],
    ),
    (
        "Write a function merge_sorted(a, b) that returns one sorted list of the elements of the sorted lists a and b.",
        "def merge_sorted(a, b):\n    return sorted(a + b)",
        ["assert merge_sorted([1, 4], [2, 3]) == [1, 2, 3, 4]", "assert merge_sorted([], [1]) == [1]"],
    ),
    (
        "Write a function longest_word(s) that returns the longest word of the sentence s (the first one if several tie).",
        "def longest_word(s):\n    return max(s.split(), key=len)",
        ["assert longest_word('a bbb cc') == 'bbb'", "assert longest_word('hi yo') == 'hi'"],
    ),
    (
        "Write a function flatten(xss) that returns one list of the elements of the lists in xss, in order.",
        "def flatten(xss):\n    return [x for xs in xss for x in xs]",
        ["assert flatten([[1, 2], [3]]) == [1, 2, 3]", "assert flatten([]) == []"],
    ),
    (
        "Write a function power(base, exp) that returns base raised to the non-negative integer exp.",
        "def power(base, exp):\n    return base ** exp",
        ["assert power(2, 10) == 1024", "assert power(5, 0) == 1"],
    ),
    (
        "Write a function vowel_start(words) that returns the words of the list that start with a vowel.",
        "def vowel_start(words):\n    return [w for w in words if w[:1].lower() in 'aeiou']",
        [
            "assert vowel_start(['apple', 'kiwi', 'orange']) == ['apple', 'orange']",
            "assert vowel_start([]) == []",
        ],
    ),
    (
        "Write a function running_total(xs) that returns the list of cumulative sums of xs.",
        "def running_total(xs):\n    out, t = [], 0\n    for x in xs:\n        t += x\n        out.append(t)\n    return out",
        ["assert running_total([1, 2, 3]) == [1, 3, 6]", "assert running_total([]) == []"],
    ),
    (
        "Write a function is_sorted(xs) that returns True when the list xs is in non-decreasing order.",
        "def is_sorted(xs):\n    return all(a <= b for a, b in zip(xs, xs[1:]))",
        ["assert is_sorted([1, 2, 2, 5]) == True", "assert is_sorted([3, 1]) == False"],
    ),
    (
        "Write a function swap_case(s) that returns s with upper case letters made lower case and lower case made upper.",
        "def swap_case(s):\n    return s.swapcase()",
        ["assert swap_case('aBc') == 'AbC'", "assert swap_case('') == ''"],
    ),
    (
        "Write a function acronym(s) that returns the upper-case first letters of the words of s.",
        "def acronym(s):\n    return ''.join(w[0].upper() for w in s.split())",
        ["assert acronym('portable network graphics') == 'PNG'", "assert acronym('hi') == 'H'"],
    ),
    (
        "Write a function count_positive(xs) that returns how many numbers in xs are greater than zero.",
        "def count_positive(xs):\n    return sum(1 for x in xs if x > 0)",
        ["assert count_positive([1, -2, 3, 0]) == 2", "assert count_positive([]) == 0"],
    ),
)


def code(rng: random.Random) -> list[dict]:
    return [
        {
            "task_id": 9000 + i,
            "split": _split(rng, CODE_TEST_FRACTION),
            "text": text,
            "code": sol,
            "test_list": tests,
        }
        for i, (text, sol, tests) in enumerate(_CODE)
    ]


FILES = {
    "arith_words.jsonl": arith_words,
    "format.jsonl": format_rows,
    "capitals.jsonl": capitals,
    "code.jsonl": code,
}


def render() -> dict[str, str]:
    """File name -> the JSONL text this script writes."""
    out = {}
    for i, (name, make) in enumerate(FILES.items()):
        rows = make(random.Random(SEED + i))
        out[name] = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    return out


if __name__ == "__main__":
    for name, text in render().items():
        (HERE / name).write_text(text, encoding="utf-8")
        print(f"{name}: {text.count(chr(10))} records")
