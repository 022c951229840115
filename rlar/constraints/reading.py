"""What a constraint family's reading works on: one clause of an instruction, prepared by the reader
(:mod:`rlar.tasks.reading`), and wordings as table rows.

The reader lowercases a clause, writes its numbers as digits and puts a token in place of each quoted text
(``Q0 + chr(0xE100 + i) + Q1``; :data:`Q` matches one). A family's ``read(cl, sentence, whole)`` finds its
wordings in the clause ``cl`` (a :class:`WorkingClause`; ``sentence``: the clause's sentence, ``whole``: the whole
instruction, both prepared the same way) and adds the constraints they state; every wording it reads is blanked
from the clause, so what is left over shows what no family understood.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from rlar.constraints.model import Constraint

__all__ = ["Q0", "Q1", "Phrase", "Q", "WorkingClause", "quoted", "read_phrases"]

Q0, Q1 = "\ue000", "\ue001"  # quote placeholder: Q0 + chr(0xE100 + i) + Q1
Q = f"{Q0}[\ue100-\ue1ff]{Q1}"


class WorkingClause(Protocol):
    """One clause as the reader hands it to a family (:class:`rlar.tasks.phrasings.ClauseText`)."""

    w: str  # the clause as prepared, its read wordings blanked
    found: list[dict[str, Any]]  # the constraints read so far (dict form)
    memory: dict[str, Any]  # what a family keeps from one clause of the instruction to the next

    def q(self, token: str) -> str:
        """The quoted text a quote token stands for."""
        ...

    def each(self, pattern: str, fn: Callable[[re.Match[str]], Any]) -> None:
        """Calls ``fn`` on every match of ``pattern`` in the clause and blanks the match unless ``fn`` returns
        False."""
        ...

    def add(self, c: dict[str, Any]) -> None: ...


@dataclass(frozen=True)
class Phrase:
    """A wording: ``pattern`` over the prepared clause; ``read`` turns a match into the constraints it states
    (an empty list: the words are read and state nothing more), or None when the match is not this wording (the
    words stay unread)."""

    pattern: str
    read: Callable[[re.Match[str], WorkingClause], Sequence[Constraint] | None]


def read_phrases(cl: WorkingClause, phrases: Sequence[Phrase]) -> None:
    """Read the wordings of ``phrases`` in ``cl``, in their order."""
    for phrase in phrases:

        def read(m: re.Match[str], phrase: Phrase = phrase) -> bool:
            said = phrase.read(m, cl)
            if said is None:
                return False
            for c in said:
                cl.add(c.to_dict())
            return True

        cl.each(phrase.pattern, read)


def quoted(cl: WorkingClause, text: str) -> list[str]:
    """The quoted texts whose tokens ``text`` holds, in order."""
    return [cl.q(t) for t in re.findall(Q, text)]
