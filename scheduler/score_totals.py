"""The end of a scheduling cycle in numpy arrays: the Score columns added, the host picked.

When the Score plugins give their columns as arrays (:class:`~scheduler.interfaces.ArrayScorePlugin`,
e.g. NodeResourcesFit and PodTopologySpread over the node table's window), the totals and the
pick stay in numpy instead of going back to Python lists: the same integers added in the same
order (int64 sums of scores at most 100 times small weights are exact), the same best total,
the same tied nodes in node order and the same random draw as
:func:`scheduler.schedule_one.select_from_totals` on lists (``randrange`` over the number of
ties, then the draw-th tied node), so the host and the random stream are kube's either way.

This module imports numpy: the cycle imports it only once some column is an array (a plugin
already imported numpy then).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np

_MAX = np.maximum.reduce
_MIN = np.minimum.reduce


def bounds(column: np.ndarray) -> tuple[int, int]:
    """The least and greatest values of a 1-D int64 column, as ``int(column.min())`` and
    ``int(column.max())`` give them, by the ufuncs directly (their Python wrappers cost about
    as much again: ~1.3 µs per Score column per cycle)."""
    return int(_MIN(column)), int(_MAX(column))


def add_columns(columns: Sequence[Any]) -> np.ndarray:
    """The element-wise sum of the columns (lists or int64 arrays, at least one of each length)."""
    total = np.array(columns[0], dtype=np.int64)  # a copy: a column may be a plugin's view
    for col in columns[1:]:
        total += np.asarray(col, dtype=np.int64)
    return total


def select(rng: random.Random, nodes: Sequence[Any], totals: np.ndarray) -> str:
    """The name of a node with the highest total, uniformly among ties (kube's reservoir
    sampling, drawn as :func:`~scheduler.schedule_one.select_from_totals` draws it)."""
    # ``argmax`` (a method in C, ~0.2 µs; the reduction ufunc ~0.6) finds a greatest total, and
    # ``nonzero`` directly (a 1-D array): the same ties as ``np.flatnonzero(totals == totals.max())``
    # without the Python wrappers, ~1 µs per pick of a run's pod
    tied = (totals == totals[totals.argmax()]).nonzero()[0]
    if len(tied) == 1:
        return nodes[int(tied[0])].name  # type: ignore[no-any-return]
    return nodes[int(tied[rng.randrange(len(tied))])].name  # type: ignore[no-any-return]
