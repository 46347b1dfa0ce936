"""A table of at most N entries that drops its oldest first (the templates' recent-item tables).

The managedFields templates keep a few recent items each (the joins and entry lists of the sets a
controller creates at once, the stored-entry texts of a few seconds' status writes): a dict in
insertion order bounded by dropping its first key keeps the newest, where clearing a full table
would drop the ones still in use.
"""

from __future__ import annotations

from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


def keep(table: dict[K, V], key: K, value: V, bound: int) -> None:
    """``table[key] = value`` in a table of at most ``bound`` entries, the oldest dropped first."""
    if key not in table and len(table) >= bound:
        del table[next(iter(table))]
    table[key] = value


__all__ = ["keep"]
