"""Number tests, as standard-library Python: the one definition every check of a number uses (part of the source
every composed verifier embeds).

A number unit (``each`` number is prime) and a count measured per unit (``each`` sentence's word count is prime,
``of``) are both judged here: primes, parity, divisibility, perfect squares, digit sums and ranges of counts.
"""

MEASURED_TESTS = ("prime", "even", "odd", "divisible", "square", "range", "digit_sum")


def is_prime(n):
    return n is not None and n > 1 and all(n % k for k in range(2, int(n**0.5) + 1))


def is_square(n):
    """Whether a non-negative integer is a perfect square."""
    return int(n**0.5 + 0.5) ** 2 == n


def digit_sum(n):
    return sum(int(ch) for ch in str(abs(n)))


def number_test(test, arg, n):
    """Whether the integer ``n`` passes ``test``: prime, even, odd, divisible (by ``arg``), square (``n`` not
    negative) or digit_sum (equal to ``arg``); raises for another test."""
    if test == "prime":
        return is_prime(n)
    if test == "even":
        return n % 2 == 0
    if test == "odd":
        return n % 2 == 1
    if test == "divisible":
        return int(arg) != 0 and n % int(arg) == 0
    if test == "square":
        return is_square(n)
    if test == "digit_sum":
        return digit_sum(n) == int(arg)
    raise ValueError(f"unknown number test {test!r}")


def measure_ok(test, arg, n):
    """Whether a count ``n`` (a unit's words, letters, ...) passes a number test or lies in the range ``arg``
    ([lo, hi], either None: no bound); a malformed count (-1) fails."""
    if n is None or n < 0:
        return False
    if test not in MEASURED_TESTS:
        raise ValueError(f"unknown measured test {test!r}")
    if test == "range":
        lo, hi = [*list(arg), None, None][:2] if isinstance(arg, list) else (None, None)
        return (lo is None or n >= lo) and (hi is None or n <= hi)
    return number_test(test, arg, n)
