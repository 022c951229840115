"""Programs checked by tests, in each dataset's own reference shape: HumanEval, MBPP, APPS, LeetCode-style,
repairs with assert strings, CodeContests, LiveCodeBench; and SQL / snippet tasks without tests."""

from __future__ import annotations

import json
import random
from typing import Any

from rlar.benchmarks.routing_set.common import CODE, Item, Task, records

# (entry point, signature + docstring, check body lines)
_HUMANEVAL = [
    (
        "is_palindrome",
        'def is_palindrome(text: str) -> bool:\n    """Return True if text reads the same forwards and backwards.\n    >>> is_palindrome(\'aba\')\n    True\n    """\n',
        [
            "assert candidate('') == True",
            "assert candidate('aba') == True",
            "assert candidate('zbcd') == False",
        ],
    ),
    (
        "sum_squares",
        'def sum_squares(lst: list) -> int:\n    """Return the sum of the squares of the numbers in lst.\n    >>> sum_squares([1, 2, 3])\n    14\n    """\n',
        ["assert candidate([1, 2, 3]) == 14", "assert candidate([]) == 0", "assert candidate([-2]) == 4"],
    ),
    (
        "count_vowels",
        'def count_vowels(s: str) -> int:\n    """Count the vowels a, e, i, o, u (any case) in s.\n    >>> count_vowels(\'Hello\')\n    2\n    """\n',
        ["assert candidate('Hello') == 2", "assert candidate('xyz') == 0", "assert candidate('AEIOU') == 5"],
    ),
    (
        "second_largest",
        'def second_largest(nums: list) -> int:\n    """Return the second largest distinct value in nums, or None if there is none.\n    >>> second_largest([4, 1, 3])\n    3\n    """\n',
        [
            "assert candidate([4, 1, 3]) == 3",
            "assert candidate([2, 2]) is None",
            "assert candidate([5, 9, 9, 7]) == 7",
        ],
    ),
    (
        "flatten",
        'from typing import List\n\n\ndef flatten(nested: List[List[int]]) -> List[int]:\n    """Concatenate the inner lists in order.\n    >>> flatten([[1, 2], [3]])\n    [1, 2, 3]\n    """\n',
        [
            "assert candidate([[1, 2], [3]]) == [1, 2, 3]",
            "assert candidate([]) == []",
            "assert candidate([[], [4]]) == [4]",
        ],
    ),
    (
        "rotate_left",
        'def rotate_left(xs: list, k: int) -> list:\n    """Rotate xs to the left by k positions.\n    >>> rotate_left([1, 2, 3, 4], 1)\n    [2, 3, 4, 1]\n    """\n',
        [
            "assert candidate([1, 2, 3, 4], 1) == [2, 3, 4, 1]",
            "assert candidate([1, 2, 3], 3) == [1, 2, 3]",
            "assert candidate([], 2) == []",
        ],
    ),
    (
        "is_prime",
        'def is_prime(n: int) -> bool:\n    """Return true if a given number is prime, and false otherwise.\n    >>> is_prime(6)\n    False\n    >>> is_prime(101)\n    True\n    """\n',
        [
            "assert candidate(6) == False",
            "assert candidate(101) == True",
            "assert candidate(1) == False",
            "assert candidate(13441) == True",
        ],
    ),
    (
        "run_length",
        "def run_length(s: str) -> str:\n    \"\"\"Run-length encode s: 'aaab' becomes 'a3b1'.\n    >>> run_length('aaab')\n    'a3b1'\n    \"\"\"\n",
        [
            "assert candidate('aaab') == 'a3b1'",
            "assert candidate('') == ''",
            "assert candidate('abc') == 'a1b1c1'",
        ],
    ),
    (
        "digit_sum",
        'def digit_sum(n: int) -> int:\n    """Return the sum of the decimal digits of the non-negative integer n.\n    >>> digit_sum(123)\n    6\n    """\n',
        ["assert candidate(123) == 6", "assert candidate(0) == 0", "assert candidate(9999) == 36"],
    ),
    (
        "below_zero",
        'from typing import List\n\n\ndef below_zero(operations: List[int]) -> bool:\n    """ You\'re given a list of deposit and withdrawal operations on a bank account that starts with\n    zero balance. Detect if at any point the balance falls below zero.\n    >>> below_zero([1, 2, -4, 5])\n    True\n    """\n',
        [
            "assert candidate([]) == False",
            "assert candidate([1, 2, -3, 1, 2, -3]) == False",
            "assert candidate([1, 2, -4, 5, 6]) == True",
        ],
    ),
    (
        "unique_sorted",
        'def unique_sorted(l: list):\n    """Return sorted unique elements in a list\n    >>> unique_sorted([5, 3, 5, 2, 3, 3, 9, 0, 123])\n    [0, 2, 3, 5, 9, 123]\n    """\n',
        [
            "assert candidate([5, 3, 5, 2, 3, 3, 9, 0, 123]) == [0, 2, 3, 5, 9, 123]",
            "assert candidate([]) == []",
        ],
    ),
    (
        "fib",
        'def fib(n: int):\n    """Return n-th Fibonacci number.\n    >>> fib(10)\n    55\n    """\n',
        ["assert candidate(10) == 55", "assert candidate(1) == 1", "assert candidate(8) == 21"],
    ),
]


