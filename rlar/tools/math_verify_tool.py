"""The ``math_verify`` tool: is the response's final answer mathematically equal to the reference?

Reads final answers the same way on references and responses (``rlar.tools.math_answer``: characters of any script
read by ``rlar.tools.answer_chars``, numbers, the percent rule, choice letters, hedging), then the notations of
``rlar.tools.math_notations`` (clock times, bases, residues, angles, ratios, money, vectors, polar complex numbers),
the canonical forms of ``rlar.tools.math_forms`` (sets of reals from inequalities and intervals, solution lists,
named components, ``\\pm``, repeating decimals, matrices with a scalar factor, refusal of several answers where one
is asked), and math-verify (``parse`` + ``verify(gold, answer)``; the order matters) for the rest.

Unknown means abstain: a final answer (or a reference) that holds a character no rule reads (an emoji, a circled
number, a bidirectional override) abstains with the character named, and so does an answer that reads two ways,
one right and one wrong (``math_notations.Unreadable``); neither is ever scored 1.

With a query that lists lettered options ("(A) 54 (B) 56 ..."), a letter answers for its option's value and a
value for its option's letter.

Time limits use ``signal.alarm``, which only works in a process's main thread: here they are enabled when the tool
runs in the main thread (as in the executor's worker process) and disabled otherwise, where the caller must bound
the time (the executor kills the worker process).
"""

from __future__ import annotations

import cmath
import dataclasses
import logging
import math
import re
import threading
from collections.abc import Callable
from fractions import Fraction
from typing import Any, ClassVar

from rlar.tools import (
    calendar_answers,
    math_answer,
    math_forms,
    math_notations,
    solution_families,
    structured,
)
from rlar.tools.answer_chars import ambiguous_dots, read_chars, unknown_chars
from rlar.tools.answer_text import chosen_letters, explicit_statement, lettered_options, statements
from rlar.tools.base import RewardTool, ToolInput, ToolKind, ToolResult, ToolSpec
from rlar.tools.rules import reference_strings
from rlar.tools.written_numbers import word_value

# math_verify and sympy are imported where used: heavy and optional (the CLI starts without them).

__all__ = ["MathVerifyTool"]


def _quiet_timeout_notice(record: logging.LogRecord) -> bool:
    """Drop math-verify's notice that its own timeout is off: ``MathVerifyTool._forms`` runs the library under
    one time limit of its own (and off the main thread the caller bounds the time, see the module doc)."""
    return not str(record.msg).startswith("Timeout is disabled")


