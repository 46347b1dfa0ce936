"""``NodeTable.refill`` (many rows at once, the pod-only rows in one numpy write per column)
leaves the table exactly as refilling the same rows one by one with ``NodeTable.update`` does.

Two tables built alike take random batches: nodes that took or lost pods (the batched rows),
mixed with Node updates (new allocatable, a zone label moved), huge quantities (inexact rows,
in requests or allocatable), a resource no column has yet, and names without a row; every array,
the NodeInfo per row, the inexact rows, the change log and the label ids must be equal after
every batch.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from scheduler.nodeinfo import NodeInfo, PodInfo
from scheduler.nodetable import NodeTable
from scheduler.testing import make_node, make_pod

GPU = "nvidia.com/gpu"


def _node(rng: random.Random, i: int) -> dict[str, Any]:
    extra = {GPU: str(rng.choice([0, 1, 8]))} if rng.random() < 0.3 else {}
    if rng.random() < 0.03:
        extra["ephemeral-storage"] = "8Ei"  # beyond 2**53 bytes: an inexact row
    node = make_node(
        f"n{i:03d}",
        cpu=rng.choice(["1", "4", "32"]),
        memory=rng.choice(["1Gi", "128Gi"]),
        pods=rng.choice(["3", "110"]),
        extra=extra,
    )
    if rng.random() < 0.8:
        node["metadata"]["labels"]["zone"] = rng.choice(["a", "b", "c"])
    return node


def _pod(rng: random.Random, k: int) -> PodInfo:
    requests = rng.choice(
        [
            {},
            {"cpu": "300m"},
            {"cpu": "5", "memory": "9Gi"},
            {"cpu": "100m", GPU: "1"},
            {"cpu": "1", "example.com/new": "2"},  # a resource no column may have yet
            {"memory": "9Ei"},  # a huge request: the row turns inexact
        ]
        if rng.random() < 0.2
        else [{"cpu": "250m", "memory": "1Gi"}]
    )
    return PodInfo(make_pod(f"p{k}", uid=f"p{k}", requests=requests))


def _state(t: NodeTable) -> Any:
    """Everything a reader of the table can see."""
    labels = {k: (ids.tolist(), dict(index), list(values)) for k, (ids, index, values) in t._labels.items()}
    return (
        t.names,
        dict(t.columns),
        t.allocatable.tolist(),
        t.requested.tolist(),
        t.non_zero_cpu.tolist(),
        t.non_zero_memory.tolist(),
        t.pod_count.tolist(),
        set(t.inexact),
        list(t._log),
        t._log_base,
        t.version,
        labels,
        {k: list(v) for k, v in t._label_stats.items()},
    )


@pytest.mark.parametrize("seed", range(12))
def test_refill_equals_updating_row_by_row(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    gathered = 0
    real = NodeTable._write_rows

    def counting(self: NodeTable, rows: list[int], *columns: Any) -> None:
        nonlocal gathered
        gathered += len(rows)
        real(self, rows, *columns)

    monkeypatch.setattr(NodeTable, "_write_rows", counting)
    rng = random.Random(seed)
    n = rng.choice([20, 50, 90])
    infos = {f"n{i:03d}": NodeInfo(_node(rng, i)) for i in range(n)}
    ordered = [infos[k] for k in sorted(infos)]
    batched, single = NodeTable(ordered), NodeTable(ordered)
    for t in (batched, single):
        t.label_ids("zone")
    k = 0
    for step in range(40):
        batch: list[tuple[str, NodeInfo]] = []
        for name in rng.sample(sorted(infos), rng.randrange(1, n + 1)):
            ni = infos[name].clone()
            op = rng.random()
            if op < 0.75 or not ni.pods:  # took a pod (the batched rows)
                k += 1
                ni.add_pod_info(_pod(rng, k))
            elif op < 0.88:  # lost one
                ni.remove_pod(rng.choice(ni.pods).key)
            else:  # a Node update: a new Node object (new allocatable and labels dicts)
                ni.set_node(_node(rng, int(name[1:])))
            infos[name] = ni
            batch.append((name, ni))
        if rng.random() < 0.05:
            batch.insert(rng.randrange(len(batch) + 1), ("gone", NodeInfo(make_node("gone"))))
        got = batched.refill(batch)
        want = True
        for name, ni in batch:
            if not single.update(name, ni):
                want = False
                break
        assert got == want
        if not got:  # the snapshot rebuilds such a table: start both afresh
            ordered = [infos[k] for k in sorted(infos)]
            batched, single = NodeTable(ordered), NodeTable(ordered)
            for t in (batched, single):
                t.label_ids("zone")
            continue
        assert _state(batched) == _state(single), step
        assert all(a is b for a, b in zip(batched.infos, single.infos, strict=True))
        np.testing.assert_array_equal(batched.requested, single.requested)
    assert gathered > 200  # most rows took the batched write