def humaneval(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "humaneval",
        ["openai_function_completion", "docstring-to-body", "he_plus"],
        [
            "",
            "Complete the Python function body; hidden tests call it.",
            "Function completion from a signature and docstring.",
        ],
        "openai/openai_humaneval",
    )
    items = []
    for i, (entry, prompt, checks) in enumerate(_HUMANEVAL):
        test = "\n\nMETADATA = {'author': 'jt', 'dataset': 'test'}\n\n\ndef check(candidate):\n" + "".join(
            f"    {c}\n" for c in checks
        )
        if i % 2 == 0:
            ref: Any = {"task_id": f"HumanEval/{i}", "test": test, "entry_point": entry}
            meta: dict[str, Any] = {}
        else:  # the test column alone as the reference, the entry point beside it (verl-style exports)
            ref, meta = test, {"entry_point": entry, "task_id": f"HumanEval/{i}"}
        items.append(Item(prompt, ref, CODE, meta))
    return records(task, items)


_MBPP = [
    (
        "Write a function to find the maximum of three numbers.",
        "max_of_three",
        [
            "assert max_of_three(10,20,30)==30",
            "assert max_of_three(55,47,39)==55",
            "assert max_of_three(10,49,30)==49",
        ],
    ),
    (
        "Write a python function to remove first and last occurrence of a given character from the string.",
        "remove_Occ",
        [
            'assert remove_Occ("hello","l") == "heo"',
            'assert remove_Occ("abcda","a") == "bcd"',
            'assert remove_Occ("PHP","P") == "H"',
        ],
    ),
    (
        "Write a function to find the shared elements from the given two lists.",
        "similar_elements",
        [
            "assert set(similar_elements((3, 4, 5, 6),(5, 7, 4, 10))) == set((4, 5))",
            "assert set(similar_elements((1, 2, 3, 4),(5, 4, 3, 7))) == set((3, 4))",
        ],
    ),
    (
        "Write a python function to identify non-prime numbers.",
        "is_not_prime",
        [
            "assert is_not_prime(2) == False",
            "assert is_not_prime(10) == True",
            "assert is_not_prime(35) == True",
        ],
    ),
    (
        "Write a function to count the number of words in a sentence.",
        "word_count",
        ["assert word_count('the quick brown fox') == 4", "assert word_count('') == 0"],
    ),
    (
        "Write a function to convert a list of tuples into a dictionary.",
        "tuples_to_dict",
        [
            "assert tuples_to_dict([('a', 1), ('b', 2)]) == {'a': 1, 'b': 2}",
            "assert tuples_to_dict([]) == {}",
        ],
    ),
    (
        "Write a python function to check whether the given number is even or not using bitwise operator.",
        "is_Even",
        ["assert is_Even(1) == False", "assert is_Even(2) == True", "assert is_Even(3) == False"],
    ),
    (
        "Write a function to find the nth octagonal number.",
        "is_octagonal",
        ["assert is_octagonal(5) == 65", "assert is_octagonal(10) == 280", "assert is_octagonal(15) == 645"],
    ),
    (
        "Write a function to reverse words in a given string.",
        "reverse_words",
        [
            'assert reverse_words("python program")==("program python")',
            'assert reverse_words("java language")==("language java")',
        ],
    ),
    (
        "Write a function to find the median of three numbers.",
        "median_numbers",
        ["assert median_numbers(25,55,65)==55.0", "assert median_numbers(20,10,30)==20.0"],
    ),
    (
        "Write a function to sort a given list of strings by their length.",
        "sort_by_length",
        [
            "assert sort_by_length(['ccc', 'a', 'bb']) == ['a', 'bb', 'ccc']",
            "assert sort_by_length([]) == []",
        ],
    ),
    (
        "Write a function that matches a string that has an a followed by three 'b'.",
        "text_match_three",
        ['assert text_match_three("ac")==False', 'assert text_match_three("abbbba")==True'],
    ),
]


