"""Where a grammar's decisions come from: hypothesis in the suite, a seeded PRNG in the bench.

The grammar only ever asks for one of a few options or an integer in a range, so the same
generator code runs under hypothesis and under :class:`random.Random` (cheap, for 10,000+
requests without a test dependency).

Under hypothesis, the *shape* of a request (endpoint, aspect, verb, content type, which query
parameters and headers) is drawn decision by decision, so a failure shrinks to a plain request;
the hostile *values* inside it come from :attr:`Chooser.detail`, a PRNG seeded by one draw.
Drawing those values one by one as well made hypothesis repeat itself: 139 distinct requests
out of 250, none of them deeply nested.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol, TypeVar

T = TypeVar("T")


class Chooser(Protocol):
    #: whether the grammar may build values that cost a server seconds (60,000-item lists,
    #: 5,000-deep YAML, 70 KB strings): the long run does, the suite's bounded run does not
    heavy: bool

    @property
    def detail(self) -> Chooser:
        """Where the hostile values inside a request come from (may be ``self``)."""
        ...

    def pick(self, options: Sequence[T]) -> T:
        """One of ``options`` (hypothesis shrinks towards the first: put the plain case first)."""
        ...

    def number(self, lo: int, hi: int) -> int:
        """An integer in ``[lo, hi]``."""
        ...


class RandomChooser:
    """A :class:`Chooser` over a seeded :class:`random.Random` (reproducible from the seed)."""

    def __init__(self, seed: int, heavy: bool = True) -> None:
        self._rng = random.Random(seed)
        self.heavy = heavy

    @property
    def detail(self) -> RandomChooser:
        return self

    def pick(self, options: Sequence[T]) -> T:
        return options[self._rng.randrange(len(options))]

    def number(self, lo: int, hi: int) -> int:
        return self._rng.randint(lo, hi)


def chance(c: Chooser, one_in: int) -> bool:
    """True about once in ``one_in`` decisions (False is the shrunk, plain case)."""
    return c.number(0, one_in - 1) == one_in - 1
