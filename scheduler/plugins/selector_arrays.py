"""NodeAffinity's Filter for a pod with only a ``nodeSelector``, as a mask over the node table.

The nodes a plain ``nodeSelector`` accepts are those whose label ids equal the selector's value
ids for every key: a few array comparisons instead of a Filter call on every node visited. The
answer is a :class:`~scheduler.interfaces.FilterHint` (the accepted nodes, or the rejected ones
when they are fewer), so the framework runs NodeAffinity's Filter nowhere and reports its status
on the rejected nodes it visits: the same feasible nodes and statuses as the per-node Filter
(``tests/unit/test_scheduler_nodetable.py`` compares them). Imported only once a cycle uses the
table (numpy stays off the start-up path).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from scheduler.interfaces import FilterHint
from scheduler.nodetable import NodeTable
from scheduler.status import Status


def node_selector_hint(table: NodeTable, selector: Mapping[str, str], status: Status) -> FilterHint:
    """The hint for ``spec.nodeSelector`` = ``selector`` over every node of ``table``."""
    n = len(table)
    mask = np.ones(n, dtype=bool)
    for key, value in selector.items():
        ids, index, _ = table.label_ids(key)
        vid = index.get(value) if isinstance(value, str) else None
        if vid is None:
            mask[:] = False  # no node carries this value
            break
        mask &= ids == vid
    names = table.names
    matched = np.flatnonzero(mask).tolist()
    if len(matched) * 2 <= n:
        return FilterHint(passes=frozenset(names[i] for i in matched), status=status)
    return FilterHint(
        check=frozenset(names[i] for i in np.flatnonzero(~mask).tolist()), rejects=True, status=status
    )