def mbpp(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "mbpp",
        ["basic_python_problems", "sanitized-basic-python", "entry-level-functions"],
        ["Short Python problems; the answer is a function that passes the listed asserts.", "", ""],
        "google-research-datasets/mbpp",
    )
    items = []
    for i, (text, _fn, tests) in enumerate(_MBPP):
        query = (
            f"You are an expert Python programmer, and here is your task: {text} Your code should pass these tests:\n\n"
            + "\n".join(tests)
        )
        if i % 3 == 0:
            ref: Any = {
                "task_id": 11 + i,
                "text": text,
                "test_list": tests,
                "test_setup_code": "",
                "challenge_test_list": [],
            }
        elif i % 3 == 1:
            ref = tests
        else:
            ref = "\n".join(tests)
        items.append(Item(query if i % 2 == 0 else text, ref, CODE))
    return records(task, items)


_APPS = [
    (
        "Given an integer n followed by n integers, print their sum.",
        [("3\n1 2 3\n", "6\n"), ("1\n-5\n", "-5\n")],
    ),
    (
        "Read a line of text and print the number of words in it.",
        [("hello world\n", "2\n"), ("a b c d\n", "4\n")],
    ),
    ("Read two integers a and b and print the larger one.", [("3 9\n", "9\n"), ("-1 -7\n", "-1\n")]),
    (
        "Print YES if the given string is a palindrome and NO otherwise.",
        [("abba\n", "YES\n"), ("abc\n", "NO\n")],
    ),
    ("Given n, print the n-th triangular number n(n+1)/2.", [("4\n", "10\n"), ("1\n", "1\n")]),
    (
        "Vasya has n candies and wants to give them to k friends equally. Print how many candies remain.",
        [("10 3\n", "1\n"), ("9 3\n", "0\n")],
    ),
    (
        "Read a string and print it with every vowel removed.",
        [("codeforces\n", "cdfrcs\n"), ("aeiou\n", "\n")],
    ),
    (
        "Given a list of n integers, print the maximum difference between any two of them.",
        [("4\n1 9 3 4\n", "8\n")],
    ),
    ("Count how many of the given n numbers are divisible by 3.", [("5\n3 4 6 7 9\n", "3\n")]),
    (
        "Petya writes the numbers from 1 to n. Print how many digits he writes in total.",
        [("13\n", "17\n"), ("4\n", "4\n")],
    ),
    (
        "A string consists of the letters L and R. Print the final position after moving left or right from 0.",
        [("LRR\n", "1\n")],
    ),
]


def apps(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "apps",
        ["apps-introductory", "stdin_stdout_problems"],
        ["Problems read from standard input and write to standard output.", ""],
        "codeparrot/apps",
    )
    items = []
    for i, (stmt, pairs) in enumerate(_APPS):
        io = {"inputs": [p[0] for p in pairs], "outputs": [p[1] for p in pairs]}
        q = f"{stmt}\n\n-----Input-----\n\nThe input is given on standard input.\n\n-----Output-----\n\nPrint the answer.\n\n-----Examples-----\nInput\n{pairs[0][0]}\nOutput\n{pairs[0][1]}"
        ref: Any = json.dumps(io) if i % 2 == 0 else {"problem_id": 4000 + i, "input_output": json.dumps(io)}
        items.append(Item(q, ref, CODE, {"difficulty": "introductory"}))
    return records(task, items)


