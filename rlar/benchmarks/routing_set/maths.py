"""Numeric and symbolic answers: GSM8K, MATH (solutions and answers), SVAMP, AIME, FinQA, counting."""

from __future__ import annotations

import math
import random
from fractions import Fraction
from typing import Any

from rlar.benchmarks.routing_set.common import MATH, Item, Task, records

NAMES = [
    "Maria",
    "Tomás",
    "Aisha",
    "Kenji",
    "Olga",
    "Priya",
    "Liam",
    "Fatima",
    "Noah",
    "Mei",
    "Jamal",
    "Sofia",
    "Arjun",
    "Hannah",
    "Diego",
    "Yuki",
]


def gsm8k(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "gsm8k",
        ["grade_school_problems", "gs-word-probs", "elementary_story_problems"],
        [
            "",
            "Multi-step grade-school problems. The final answer follows ####.",
            "Solve the story problem step by step and end with the final numeric answer.",
        ],
        "openai/gsm8k:main",
    )
    items = []
    for i in range(14):
        n = NAMES[i % len(NAMES)]
        t = i % 7
        if t == 0:
            a, b, c = rng.randint(5, 30), rng.randint(2, 6), rng.randint(3, 12)
            q = f"{n} has {a} stickers. She buys {b} packs with {c} stickers in each pack. How many stickers does she have now?"
            s = f"She buys {b}*{c}=<<{b}*{c}={b * c}>>{b * c} stickers.\nSo she has {a}+{b * c}=<<{a}+{b * c}={a + b * c}>>{a + b * c} stickers.\n#### {a + b * c}"
        elif t == 1:
            w, h, e = rng.randint(12, 25), rng.randint(10, 40), rng.randint(20, 90)
            q = f"{n} earns ${w} an hour babysitting. This week {n} worked {h} hours and spent ${e} on a concert ticket. How much money does {n} have left from this week's earnings?"
            s = f"{n} earned {w}*{h}=$<<{w}*{h}={w * h}>>{w * h}.\nAfter the ticket, {w * h}-{e}=$<<{w * h}-{e}={w * h - e}>>{w * h - e} is left.\n#### {w * h - e}"
        elif t == 2:
            p, d = rng.choice([40, 60, 80, 120, 150, 200]), rng.choice([10, 20, 25, 30])
            off = p * d // 100
            q = f"A jacket costs ${p}. The store offers a {d}% discount. How much does {n} pay for the jacket?"
            s = f"The discount is {p}*{d}/100=$<<{p}*{d}/100={off}>>{off}.\nSo {n} pays {p}-{off}=$<<{p}-{off}={p - off}>>{p - off}.\n#### {p - off}"
        elif t == 3:
            v, hrs = rng.randint(40, 70), rng.randint(2, 5)
            q = f"A train travels at {v} miles per hour for {hrs} hours. How many miles does it travel in total?"
            s = f"Distance = speed * time = {v}*{hrs}=<<{v}*{hrs}={v * hrs}>>{v * hrs} miles.\n#### {v * hrs}"
        elif t == 4:
            k, cost = rng.randint(3, 6), rng.randint(4, 9) * 12
            q = f"{n} and {k - 1} friends share a pizza order that costs ${cost}. If they split the cost equally, how much does each person pay?"
            s = f"There are {k} people.\nEach pays {cost}/{k}=$<<{cost}/{k}={cost / k:g}>>{cost / k:g}.\n#### {cost / k:g}"
        elif t == 5:
            age, diff, yrs = rng.randint(8, 15), rng.randint(20, 30), rng.randint(3, 10)
            q = f"{n} is {age} years old. Her mother is {diff} years older. How old will her mother be in {yrs} years?"
            s = f"Her mother is {age}+{diff}=<<{age}+{diff}={age + diff}>>{age + diff} now.\nIn {yrs} years she will be {age + diff}+{yrs}=<<{age + diff}+{yrs}={age + diff + yrs}>>{age + diff + yrs}.\n#### {age + diff + yrs}"
        else:
            per, weeks = rng.randint(5, 25), rng.randint(4, 12)
            goal = per * weeks + rng.randint(10, 50)
            q = f"{n} saves ${per} every week. After {weeks} weeks, how much more does {n} need to buy a bike that costs ${goal}?"
            s = f"{n} saves {per}*{weeks}=$<<{per}*{weeks}={per * weeks}>>{per * weeks}.\n{n} still needs {goal}-{per * weeks}=$<<{goal}-{per * weeks}={goal - per * weeks}>>{goal - per * weeks}.\n#### {goal - per * weeks}"
        items.append(Item(q, s, MATH))
    return records(task, items)