class MathVerifyTool(RewardTool):
    """1.0 if the response's final answer is mathematically equivalent to the reference (``math_answer`` rules,
    math-verify for expressions)."""

    default_spec: ClassVar[ToolSpec] = ToolSpec(
        name="math_verify",
        kind=ToolKind.RULE,
        description=(
            "Math answer equivalence: takes the response's final answer (the last \\boxed{}, '#### X', 'the"
            " answer is X', else the last sentence with a value) and the reference's (after GSM8K's '####')"
            " and checks they are equal: numbers exactly after normalising thousands separators, currency,"
            " units, degrees, number words, fractions and mixed numbers, scientific notation; X% equals X and"
            " X/100; multiple-choice letters; expressions, tuples, sets, intervals, matrices and equations"
            " with math-verify. Hedged answers ('3 or 4') and lists of candidates score 0. 1 if equivalent,"
            " else 0. Abstains if the reference cannot be read."
        ),
        task_types=["math", "arithmetic", "gsm8k", "competition_math", "word_problem", "multiple_choice"],
        answer_formats=["number", "latex", "boxed", "expression", "fraction", "choice_letter"],
        params={
            "reference_marker": "####",
            "float_rounding": 6,
            "numeric_precision": 15,
            "strict": True,
            "verify_timeout_s": 5,
        },
    )

    def __init__(self, spec: ToolSpec, **resources: Any) -> None:
        super().__init__(spec, **resources)
        from math_verify import ExprExtractionConfig, LatexExtractionConfig

        self._latex_cfg = [LatexExtractionConfig(boxed_match_priority=0), ExprExtractionConfig()]
        for name in ("math_verify.grader", "math_verify.parser"):
            logging.getLogger(name).addFilter(_quiet_timeout_notice)

    def _timeout(self) -> int | None:
        # signal.alarm only works in the main thread; elsewhere the caller must bound time (see module doc).
        if threading.current_thread() is not threading.main_thread():
            return None
        return max(1, int(self.params.get("verify_timeout_s", 5)))

    def _parse(self, text: str, wrap: bool) -> list[Any]:
        from math_verify import parse

        timeout = self._timeout()
        if wrap and "$" not in text:
            found = parse(f"${text}$", self._latex_cfg, parsing_timeout=timeout)  # type: ignore[arg-type]
            if found:
                return list(found)
        return list(parse(text, self._latex_cfg, parsing_timeout=timeout))  # type: ignore[arg-type]

    def _parse_unbounded(self, text: str) -> list[Any]:
        """``text`` parsed, wrapped in dollar signs when it has none, with no time limit of its own: for callers
        that run under :meth:`_bounded`."""
        from math_verify import parse

        wrapped = text if "$" in text else f"${text}$"
        return list(parse(wrapped, self._latex_cfg, parsing_timeout=None))  # type: ignore[arg-type]

    def _verify(self, gold: list[Any], answer: list[Any]) -> bool:
        from math_verify import verify

        p = self.params
        return bool(
            verify(
                gold,
                answer,
                float_rounding=int(p.get("float_rounding", 6)),
                numeric_precision=int(p.get("numeric_precision", 15)),
                strict=bool(p.get("strict", True)),
                timeout_seconds=self._timeout(),
            )
        )

    def _forms(self, gold: str, answer: str, hedged: str = "") -> tuple[bool, str] | None:
        """The canonical-form layer (``rlar.tools.math_forms``): (equivalent, reason), or None to leave the pair
        to the library. ``hedged``: why the response offers several answers, refused unless the reference is a
        list or a set of reals itself. Parsing, sympy work and element comparisons all run under one time limit."""
        from math_verify import verify

        p = self.params
        parse_one = self._parse_unbounded

        def equal(x: Any, y: Any) -> bool:
            return bool(
                verify(
                    [x],
                    [y],
                    float_rounding=int(p.get("float_rounding", 6)),
                    numeric_precision=int(p.get("numeric_precision", 15)),
                    strict=bool(p.get("strict", True)),
                    timeout_seconds=None,
                )
            )

        def decide() -> tuple[bool, str] | None:
            g = math_forms.form_of(gold, parse_one)
            a = math_forms.form_of(answer, parse_one) if g is not None else None
            # "or" is notation in a set of reals ("x < -2 or x > 3") and in a list of solutions, not a hedge.
            if g is not None and hedged and g.kind not in ("values", "set"):
                return False, f"hedged: {hedged}"
            if g is None or a is None:
                return None
            same = math_forms.compare(g, a, equal)
            if same is None:
                return None
            return same, f"{'equivalent' if same else 'not equivalent'} as {g.kind} / {a.kind}: {answer[:80]}"

        try:
            return self._bounded(decide)
        except Exception:  # sympy raises many kinds on odd input; the library then judges the pair
            return None

    def _evaluate(self, text: str) -> complex | None:
        """One LaTeX expression as a complex number (``i`` read as the imaginary unit), None when it is not one
        number. Called under the time limit of ``_notations``."""

        import sympy

        try:
            found = [p for p in self._parse_unbounded(text) if not isinstance(p, str)]
            if not found or not isinstance(found[0], sympy.Expr):
                return None
            obj = found[0].subs({s: sympy.I for s in found[0].free_symbols if getattr(s, "name", "") == "i"})
            if obj.free_symbols:
                return None
            value = complex(obj.evalf(30))
        except Exception:  # sympy raises many kinds on odd input: then it is not one number
            return None
        return value if cmath.isfinite(value) else None

    def _notations(self, gold: str, answer: str, hedged: str) -> tuple[bool, str] | None:
        """The notation layer (``rlar.tools.math_notations``) under one time limit: (equivalent, reason), None to
        go on; ``math_notations.Unreadable`` passes through (the tool abstains)."""
        return self._bounded(math_notations.compare, gold, answer, self._evaluate, hedged)

    def _bounded(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` under the tool's one time limit (``verify_timeout_s``); None when it runs out."""
        from math_verify.errors import TimeoutException
        from math_verify.utils import timeout

        try:
            return timeout(self._timeout())(fn)(*args)
        except TimeoutException:
            return None

    def _families(self, gold: str, answer: str) -> tuple[bool, str] | None:
        """A reference that is a family of solutions — over an integer parameter, or a general solution with
        arbitrary constants (``rlar.tools.solution_families``) — against the answer's mathematics."""
        span = math_forms.prepare(math_forms.math_span(math_forms.named_functions(answer)))
        parse_one = self._parse_unbounded
        try:
            return self._bounded(
                solution_families.compare_periodic_families, gold, answer, parse_one
            ) or self._bounded(
                solution_families.compare_ode_solutions, math_forms.prepare(gold), span, parse_one
            )
        except Exception:  # sympy raises many kinds on odd input: the rules after judge the pair
            return None

    def _antiderivatives(self, gold: str, answer: str) -> tuple[bool, str] | None:
        """A reference that is an antiderivative with its constant ("\\frac{x^3}{3} + C") against an answer that
        is one ("\\frac{1}{3}x^3 + K", "\\ln|2x| + C"): equal when their derivatives are, for they may differ by a
        constant. None when either has no constant of integration."""
        constant = re.compile(r"\s*\+\s*(?:C|K|c|k|C_\{?1\}?|\\text\{const\})\s*\.?\s*\$*\s*$")
        span = math_forms.math_span(math_forms.named_functions(answer))
        span = span.rsplit("=", 1)[-1]
        if not constant.search(gold) or not constant.search(span):
            return None

        def decide() -> tuple[bool, str] | None:
            import sympy

            g = self._parse(math_forms.prepare(constant.sub("", gold)), wrap=True)
            a = self._parse(math_forms.prepare(constant.sub("", span)), wrap=True)
            g_expr = next((x for x in g if isinstance(x, sympy.Expr)), None)
            a_expr = next((x for x in a if isinstance(x, sympy.Expr)), None)
            if g_expr is None or a_expr is None:
                return None
            free = (g_expr.free_symbols | a_expr.free_symbols) - {sympy.Symbol("C"), sympy.Symbol("K")}
            if len(free) != 1:
                return None
            var = free.pop()
            same = sympy.simplify(sympy.diff(g_expr - a_expr, var)) == 0
            return bool(same), f"{'the same' if same else 'another'} antiderivative (up to a constant)"

        try:
            return self._bounded(decide)
        except Exception:  # sympy raises many kinds on odd input: the library then judges the pair
            return None

    @staticmethod
    def _undone_arithmetic(answer: str, query: str) -> Fraction | None:
        """The value of arithmetic between plain numbers that the answer ends with, left undone ("7 × 8 + 2");
        None when there is none, or when the query itself holds that arithmetic (an echoed "What is 12 + 7?"
        states no answer)."""
        expression = math_answer.arithmetic(answer)
        if expression is None:
            return None
        if query and expression in math_answer.arithmetic_text(query):
            return None
        return math_answer.arithmetic_value(expression)

    def _at_precision(self, gold: str, answer: str) -> tuple[bool, str] | None:
        """A reference written as a rounded decimal (TheoremQA's ``0.7854``: two or more decimals, three or more
        significant digits) against an exact form (``\\frac{\\pi}{4}``, ``\\sqrt{3}``, ``\\ln 10``): the form's
        value rounded to the reference's decimals. None when the reference is no such decimal or the form is not
        one real number."""
        m = re.fullmatch(r"\s*(-?)(\d*)\.(\d{2,})\s*", gold)
        if m is None or len((m.group(2) + m.group(3)).lstrip("0")) < 3:
            return None
        value = self._bounded(self._evaluate, math_forms.prepare(math_forms.math_span(answer)))
        if value is None or abs(value.imag) > 1e-12:
            return None
        places = len(m.group(3))
        same = round(value.real, places) == round(float(gold), places)
        return (
            same,
            f"{'equal' if same else 'not equal'} at the reference's {places} decimals: {value.real:.{places + 2}f}",
        )

    def _option_answer(
        self, gold: str, answer: math_answer.FinalAnswer, options: dict[str, str]
    ) -> math_answer.FinalAnswer:
        """With the query's lettered options: an answer that is only a letter, where the reference is a value, is
        read as that option's value ("B" -> "56")."""
        letter = math_answer.choice_letter(answer.text)
        bare = re.fullmatch(r"\s*(?:option\s+|choice\s+)?\(?[A-Ja-j]\)?[.)]?\s*", answer.text, re.IGNORECASE)
        if options and letter in options and bare and math_answer.choice_letter(gold, reference=True) is None:
            return math_answer.FinalAnswer(options[letter], answer.boxed, answer.hedged)
        return answer

    def _chosen_option(self, answer: math_answer.FinalAnswer, options: dict[str, str]) -> str | None:
        """The letter of the query's option whose value the answer states, where it names no letter."""
        given = math_answer.scalar_value(answer.text) or math_answer.stated_value(answer.text, answer.text)
        for letter, text in options.items():
            value = math_answer.scalar_value(text)
            if given is not None and value is not None and math_answer.same_number(value, given):
                return letter
            if given is None and _plain(text) and _plain(text) == _plain(answer.text):
                return letter
        return None

    @staticmethod
    def _coordinate(
        number: tuple[Fraction, bool], coordinates: tuple[Fraction, ...], axis: str
    ) -> tuple[bool, str]:
        """A point against a reference that is one number: an intercept named by its axis is the coordinate on
        that axis ("crosses the x-axis at (3, 0)" is 3, "the y-intercept (0, -4)" is -4); any other point reads
        two ways (which coordinate was asked for?)."""
        if len(coordinates) == 2 and axis:
            on_axis, other = (
                (coordinates[0], coordinates[1]) if axis == "x" else (coordinates[1], coordinates[0])
            )
            if other == 0:
                same = math_answer.same_number(number, (on_axis, False))
                return same, f"{'equal' if same else 'not equal'}: the {axis}-intercept {float(on_axis):g}"
        raise math_notations.Unreadable("the answer is a point, the reference one number")

    def _judge(
        self, gold: str, raw_ref: str, answer: math_answer.FinalAnswer, response: str, query: str = ""
    ) -> tuple[bool, str]:
        """(equivalent, reason) for one acceptable reference; ``math_notations.Unreadable`` when the answer reads
        two ways."""
        # The options the query lists, else those the response copies out before answering.
        options = (lettered_options(query) if query else {}) or lettered_options(response)
        answer = self._option_answer(gold, answer, options)
        if (
            not math_answer.has_relation(gold)
            and (plain := math_answer.without_domain(answer.text)) != answer.text
        ):
            answer = dataclasses.replace(answer, text=plain)  # "x + 2 (for x \\neq 2)" against "x + 2"
        if not answer.hedged and (plain := math_answer.without_aside(answer.text)) != answer.text:
            answer = dataclasses.replace(answer, text=plain)  # "$x^2$ (check: ... same as $2^x$)"
        if why := math_answer.comma_reads_two_ways(answer.text):
            raise math_notations.Unreadable(why)
        if math_answer.states_an_operation(answer.text):
            raise math_notations.Unreadable("the answer states an operation on a number, not a number")
        if answer.parts:  # "(a) 3 and (b) 7": each part against the reference's item in the same place
            golds = [
                g.strip().strip("$").strip() for g in math_forms.split_top(gold, math_forms.ITEM_SEPARATOR)
            ]
            if len(golds) != len(answer.parts):
                return False, f"{len(answer.parts)} parts answered where the reference has {len(golds)}"
            for k, (g, part) in enumerate(zip(golds, answer.parts, strict=True), 1):
                same, reason = self._judge(g, g, math_answer.FinalAnswer(part), part, query)
                if not same:
                    return False, f"part {k}: {reason}"
            return True, f"each of the {len(golds)} parts equal"
        letter_set = math_answer.choice_letters(gold, reference=True)
        if letter_set is not None:  # several correct options (AC): the answer must choose exactly those
            chosen_set = (
                math_answer.choice_letters(answer.text)
                or math_answer.choice_letters(
                    _last_sentence(response)
                )  # "Therefore the correct statements are A and C."
                or (frozenset(c) if (c := math_answer.choice_letter(answer.text)) else None)
            )
            same = chosen_set == letter_set
            return (
                same,
                f"chose {''.join(sorted(chosen_set))}" if chosen_set else "no option letters in the answer",
            )
        letter = math_answer.choice_letter(gold, reference=True)
        if letter is None and re.fullmatch(r"\s*\(?[a-e]\)?\s*", gold):
            # MathQA's lower-case letter: a choice when the answer names one as a choice ("c ) 15", "(c)"); a
            # bare letter may be a variable or e, left to the library.
            # So is it when the query or the response lists lettered options ("options : a ) 120 , b ) 150").
            named = math_answer.choice_letter(answer.text)
            upper = gold.strip().strip("()").upper()
            if (named is not None and not re.fullmatch(r"\s*[a-eA-E]\s*", answer.text)) or upper in options:
                letter = upper
        if letter is not None:
            if answer.hedged:
                return False, f"hedged: {answer.hedged}"
            letters = chosen_letters(response)
            if len(letters) > 1:
                return False, f"two different options chosen: {', '.join(letters)}"
            # The stated answer's letter, else the letter the response opens with ("C. 42", "(B) because ..."),
            # else the option whose value the answer states.
            chosen = math_answer.choice_letter(answer.text) or math_answer.choice_letter(response.strip())
            if chosen is None and options:
                chosen = self._chosen_option(answer, options)
            return chosen == letter, f"chose {chosen}" if chosen else "no choice letter in the answer"
        decided = _temperatures(gold, answer.text)
        if decided is not None:
            return decided
        decided = _quantities(gold, answer)
        if decided is not None:
            return decided
        decided = self._notations(gold, answer.text, answer.hedged)
        if decided is not None:
            return decided
        number = math_answer.scalar_value(gold)
        roman = (
            math_answer.roman_value(gold) if number is None and re.fullmatch(r"[\\\w{}\s.]*", gold) else None
        )
        if roman is not None:  # a Roman numeral reference (\text{XIV}) is its number
            number = (Fraction(roman), False)
        if number is not None and math_answer.scalar_value(answer.text) is None:
            said = math_answer.roman_value(re.sub(r"[*_.!\s]+$", "", answer.text))
            if said is not None and not math_answer.stated_value(answer.text, response):
                same = said == number[0]
                return same, f"{'equal' if same else 'not equal'} as a Roman numeral: {said}"
        if number is not None:
            if answer.hedged:
                return False, f"hedged: {answer.hedged}"
            if re.search(r"(?:\\pm|\\mp|±|∓)\s*\\?(?:[dt]?frac\{)?[1-9]", answer.text):
                return False, "two values (±) where the reference is one"
            given = math_answer.scalar_value(answer.text)
            if conflict := _dimension_conflict(answer.text, response):
                return False, conflict
            if given is None and (word := word_value(answer.text)) is not None:
                given = (word, False)  # "none", "half the original"
            # "2^{3}", "5!", "2\\sqrt{3}": a number written in a form the library evaluates (below).
            written = given is None and math_answer.value_form(math_forms.math_span(answer.text))
            if given is None and (undone := self._undone_arithmetic(answer.text, query)) is not None:
                same = undone == number[0]
                return same, f"{'equal' if same else 'not equal'} when worked out: {float(undone):g}"
            if given is None and not answer.boxed and not written:
                span = math_forms.math_span(answer.text)
                if span != answer.text:  # "$x = 6$ and $x = -1$": a list of solutions is judged as one
                    decided = self._forms(math_forms.prepare(gold), math_forms.prepare(span))
                    if decided is not None:
                        return decided
                totals = structured.compound_totals(answer.text)
                if totals is not None:  # "4 hours 30 minutes": 4.5 hours or 270 minutes, never 30
                    same = any(math.isclose(float(number[0]), t, rel_tol=1e-9) for t, _ in totals)
                    shown = " or ".join(f"{t:g} {u}" for t, u in totals)
                    return same, f"{'equal' if same else 'not equal'}: {shown}"
                point = math_answer.stated_point(answer.text)
                if point is not None:  # a point where the reference is one number
                    return self._coordinate(number, *point)
                given = math_answer.stated_value(answer.text, response)
            if (
                given is not None
                and answer.boxed
                and (bang := re.fullmatch(r"\s*(\d{1,2})!\s*", answer.text))
            ):
                given = (Fraction(math.factorial(int(bang.group(1)))), False)  # \boxed{3!}: a factorial
            elif given is not None and (bang := re.search(r"(?<![\d!])(\d{1,2})!\s*$", answer.text)):
                # "5!" is a factorial or an exclamation: when the two readings disagree on the verdict, abstain.
                factorial = (Fraction(math.factorial(int(bang.group(1)))), False)
                if math_answer.same_number(number, factorial) != math_answer.same_number(number, given):
                    raise math_notations.Unreadable(
                        f"{bang.group(0).strip()} is a factorial or an exclamation"
                    )
            if given is None and written and (decided := self._at_precision(gold, answer.text)) is not None:
                return decided
            if given is not None and number[0] < 0 < given[0] and _SIGN_IN_WORDS.search(answer.text):
                given = (-given[0], given[1])  # "a loss of $50" for -50
            if given is not None:
                same = math_answer.same_number(number, given)
                if not same and any(
                    math_answer.same_number(number, (c, False))
                    for c in math_answer.condition_values(answer.text)
                ):
                    # "The minimum is 5 when x = 2" against 2: the question may ask where, or what the minimum is.
                    raise math_notations.Unreadable(
                        "the reference is the value a condition gives, not the value the answer states"
                    )
                if same and (why := math_answer.not_one_value(answer.text, given[0])):
                    raise math_notations.Unreadable(why)  # "More than 3 apples." against 3
                return (
                    same,
                    f"{'equal' if same else 'not equal'}: {float(given[0]):g}{'%' if given[1] else ''}",
                )
        decided = self._families(gold, answer.text)
        if decided is not None:
            return decided
        decided = self._antiderivatives(gold, answer.text)
        if decided is not None:
            return decided
        # The answer as read, else the response's last line ("Der 1. Januar fällt auf einen Samstag." is cut at
        # its ordinal's full stop).
        last_line = response.strip().rsplit("\n", 1)[-1]
        decided = (
            calendar_answers.compare_named_days(gold, answer.text)
            or calendar_answers.compare_dates(gold, answer.text)
            or calendar_answers.compare_named_days(gold, last_line)
        )
        if decided is not None:
            return decided
        prose = math_answer.is_prose(gold)
        gold_text, answer_text = math_forms.prepare(gold), math_forms.prepare(answer.text)
        if not prose:
            answer_span = math_forms.prepare(math_forms.math_span(math_forms.named_functions(answer.text)))
            decided = self._forms(gold_text, answer_span, answer.hedged)
            if decided is not None:
                return decided
        gold_parsed = self._parse(gold_text, wrap=True) if not prose else []
        if not gold_parsed:  # what the library alone would do with the raw texts
            gold_parsed, answer_parsed = self._parse(raw_ref, wrap=False), self._parse(response, wrap=False)
        else:
            # A sentence's mathematics ("The expansion is x^2 + 2x + 1" -> x^2 + 2x + 1), else the answer as written.
            span = math_forms.prepare(math_forms.math_span(math_forms.named_functions(answer.text)))
            stated = "$" not in answer.text and span != answer_text and not math_answer.is_prose(span)
            answer_parsed = (self._parse(span, wrap=True) if stated else []) or self._parse(
                answer_text, wrap=True
            )
        if not gold_parsed:
            raise ValueError("reference not parseable as math")
        if not answer_parsed:
            return False, "no parseable answer"
        same = self._verify(gold_parsed, answer_parsed)
        return same, f"{'equivalent' if same else 'not equivalent'}: {str(answer_parsed[-1])[:80]}"

    def _truth_value(self, gold: bool, response: str) -> ToolResult:
        """A reference that is a truth value (TheoremQA's ``True``/``False``, yes/no): the truth value the response
        states — its explicit answer ("Answer: False", ``\\boxed{True}``, a bold line), else its last sentence
        that says true, false, yes or no. Two different ones, or one under a negation ("not true"), read two ways:
        abstain."""
        explicit = explicit_statement(response)
        span = explicit if explicit and _TRUTH_IN_TEXT.search(explicit) else None
        if span is None:
            sentences = [
                x for x in re.split(r"(?<=[.!?])\s+|\n+", read_chars(response, latex=False)) if x.strip()
            ]
            span = next((x for x in reversed(sentences) if _TRUTH_IN_TEXT.search(x)), None)
        if span is None:
            return self.ok(0.0, "no truth value stated")
        said = {_TRUTH_WORDS[w.lower()] for w in _TRUTH_IN_TEXT.findall(span)}
        if len(said) > 1 or _NEGATED_TRUTH.search(span):
            return ToolResult.abstain(f"the truth value reads two ways: {span.strip()[:120]}")
        stated = said.pop()
        return self.ok(
            1.0 if stated == gold else 0.0,
            f"states {stated}, the reference is {gold}",
            extracted=span.strip()[:200],
        )

    def _statements(self, gold: frozenset[int], response: str) -> ToolResult:
        """A reference that names numbered statements (GAOKAO's ①③): the response must conclude exactly those."""
        chosen = math_answer.chosen_statements(response)
        if chosen is None:
            return self.ok(0.0, "no numbered statements chosen")
        names = ", ".join(str(n) for n in sorted(chosen))
        return self.ok(1.0 if chosen == gold else 0.0, f"chose statements {names}")

    async def _score(self, inp: ToolInput) -> ToolResult:
        if not ambiguous_dots(inp.response):
            return await self._score_read(inp)
        # "2·75": a British decimal point or a product. Both readings are scored; they must agree.
        readings = []
        for sign in (".", "×"):
            response = re.sub(r"(?<=\d)·(?=\d)", sign, inp.response)
            readings.append(await self._score_read(dataclasses.replace(inp, response=response)))
        decimal, product = readings
        if decimal.ok and product.ok and decimal.score == product.score:
            return product
        return ToolResult.abstain(
            "a middle dot between digits reads as a decimal point or as a product, and the two readings score "
            f"differently ({decimal.status} {decimal.score} against {product.status} {product.score})"
        )

    async def _score_read(self, inp: ToolInput) -> ToolResult:
        refs = reference_strings(inp.reference)
        if not refs:
            return ToolResult.abstain("no reference")
        marker = str(self.params.get("reference_marker") or "")
        truths = {
            _TRUTH_WORDS.get(math_answer.gold_answer(r, marker).strip().strip(".").lower()) for r in refs
        }
        if len(truths) == 1 and None not in truths:
            return self._truth_value(truths.pop() is True, inp.response)
        statements_named = [math_answer.circled_choices(math_answer.gold_answer(r, marker)) for r in refs]
        if statements_named[0] is not None and all(x == statements_named[0] for x in statements_named):
            return self._statements(statements_named[0], inp.response)
        answer = math_answer.final_answer(inp.response)
        if answer is None:
            # No number or letter stated: only a notation that needs none ("noon") can still be read.
            text = read_chars(inp.response).strip()
            if unknown := unknown_chars(text):
                return ToolResult.abstain(
                    f"no answer read; the response holds characters no rule reads: {', '.join(unknown)}"
                )
            last = _last_sentence(text)
            for ref in refs:
                gold = math_answer.gold_answer(ref, marker)
                letter_set = math_answer.choice_letters(gold, reference=True)
                if letter_set is not None and (chosen := math_answer.choice_letters(last)) is not None:
                    return self.ok(
                        1.0 if chosen == letter_set else 0.0,
                        f"chose {''.join(sorted(chosen))}",
                        matched=ref[:200],
                    )
                if re.fullmatch(
                    r"\s*(?:\\emptyset|\\varnothing|\\\{\s*\\\}|\{\s*\}|∅)\s*", gold
                ) and _NO_SOLUTION.search(text):
                    return self.ok(1.0, "states that there is no solution (the empty set)", matched=ref[:200])
                # A Roman numeral is the only value stated ("The missing page is **XL**.").
                numeral = math_answer.roman_value(re.sub(r"[*_.!\s]+$", "", last))
                number = math_answer.scalar_value(gold)
                if numeral is not None and number is not None:
                    same = numeral == number[0]
                    return self.ok(
                        1.0 if same else 0.0, f"states the Roman numeral {numeral}", matched=ref[:200]
                    )
                try:
                    decided = self._notations(gold, text, "") if text else None
                except math_notations.Unreadable:
                    decided = None
                if decided is not None and decided[0]:
                    return self.ok(1.0, decided[1][:300], extracted=text[:200], matched=ref[:200])
                # A letter asked for and the option's text stated ("The closest planet is Mercury.").
                options = lettered_options(inp.query) if inp.query else {}
                letter = math_answer.choice_letter(gold, reference=True)
                if letter and options and len(chosen_letters(inp.response)) <= 1:
                    said = {_plain(s) for s in statements(inp.response)}
                    stated = [k for k, option in options.items() if _plain(option) in said]
                    if stated == [letter]:
                        return self.ok(1.0, f"states option {letter}'s text", matched=ref[:200])
            return self.ok(0.0, "no answer found")
        unknown = unknown_chars(answer.text)
        if unknown:
            return ToolResult.abstain(
                f"the answer holds characters no rule reads: {', '.join(unknown)}",
                extracted=answer.text[:200],
            )
        unreadable = 0
        reason = ""
        for ref in refs:
            gold = math_answer.gold_answer(ref, marker)
            if unknown := unknown_chars(gold):
                return ToolResult.abstain(
                    f"the reference holds characters no rule reads: {', '.join(unknown)}"
                )
            try:
                same, reason = self._judge(gold, ref, answer, inp.response, inp.query)
            except math_notations.Unreadable as exc:
                return ToolResult.abstain(
                    f"the answer reads two ways: {exc.reason}", extracted=answer.text[:200]
                )
            except ValueError:
                unreadable += 1
                continue
            if same:
                return self.ok(1.0, reason[:300], extracted=answer.text[:200], matched=ref[:200])
        if unreadable == len(refs):
            return ToolResult.abstain("reference not parseable as math", reference=str(refs)[:200])
        return self.ok(0.0, reason[:300], extracted=answer.text[:200])


_DIMENSIONLESS = (0, 0, 0, 0, 0, 0)


_LATEX_UNIT_SIGNS = {"\\Omega": "Ω", "\\mu": "μ", "\\times": " × ", "\\cdot": "·"}


def _unit_text(text: str) -> str:
    """LaTeX units as words: ``36 \\text{ cm}^2`` -> ``36 cm^2``, ``2000\\,\\mathrm{m}`` -> ``2000 m``."""
    s = re.sub(
        r"\\(?:Omega|mu|times|cdot)(?![A-Za-z])\s*", lambda m: _LATEX_UNIT_SIGNS[m.group(0).strip()], text
    )
    s = re.sub(r"\\(?:text|mathrm|mbox|textrm|operatorname)\s*\{([^{}]*)\}", r" \1", s)
    s = re.sub(r"(\d)\s*\(\s*([A-Za-z][A-Za-z ]*)\)", r"\1 \2", s)  # ASDiv's "2300 (grams)"
    # A unit in brackets after the name of the quantity, as tables and engineers write it: "v [km/h] = 12",
    # "P (kW) = 1.5" is 12 km/h, 1.5 kW.
    s = re.sub(
        r"(?<![\w\\])([A-Za-z](?:_\{?\w+\}?)?)\s*[\[(]\s*([^\[\]()=]{1,12}?)\s*[\])]\s*=\s*(-?\d+(?:\.\d+)?)(?![\d.])",
        lambda m: (
            f"{m.group(1)} = {m.group(3)} {m.group(2)}" if structured.is_unit(m.group(2)) else m.group(0)
        ),
        s,
    )
    s = re.sub(r"(\d+)\s*'\s*(\d+(?:\.\d+)?)\s*''", r"\1 ft \2 in", s)  # 5'10'' (read from 5′10″)
    s = re.sub(r"(?<!\\)\\[,;:! ]|\$|~", " ", s)
    s = re.sub(r"\^\{([^{}]*)\}", r"^\1", s)
    return re.sub(r"\s+", " ", s).strip()


_TEMPERATURE = re.compile(
    r"(-?\d+(?:\.\d+)?)\s*(?:\^\s*\{?\\circ\}?|°|\\degree|degrees?)?\s*(?:\\text\{\s*|\\mathrm\{\s*)?"
    r"(C|F|K|Celsius|Fahrenheit|Kelvin|kelvins?)\b\}?",
    re.IGNORECASE,
)


def _temperature(text: str) -> tuple[float, str] | None:
    """The last temperature written in ``text`` as (kelvin, scale), a bare "K" or "C" only after a degree sign
    or a space (not a letter of a word)."""
    found = list(_TEMPERATURE.finditer(text))
    if not found:
        return None
    value, scale = float(found[-1].group(1)), found[-1].group(2)[0].upper()
    if scale == "C":
        return value + 273.15, "C"
    if scale == "F":
        return (value - 32) * 5 / 9 + 273.15, "F"
    return value, "K"


def _temperatures(gold: str, answer: str) -> tuple[bool, str] | None:
    """A reference that is a temperature on a scale against an answer on a scale: compared in kelvin ("20 °F" is
    not 20 °C; 68 °F is). None when either names no scale."""
    g, a = _temperature(gold), _temperature(answer)
    if g is None or a is None or g[1] == a[1]:
        return None
    same = math.isclose(g[0], a[0], abs_tol=1e-6)
    return same, f"{'the same' if same else 'another'} temperature ({a[1]} against {g[1]})"


def _quantities(gold: str, answer: math_answer.FinalAnswer) -> tuple[bool, str] | None:
    """A reference that is one quantity with a physical unit (``150 \\text{ cm}``, ``2.25 hours``) against an
    answer that states one with a unit: compared in SI units ("1.5 m" equals it; "36 mm^2" is not "36 cm^2"; "2 h
    30 min" is 150 minutes). None — the number is read below, with its own rounding rules — when either has no
    unit, or both are written in the same unit."""
    gold_q = structured.compound_quantities(_unit_text(gold))
    if len(gold_q) != 1 or gold_q[0][1] == _DIMENSIONLESS:
        return None
    said = [q for q in structured.compound_quantities(_unit_text(answer.text)) if q[1] != _DIMENSIONLESS]
    if not said:
        # A number followed by a word of another language that no unit table reads ("5 метров") may be the unit:
        # the number alone is not compared.
        if foreign := re.search(r"\d\s*((?:[^\W\d_])*[^\x00-\x7f](?:[^\W\d_])*)", answer.text):
            raise math_notations.Unreadable(f"a word after the number not read as a unit: {foreign.group(1)}")
        return None
    g_value, g_dim, g_unit = gold_q[0]
    if answer.hedged:
        return False, f"hedged: {answer.hedged}"
    # A speed stated after the distance asked for ("180 km at 180 km/hr") does not replace it.
    of_dim = [q for q in said if q[1] == g_dim]
    if not of_dim:
        return False, f"{said[-1][2]} is not a unit of what {g_unit} measures"
    if len({round(q[0], 12) for q in of_dim}) > 1:
        return False, f"{len(of_dim)} different values of what {g_unit} measures in the answer"
    a_value, _, a_unit = of_dim[-1]
    if a_unit.split() == g_unit.split():
        return None
    same = math.isclose(a_value, g_value, rel_tol=1e-9)
    return same, f"{'equal' if same else 'not equal'} as quantities: {a_unit} against {g_unit}"


_SQUARE_UNITS = re.compile(
    r"\b(?:square|sq\.?)\s+(?:units?|[a-z]{1,11})\b|\bunits?\s*(?:\^\s*\{?2\}?|²)", re.IGNORECASE
)
_CUBIC_UNITS = re.compile(
    r"\b(?:cubic|cu\.?)\s+(?:units?|[a-z]{1,11})\b|\bunits?\s*(?:\^\s*\{?3\}?|³)", re.IGNORECASE
)


def _dimension_conflict(answer: str, response: str) -> str:
    """Why the answer's unit cannot be the quantity the response computes ("its volume is 27 ... 27 square
    units"): an area unit where only a volume is spoken of, or a volume unit where only an area is; ""
    otherwise."""
    volume, area = (
        re.search(r"\bvolume\b", response, re.I),
        re.search(r"\b(?:area|surface)\b", response, re.I),
    )
    if _SQUARE_UNITS.search(answer) and volume and not area:
        return "a volume given in square units"
    if _CUBIC_UNITS.search(answer) and area and not volume:
        return "an area given in cubic units"
    return ""


def _last_sentence(text: str) -> str:
    """The last sentence or line of ``text`` ("" for none)."""
    sentences = [x for x in re.split(r"(?<=[.!?。])\s+|\n+", text.strip()) if x.strip()]
    return sentences[-1] if sentences else ""


_NO_SOLUTION = re.compile(
    r"\bno\s+(?:real\s+)?(?:solutions?|roots?|values?|such\s+(?:numbers?|values?))\b|\b(?:solution\s+set\s+is\s+)?empty\b"
    r"|\bhas\s+no\s+(?:real\s+)?(?:solutions?|roots?)\b",
    re.IGNORECASE,
)
# Words that give a stated amount its negative sign, where the reference is negative (a net result, a change).
_SIGN_IN_WORDS = re.compile(
    r"\b(?:a\s+)?(?:loss|deficit|debt|decrease|drop|decline|shortfall)\s+of\b|\bbelow\s+zero\b|\b(?:fell|dropped|decreased)\s+by\b",
    re.IGNORECASE,
)
_TRUTH_WORDS = {"true": True, "false": False, "yes": True, "no": False}
_TRUTH_IN_TEXT = re.compile(r"\b(true|false|yes|no)\b", re.IGNORECASE)
_NEGATED_TRUTH = re.compile(r"\b(?:not|never|neither|nor)\b|n't\b", re.IGNORECASE)


def _plain(text: str) -> str:
    """Lower-case words of ``text`` without punctuation: "Mercury." and "mercury" read the same."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))