_LEETCODE = [
    (
        "twoSum",
        "Given an array of integers nums and an integer target, return indices of the two numbers such that they add up to target.",
        "def twoSum(self, nums: List[int], target: int) -> List[int]:",
        [
            "assert candidate(nums=[2, 7, 11, 15], target=9) == [0, 1]",
            "assert candidate(nums=[3, 2, 4], target=6) == [1, 2]",
        ],
    ),
    (
        "isValid",
        "Given a string s containing just the characters '(', ')', '{', '}', '[' and ']', determine if the input string is valid.",
        "def isValid(self, s: str) -> bool:",
        ["assert candidate(s='()[]{}') == True", "assert candidate(s='(]') == False"],
    ),
    (
        "maxProfit",
        "You are given an array prices where prices[i] is the price of a given stock on the ith day. Return the maximum profit you can achieve from one transaction.",
        "def maxProfit(self, prices: List[int]) -> int:",
        ["assert candidate(prices=[7, 1, 5, 3, 6, 4]) == 5", "assert candidate(prices=[7, 6, 4, 3, 1]) == 0"],
    ),
    (
        "climbStairs",
        "You are climbing a staircase. It takes n steps to reach the top. Each time you can climb 1 or 2 steps. In how many distinct ways can you climb to the top?",
        "def climbStairs(self, n: int) -> int:",
        ["assert candidate(n=2) == 2", "assert candidate(n=3) == 3", "assert candidate(n=5) == 8"],
    ),
    (
        "maxSubArray",
        "Given an integer array nums, find the subarray with the largest sum, and return its sum.",
        "def maxSubArray(self, nums: List[int]) -> int:",
        ["assert candidate(nums=[-2, 1, -3, 4, -1, 2, 1, -5, 4]) == 6", "assert candidate(nums=[1]) == 1"],
    ),
    (
        "lengthOfLongestSubstring",
        "Given a string s, find the length of the longest substring without repeating characters.",
        "def lengthOfLongestSubstring(self, s: str) -> int:",
        ["assert candidate(s='abcabcbb') == 3", "assert candidate(s='bbbbb') == 1"],
    ),
    (
        "searchInsert",
        "Given a sorted array of distinct integers and a target value, return the index if the target is found. If not, return the index where it would be inserted.",
        "def searchInsert(self, nums: List[int], target: int) -> int:",
        [
            "assert candidate(nums=[1, 3, 5, 6], target=5) == 2",
            "assert candidate(nums=[1, 3, 5, 6], target=2) == 1",
        ],
    ),
    (
        "majorityElement",
        "Given an array nums of size n, return the majority element (it appears more than n/2 times).",
        "def majorityElement(self, nums: List[int]) -> int:",
        ["assert candidate(nums=[3, 2, 3]) == 3", "assert candidate(nums=[2, 2, 1, 1, 1, 2, 2]) == 2"],
    ),
    (
        "missingNumber",
        "Given an array nums containing n distinct numbers in the range [0, n], return the only number in the range that is missing from the array.",
        "def missingNumber(self, nums: List[int]) -> int:",
        ["assert candidate(nums=[3, 0, 1]) == 2", "assert candidate(nums=[0, 1]) == 2"],
    ),
    (
        "romanToInt",
        "Given a roman numeral, convert it to an integer.",
        "def romanToInt(self, s: str) -> int:",
        ["assert candidate(s='III') == 3", "assert candidate(s='MCMXCIV') == 1994"],
    ),
]


def leetcode(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "leetcode",
        ["interview_problems_py", "lc-easy-medium"],
        ["", "Implement the method of class Solution."],
        "newfacade/LeetCodeDataset",
    )
    items = []
    for name, stmt, sig, checks in _LEETCODE:
        q = f"{stmt}\n\nPlease complete the following starter code:\n```python\nclass Solution:\n    {sig}\n        \n```"
        ref = {
            "entry_point": f"Solution().{name}",
            "test": "def check(candidate):\n" + "".join(f"    {c}\n" for c in checks),
        }
        items.append(Item(q, ref, CODE, {"difficulty": "Easy", "tags": ["Array"]}))
    return records(task, items)