_MATH_SOLUTIONS = [
    (
        "Algebra",
        "If $x + 2y = 10$ and $x - y = 1$, what is the value of $x$?",
        "Subtracting the second equation from the first gives $3y = 9$, so $y = 3$. Then $x = 1 + y = \\boxed{4}$.",
    ),
    (
        "Algebra",
        "What is the sum of the roots of $x^2 - 5x + 6 = 0$?",
        "By Vieta's formulas the sum of the roots is $-(-5)/1 = \\boxed{5}$.",
    ),
    (
        "Number Theory",
        "How many positive divisors does $36$ have?",
        "Since $36 = 2^2 \\cdot 3^2$, it has $(2+1)(2+1) = \\boxed{9}$ positive divisors.",
    ),
    (
        "Counting & Probability",
        "Compute $\\dbinom{8}{3}$.",
        "$\\dbinom{8}{3} = \\dfrac{8 \\times 7 \\times 6}{3 \\times 2 \\times 1} = \\boxed{56}$.",
    ),
    (
        "Geometry",
        "Find the distance between the points $(1,2)$ and $(4,6)$.",
        "The distance is $\\sqrt{(4-1)^2 + (6-2)^2} = \\sqrt{9+16} = \\boxed{5}$.",
    ),
    (
        "Prealgebra",
        "Simplify $\\sqrt{50}$.",
        "We have $\\sqrt{50} = \\sqrt{25 \\cdot 2} = \\boxed{5\\sqrt{2}}$.",
    ),
    (
        "Number Theory",
        "What is the remainder when $2^{10}$ is divided by $7$?",
        "Since $2^3 = 8 \\equiv 1 \\pmod 7$, $2^{10} = (2^3)^3 \\cdot 2 \\equiv 2$. The remainder is $\\boxed{2}$.",
    ),
    (
        "Geometry",
        "The area of a circle is $49\\pi$ square units. What is the radius of the circle?",
        "From $\\pi r^2 = 49\\pi$ we get $r^2 = 49$, so $r = \\boxed{7}$.",
    ),
    (
        "Algebra",
        "Solve for $x$: $\\frac{x}{3} + 2 = 5$.",
        "Subtract 2 to get $\\frac{x}{3} = 3$, then multiply by 3: $x = \\boxed{9}$.",
    ),
    (
        "Prealgebra",
        "What is the least common multiple of $12$ and $18$?",
        "$12 = 2^2 \\cdot 3$ and $18 = 2 \\cdot 3^2$, so the LCM is $2^2 \\cdot 3^2 = \\boxed{36}$.",
    ),
    ("Intermediate Algebra", "Evaluate $\\log_2 64$.", "Since $2^6 = 64$, $\\log_2 64 = \\boxed{6}$."),
    (
        "Algebra",
        "What is the slope of the line passing through $(2,3)$ and $(6,11)$?",
        "The slope is $\\frac{11-3}{6-2} = \\frac{8}{4} = \\boxed{2}$.",
    ),
    (
        "Prealgebra",
        "What is $\\frac{2}{3} + \\frac{1}{4}$? Express your answer as a common fraction.",
        "With a common denominator of 12: $\\frac{8}{12} + \\frac{3}{12} = \\boxed{\\frac{11}{12}}$.",
    ),
]


def math_solutions(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "math_solutions",
        ["hendrycks-competition", "contest_problems_full"],
        ["Competition problems; the reference is a worked solution with the answer in \\boxed{}.", ""],
        "hendrycks/competition_math",
    )
    items = [
        Item(q, sol, MATH, {"level": f"Level {1 + i % 5}", "type": kind})
        for i, (kind, q, sol) in enumerate(_MATH_SOLUTIONS)
    ]
    return records(task, items)


