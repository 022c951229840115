"""A second reading of an instruction, written apart from the main reader (:mod:`rlar.tasks.reading`).

It reads by token windows around numbers and quoted strings, with its own vocabulary and comparator lists, and
shares no pattern with :mod:`rlar.tasks.phrasings` and the modules beside it; it may share only the checks
(:mod:`rlar.constraints.checks`), the constraint vocabulary (:mod:`rlar.constraints.vocabulary`) and the number-word
table (:mod:`rlar.number_words`). :mod:`rlar.synthesis.second_route` turns what it reads into labelled probes.
Modules: ``vocab`` (number words, units, comparators, windows), ``forms`` (wrappers, separators, lists on one
line, JSON arrays, section markers, one unit's start or end, closing hashtags, a repeated request, unquoted
options), ``units`` (letter classes, doubled letters, initials, number ranges and ratios, punctuation counts),
``positional`` (positions, per-unit ends and starts, bans, lists), ``composed`` (per-unit tests, relations,
totals, tables, YAML), ``layouts`` / ``relations`` / ``marks`` (fenced blocks, identifier
styles, exact separators, times, prices, bits, HTML / task / nested lists, figures, question-answer pairs, repeated
units; measures per unit, staircases, one first word, chains, reversals, sums, a unit's end of a kind, IFBench word
classes; counts of emojis, bold, links, different words, parentheses and the like, bans, tolerances), ``reading``
(the entry point and the counts).
"""

from rlar.synthesis.second.reading import second_reading

__all__ = ["second_reading"]