_REPAIRS = [
    (
        "def average(xs):\n    return sum(xs) / len(xs) + 1\n",
        "average",
        ["assert average([2, 4]) == 3", "assert average([5]) == 5"],
    ),
    (
        "def last(xs):\n    return xs[len(xs)]\n",
        "last",
        ["assert last([1, 2, 3]) == 3", "assert last(['a']) == 'a'"],
    ),
    (
        "def factorial(n):\n    if n == 0:\n        return 0\n    return n * factorial(n - 1)\n",
        "factorial",
        ["assert factorial(0) == 1", "assert factorial(5) == 120"],
    ),
    (
        "def count_char(s, c):\n    n = 0\n    for ch in s:\n        if ch == c:\n            n = 1\n    return n\n",
        "count_char",
        ["assert count_char('banana', 'a') == 3", "assert count_char('', 'x') == 0"],
    ),
    (
        "def is_even(n):\n    return n % 2 == 1\n",
        "is_even",
        ["assert is_even(4) is True", "assert is_even(7) is False"],
    ),
    (
        "def reverse_list(xs):\n    out = []\n    for x in xs:\n        out.append(x)\n    return out\n",
        "reverse_list",
        ["assert reverse_list([1, 2, 3]) == [3, 2, 1]", "assert reverse_list([]) == []"],
    ),
    (
        "def clamp(x, lo, hi):\n    return max(hi, min(lo, x))\n",
        "clamp",
        ["assert clamp(5, 0, 10) == 5", "assert clamp(-3, 0, 10) == 0", "assert clamp(99, 0, 10) == 10"],
    ),
    (
        "def merge_dicts(a, b):\n    out = a\n    out.update(b)\n    return out\n",
        "merge_dicts",
        ["d = {'x': 1}\nassert merge_dicts(d, {'y': 2}) == {'x': 1, 'y': 2}\nassert d == {'x': 1}"],
    ),
    (
        "def title_case(s):\n    return ' '.join(w.capitalize for w in s.split())\n",
        "title_case",
        ["assert title_case('hello world') == 'Hello World'"],
    ),
    (
        "def safe_div(a, b):\n    return a / b\n",
        "safe_div",
        ["assert safe_div(6, 3) == 2", "assert safe_div(1, 0) is None"],
    ),
    (
        "def range_sum(n):\n    return sum(range(n))\n",
        "range_sum",
        ["assert range_sum(3) == 6", "assert range_sum(1) == 1"],
    ),
]


def code_repair(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "bug_fixing",
        ["fix-the-function", "debugbench_py", "patch_buggy_python"],
        [
            "The function below has a bug. Return the corrected function.",
            "",
            "Repair the program so the tests pass.",
        ],
        "written-for-rlar (DebugBench / QuixBugs style)",
    )
    items = []
    for i, (buggy, name, asserts) in enumerate(_REPAIRS):
        q = [
            f"Fix the bug in `{name}`:\n```python\n{buggy}```",
            f"This code is wrong:\n\n{buggy}\nPlease fix it.",
            f"```python\n{buggy}```\nThe function {name} fails its tests. What is the fixed version?",
        ][i % 3]
        items.append(Item(q, "\n".join(asserts), CODE))
    return records(task, items)


_CONTESTS = [
    ("1000_A", "Given two integers a and b, output a+b.", [("2 3\n", "5\n")], [("10 -4\n", "6\n")]),
    (
        "1001_B",
        "You are given n and a permutation of 1..n. Output the number of fixed points.",
        [("3\n1 3 2\n", "1\n")],
        [("4\n1 2 3 4\n", "4\n")],
    ),
    (
        "1002_A",
        "Output the minimum number of coins of values 1, 5 and 10 that sum to n.",
        [("17\n", "4\n")],
        [("30\n", "3\n")],
    ),
    (
        "1003_C",
        "Given a string, output the most frequent character (the smallest one on ties).",
        [("abracadabra\n", "a\n")],
        [("zzyy\n", "y\n")],
    ),
    (
        "1004_A",
        "Given n, print 'even' if n is even, otherwise 'odd'.",
        [("4\n", "even\n")],
        [("7\n", "odd\n")],
    ),
    (
        "1005_B",
        "Given the heights of n towers, output how many are strictly taller than all towers to their left.",
        [("5\n1 3 2 5 4\n", "3\n")],
        [("3\n3 2 1\n", "1\n")],
    ),
    (
        "1006_A",
        "Given t test cases each with an integer n, output n squared for each.",
        [("2\n3\n4\n", "9\n16\n")],
        [("1\n0\n", "0\n")],
    ),
    (
        "1007_B",
        "Output the number of distinct values in the array.",
        [("5\n1 1 2 3 3\n", "3\n")],
        [("1\n7\n", "1\n")],
    ),
    (
        "1008_A",
        "Given a time hh:mm, output the number of minutes until midnight.",
        [("23:55\n", "5\n")],
        [("00:00\n", "1440\n")],
    ),
    (
        "1009_C",
        "Given n and k, output the number of multiples of k between 1 and n inclusive.",
        [("10 3\n", "3\n")],
        [("5 7\n", "0\n")],
    ),
]