_MATH_ANSWERS = [
    (
        "Convert the point $(0,3)$ in rectangular coordinates to polar coordinates. Enter your answer in the form $(r,\\theta),$ where $r > 0$ and $0 \\le \\theta < 2 \\pi.$",
        "\\left( 3, \\frac{\\pi}{2} \\right)",
    ),
    ("Find all real solutions to $x^2 = 9$. Enter all the solutions, separated by commas.", "3, -3"),
    ("Express $0.\\overline{3}$ as a common fraction.", "\\frac{1}{3}"),
    (
        "What is the domain of the function $f(x)=\\sqrt{x-2}$? Express your answer in interval notation.",
        "[2,\\infty)",
    ),
    ("Expand the product $(x+1)^2$.", "x^2+2x+1"),
    ("Compute $\\sin 30^\\circ$.", "\\frac{1}{2}"),
    ("Find the inverse of $f(x) = 2x + 3$.", "\\frac{x-3}{2}"),
    ("What is $\\sqrt{18}$ in simplest radical form?", "3\\sqrt{2}"),
    ("If $f(x)=x^3$, what is $f'(2)$?", "12"),
    ("For what values of $x$ is $x^2 - 4 < 0$? Express your answer in interval notation.", "(-2, 2)"),
    ("Compute $i^{6}$, where $i^2=-1$.", "-1"),
    ("What is the degree measure of an interior angle of a regular hexagon?", "120^\\circ"),
    ("Find the value of $k$ so that the line $y = kx + 1$ passes through $(3, 7)$.", "2"),
]


def math_answers(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "math_answers",
        ["math500", "hard-contest-answers", "precalc_eval"],
        [
            "",
            "Give only the final answer; it is compared in LaTeX.",
            "Contest problems (the 500-problem test split).",
        ],
        "HuggingFaceH4/MATH-500",
        answer_formats=("", "", "a LaTeX expression"),
    )
    subjects = ["Precalculus", "Algebra", "Number Theory", "Intermediate Algebra", "Geometry"]
    items = [
        Item(q, a, MATH, {"subject": subjects[i % 5], "level": 1 + i % 5, "unique_id": f"test/{i}.json"})
        for i, (q, a) in enumerate(_MATH_ANSWERS)
    ]
    return records(task, items)


def svamp(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "svamp",
        ["svamp-varied", "one_step_story_ops"],
        ["Simple word problems with variations. Answer with the value.", ""],
        "ChilleD/SVAMP",
    )
    items = []
    things = ["pencils", "marbles", "cookies", "stamps", "books", "shells", "balloons", "cards"]
    for i in range(12):
        a, b = rng.randint(10, 60), rng.randint(2, 9)
        x = things[i % len(things)]
        n1, n2 = NAMES[i], NAMES[(i + 5) % len(NAMES)]
        kind = i % 4
        if kind == 0:
            body, qn, eq, ans = (
                f"{n1} had {a} {x}. {n1} gave {b} {x} to {n2}.",
                f"How many {x} does {n1} have now?",
                f"( {a}.0 - {b}.0 )",
                a - b,
            )
        elif kind == 1:
            body, qn, eq, ans = (
                f"There are {b} boxes of {x}. Each box has {a} {x}.",
                f"How many {x} are there in all?",
                f"( {b}.0 * {a}.0 )",
                a * b,
            )
        elif kind == 2:
            body, qn, eq, ans = (
                f"{n1} has {a * b} {x} and wants to put them equally into {b} bags.",
                f"How many {x} will be in each bag?",
                f"( {a * b}.0 / {b}.0 )",
                a,
            )
        else:
            body, qn, eq, ans = (
                f"{n1} found {a} {x} on Monday and {b} more {x} on Tuesday than on Monday.",
                f"How many {x} did {n1} find on Tuesday?",
                f"( {a}.0 + {b}.0 )",
                a + b,
            )
        items.append(
            Item(
                f"{body} {qn}",
                float(ans),
                MATH,
                {
                    "Body": body,
                    "Question": qn,
                    "Equation": eq,
                    "Type": ["Subtraction", "Multiplication", "Common-Division", "Addition"][kind],
                },
            )
        )
    return records(task, items)


def _aime_items() -> list[tuple[str, int]]:
    return [
        (
            "Find the number of positive integers less than $1000$ that are divisible by $7$ but not by $11$.",
            999 // 7 - 999 // 77,
        ),
        ("Find the remainder when $3^{100}$ is divided by $1000$.", pow(3, 100, 1000)),
        ("Find the number of ordered pairs of positive integers $(a,b)$ such that $a+b=50$.", 49),
        ("Find the sum of all positive divisors of $100$.", sum(d for d in range(1, 101) if 100 % d == 0)),
        ("Let $N$ be the number of distinct arrangements of the letters of the word BANANA. Find $N$.", 60),
        ("Find the largest prime factor of $9991$.", 103),
        ("Find the sum of the digits of $2^{20}$.", sum(int(c) for c in str(2**20))),
        ("Find the number of $3$-element subsets of $\\{1,2,\\ldots,10\\}$.", math.comb(10, 3)),
        ("Find the last three digits of $7^{2024}$.", pow(7, 2024, 1000)),
        ("Three consecutive odd integers have sum $159$. Find the largest of them.", 55),
        ("Find the number of trailing zeros of $100!$.", 24),
        ("Find the smallest positive integer $n$ such that $n^2$ ends in the digits $44$ and $n > 12$.", 38),
    ]