def codecontests(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "codecontests",
        ["deepmind-contest-problems", "cf_div2_a_b"],
        ["", "Contest problems with public and private test cases; any language accepted, Python preferred."],
        "deepmind/code_contests",
    )
    items = []
    for name, stmt, pub, priv in _CONTESTS:
        ref = {
            "name": name,
            "public_tests": {"input": [p[0] for p in pub], "output": [p[1] for p in pub]},
            "private_tests": {"input": [p[0] for p in priv], "output": [p[1] for p in priv]},
            "generated_tests": {"input": [], "output": []},
        }
        items.append(
            Item(f"{stmt}\n\nExample\nInput\n{pub[0][0]}\nOutput\n{pub[0][1]}", ref, CODE, {"cf_rating": 800})
        )
    return records(task, items)


_LCB = [
    (
        "sumOfEncryptedInt",
        "You are given an integer array nums. encrypt(x) replaces every digit in x with the largest digit in x. Return the sum of encrypted elements.",
        "class Solution:\n    def sumOfEncryptedInt(self, nums: List[int]) -> int:\n        ",
        [("[1, 2, 3]", "6"), ("[10, 21, 31]", "66")],
    ),
    (
        "maxPair",
        "Return the maximum sum of a pair of elements whose difference is at most k.",
        "class Solution:\n    def maxPair(self, nums: List[int], k: int) -> int:\n        ",
        [("[1, 2, 3]\n2", "5")],
    ),
    (
        "countKeyChanges",
        "Return the number of times the user had to change the key when typing s, ignoring shift.",
        "class Solution:\n    def countKeyChanges(self, s: str) -> int:\n        ",
        [('"aAbBcC"', "2"), ('"AaAaAaaA"', "0")],
    ),
    (
        "minimumCost",
        "Divide nums into 3 contiguous subarrays; the cost of an array is its first element. Return the minimum total cost.",
        "class Solution:\n    def minimumCost(self, nums: List[int]) -> int:\n        ",
        [("[1, 2, 3, 12]", "6")],
    ),
    (
        "isGood",
        "An array is good if it is a permutation of base[n] = [1, 2, ..., n - 1, n, n]. Return true if nums is good.",
        "class Solution:\n    def isGood(self, nums: List[int]) -> bool:\n        ",
        [("[1, 3, 3, 2]", "true"), ("[2, 1, 3]", "false")],
    ),
    (
        "furthestDistanceFromOrigin",
        "Given moves of 'L', 'R' and '_' (either way), return the furthest distance from the origin you can get.",
        "class Solution:\n    def furthestDistanceFromOrigin(self, moves: str) -> int:\n        ",
        [('"L_RL__R"', "3")],
    ),
    (
        "accountBalanceAfterPurchase",
        "You start with 100 dollars; a purchase is rounded to the nearest multiple of 10. Return the balance.",
        "class Solution:\n    def accountBalanceAfterPurchase(self, purchaseAmount: int) -> int:\n        ",
        [("9", "90"), ("15", "80")],
    ),
    (
        "minimizedStringLength",
        "Repeatedly delete the closest occurrences of a chosen character; return the minimum length.",
        "class Solution:\n    def minimizedStringLength(self, s: str) -> int:\n        ",
        [('"aaabc"', "3")],
    ),
    (
        "numberOfEmployeesWhoMetTarget",
        "Return the number of employees who worked at least target hours.",
        "class Solution:\n    def numberOfEmployeesWhoMetTarget(self, hours: List[int], target: int) -> int:\n        ",
        [("[0, 1, 2, 3, 4]\n2", "3")],
    ),
    (
        "finalString",
        "Typing 'i' reverses the string typed so far. Return the final string after typing s.",
        "class Solution:\n    def finalString(self, s: str) -> str:\n        ",
        [('"string"', '"rtsng"')],
    ),
]


def livecodebench(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "livecodebench",
        ["lcb_release_v2", "recent-contest-functions"],
        ["Recent contest problems (functional tests).", ""],
        "livecodebench/code_generation_lite",
    )
    items = []
    for fn, stmt, starter, cases in _LCB:
        tests = json.dumps([{"input": a, "output": b, "testtype": "functional"} for a, b in cases])
        ref = {"starter_code": starter, "public_test_cases": tests, "metadata": json.dumps({"func_name": fn})}
        q = f"### Question:\n{stmt}\n\n### Format: You will use the following starter code to write the solution to the problem and enclose your code within delimiters.\n```python\n{starter}\n```\n\n### Answer: (use the provided format with backticks)"
        items.append(Item(q, ref, CODE, {"platform": "leetcode", "difficulty": "easy"}))
    return records(task, items)


# --- programs without tests: references are programs or queries, compared by other means ----------

_SPIDER = [
    ("concert_singer", "How many singers do we have?", "SELECT count(*) FROM singer"),
    (
        "concert_singer",
        "What is the average, minimum, and maximum age of all singers from France?",
        "SELECT avg(age) , min(age) , max(age) FROM singer WHERE country = 'France'",
    ),
    (
        "pets_1",
        "Find the number of pets whose weight is heavier than 10.",
        "SELECT count(*) FROM pets WHERE weight > 10",
    ),
    (
        "car_1",
        "What are the names of all European countries with at least 3 car manufacturers?",
        "SELECT T1.CountryName FROM COUNTRIES AS T1 JOIN CONTINENTS AS T2 ON T1.Continent = T2.ContId JOIN CAR_MAKERS AS T3 ON T1.CountryId = T3.Country WHERE T2.Continent = 'europe' GROUP BY T1.CountryName HAVING count(*) >= 3",
    ),
    (
        "flight_2",
        "Which airlines have a flight departing from APG?",
        "SELECT T1.Airline FROM AIRLINES AS T1 JOIN FLIGHTS AS T2 ON T1.uid = T2.Airline WHERE T2.SourceAirport = 'APG'",
    ),
    (
        "employee_hire_evaluation",
        "List the names of employees sorted by age in ascending order.",
        "SELECT name FROM employee ORDER BY age",
    ),
    (
        "world_1",
        "What is the total population of countries in Asia?",
        "SELECT sum(Population) FROM country WHERE Continent = 'Asia'",
    ),
    ("student_transcripts_tracking", "How many courses are there?", "SELECT count(*) FROM Courses"),
    (
        "tvshow",
        "List the title of all cartoons in alphabetical order.",
        "SELECT Title FROM Cartoon ORDER BY title",
    ),
    (
        "museum_visit",
        "Find the names of visitors whose membership level is higher than 4, ordered by level from high to low.",
        "SELECT name FROM visitor WHERE Level_of_membership > 4 ORDER BY Level_of_membership DESC",
    ),
    ("orchestra", "How many conductors are there?", "SELECT count(*) FROM conductor"),
]

SQL = ["normalized_match", "exact_match", "llm_judge"]


def spider(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "spider",
        ["text_to_sql_spider", "nl2sql-dev"],
        ["Write the SQLite query that answers the question for the given database schema.", ""],
        "xlangai/spider",
    )
    items = []
    for db, q, sql in _SPIDER:
        schema = f"-- database: {db}\n-- (schema omitted: CREATE TABLE statements of {db})"
        items.append(Item(f"{schema}\n-- Question: {q}\nSELECT", sql, SQL, {"db_id": db}))
    return records(task, items)