def aime(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "aime",
        ["aime_2024_style", "olympiad-integer-answers"],
        ["Olympiad problems whose answer is an integer from 0 to 999.", ""],
        "AI-MO/aimo-validation-aime",
    )
    items = [
        Item(q, str(a), MATH, {"url": f"https://artofproblemsolving.com/wiki/index.php/Problem_{i + 1}"})
        for i, (q, a) in enumerate(_aime_items())
    ]
    return records(task, items)


def finqa(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "finqa",
        ["financial_report_numeric", "earnings-table-questions"],
        ["Questions over a company's financial tables; compute the requested figure.", ""],
        "ibm/finqa",
    )
    metrics = [
        "net revenue",
        "operating income",
        "total assets",
        "cash and equivalents",
        "capital expenditures",
        "research and development expense",
    ]
    items = []
    for i in range(11):
        m = metrics[i % len(metrics)]
        y1 = 2015 + i % 6
        v1 = rng.randint(800, 4000)
        v2 = v1 + rng.choice([-1, 1]) * rng.randint(40, 700)
        table = f"| ( in millions ) | {y1} | {y1 + 1} |\n| {m} | ${v1:,} | ${v2:,} |"
        if i % 3 == 0:
            q = f"what was the percentage change in {m} from {y1} to {y1 + 1}?"
            ans = f"{(v2 - v1) / v1 * 100:.1f}%"
        elif i % 3 == 1:
            q = f"what was the change in {m} between {y1} and {y1 + 1} , in millions?"
            ans = str(v2 - v1)
        else:
            q = f"what is the average {m} for {y1} and {y1 + 1} , in millions?"
            ans = f"{(v1 + v2) / 2:g}"
        pre = f"the following table summarizes our {m} for the years ended december 31 :"
        items.append(
            Item(
                f"{pre}\n{table}\nQuestion: {q}",
                ans,
                MATH,
                {"program": f"subtract({v2}, {v1})" if i % 3 == 1 else "", "table_rows": 2},
            )
        )
    return records(task, items)


def probability(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "probability_fractions",
        ["dice-and-coins", "counting_chance_problems"],
        ["", "Give the probability as a common fraction in lowest terms."],
        "written-for-rlar (MATH counting & probability style)",
    )
    cases = [
        ("Two fair six-sided dice are rolled. What is the probability that the sum is 7?", Fraction(6, 36)),
        (
            "A fair coin is flipped 3 times. What is the probability of getting exactly two heads?",
            Fraction(3, 8),
        ),
        (
            "A card is drawn from a standard 52-card deck. What is the probability it is a heart or a king?",
            Fraction(16, 52),
        ),
        (
            "Two fair coins are flipped. What is the probability that at least one shows tails?",
            Fraction(3, 4),
        ),
        (
            "A bag has 4 red and 6 blue marbles. Two are drawn without replacement. What is the probability both are red?",
            Fraction(4 * 3, 10 * 9),
        ),
        (
            "A number is chosen at random from 1 to 20. What is the probability that it is prime?",
            Fraction(8, 20),
        ),
        (
            "Three fair six-sided dice are rolled. What is the probability that all three show the same number?",
            Fraction(6, 216),
        ),
        (
            "A fair coin is flipped 4 times. What is the probability of getting at least one head?",
            Fraction(15, 16),
        ),
        (
            "A letter is chosen at random from the word PROBABILITY. What is the probability that it is a B?",
            Fraction(2, 11),
        ),
        (
            "Two cards are drawn from a standard deck without replacement. What is the probability that both are aces?",
            Fraction(4 * 3, 52 * 51),
        ),
        (
            "A spinner has 8 equal sections numbered 1 through 8. What is the probability of spinning a multiple of 3?",
            Fraction(2, 8),
        ),
    ]
    return records(task, [Item(q, f"{p.numerator}/{p.denominator}", MATH) for q, p in cases])


ALL = [gsm8k, math_solutions, math_answers, svamp, aime, finqa, probability]