_BIRD = [
    (
        "california_schools",
        "What is the highest eligible free rate for K-12 students in the schools in Alameda County?",
        "Eligible free rate for K-12 = `Free Meal Count (K-12)` / `Enrollment (K-12)`",
        "SELECT `Free Meal Count (K-12)` / `Enrollment (K-12)` FROM frpm WHERE `County Name` = 'Alameda' ORDER BY (CAST(`Free Meal Count (K-12)` AS REAL) / `Enrollment (K-12)`) DESC LIMIT 1",
    ),
    (
        "financial",
        "How many accounts who choose issuance after transaction are staying in East Bohemia region?",
        "A3 contains the data of region; 'POPLATEK PO OBRATU' represents for 'issuance after transaction'.",
        "SELECT COUNT(T2.account_id) FROM district AS T1 INNER JOIN account AS T2 ON T1.district_id = T2.district_id WHERE T1.A3 = 'east Bohemia' AND T2.frequency = 'POPLATEK PO OBRATU'",
    ),
    (
        "debit_card_specializing",
        "How many gas stations in CZE has Premium gas?",
        "",
        "SELECT COUNT(GasStationID) FROM gasstations WHERE Country = 'CZE' AND Segment = 'Premium'",
    ),
    (
        "superhero",
        "Please list all the superpowers of 3-D Man.",
        "3-D Man refers to superhero_name = '3-D Man'",
        "SELECT T3.power_name FROM superhero AS T1 INNER JOIN hero_power AS T2 ON T1.id = T2.hero_id INNER JOIN superpower AS T3 ON T2.power_id = T3.id WHERE T1.superhero_name = '3-D Man'",
    ),
    (
        "formula_1",
        "Please list the reference names of the drivers who are eliminated in the first period in race number 20.",
        "driver reference name refers to driverRef; first qualifying period refers to q1",
        "SELECT T2.driverRef FROM qualifying AS T1 INNER JOIN drivers AS T2 ON T2.driverId = T1.driverId WHERE T1.raceId = 20 ORDER BY T1.q1 DESC LIMIT 5",
    ),
    (
        "card_games",
        "How many cards have infinite power?",
        "infinite power refers to power = '*'",
        "SELECT COUNT(*) FROM cards WHERE power = '*'",
    ),
    (
        "toxicology",
        "How many molecules are carcinogenic?",
        "label = '+' means molecules are carcinogenic",
        "SELECT COUNT(T.molecule_id) FROM molecule AS T WHERE T.label = '+'",
    ),
    (
        "student_club",
        "What is the total amount spent on food for the event 'October Meeting'?",
        "",
        "SELECT SUM(T2.spent) FROM event AS T1 INNER JOIN budget AS T2 ON T1.event_id = T2.link_to_event WHERE T1.event_name = 'October Meeting' AND T2.category = 'Food'",
    ),
    (
        "thrombosis_prediction",
        "How many patients were born in 1937?",
        "born in 1937 refers to YEAR(Birthday) = '1937'",
        "SELECT COUNT(ID) FROM Patient WHERE STRFTIME('%Y', Birthday) = '1937'",
    ),
    (
        "codebase_community",
        "How many users are from New York?",
        "New York refers to Location",
        "SELECT COUNT(Id) FROM users WHERE Location = 'New York'",
    ),
]


def bird(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "bird_sql",
        ["bird-dev-sql", "enterprise_db_questions"],
        ["", "Translate the question into an executable SQL query; evidence gives hints about the columns."],
        "birdsql/bird_dev",
    )
    items = []
    for db, q, ev, sql in _BIRD:
        query = (
            f"Database: {db}\nQuestion: {q}\n" + (f"Evidence: {ev}\n" if ev else "") + "Write the SQL query."
        )
        items.append(Item(query, sql, SQL, {"db_id": db, "evidence": ev, "difficulty": "simple"}))
    return records(task, items)


_CONALA = [
    ("How to convert a list of strings to integers in Python?", "[int(x) for x in str_list]"),
    ("get the current working directory", "os.getcwd()"),
    ("sort a dictionary `d` by its values", "sorted(d.items(), key=lambda x: x[1])"),
    ("check if a file `path` exists", "os.path.exists(path)"),
    ("remove duplicates from list `a` keeping order", "list(dict.fromkeys(a))"),
    ("read a json file `f` into a dict", "json.load(open(f))"),
    ("split string `s` on commas", "s.split(',')"),
    ("get the maximum value of a list `l`", "max(l)"),
    ("convert a datetime `dt` to a string in the format YYYY-MM-DD", "dt.strftime('%Y-%m-%d')"),
    ("join the list of strings `words` with spaces", "' '.join(words)"),
    ("create a numpy array of zeros with shape (3, 4)", "np.zeros((3, 4))"),
]


def conala(rng: random.Random) -> list[dict[str, Any]]:
    task = Task(
        "conala",
        ["python-one-liners", "intent_to_snippet"],
        ["Write a single line of Python for the intent; compared with the curated snippet.", ""],
        "neulab/conala",
    )
    # CoNaLa reports BLEU and exact match: n-gram metrics and surface matches both fit a one-line snippet.
    acceptable = ["bleu2", "chrf", "exact_match", "normalized_match"]
    items = [
        Item(intent, snippet, acceptable, {"question_id": 1000 + i})
        for i, (intent, snippet) in enumerate(_CONALA)
    ]
    return records(task, items)


ALL = [humaneval, mbpp, apps, leetcode, code_repair, codecontests, livecodebench, spider, bird, conala]
