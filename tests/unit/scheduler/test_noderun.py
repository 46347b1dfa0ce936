"""A cycle's window made by ``Snapshot.run`` carries its proof of being a run of the snapshot's
consecutive nodes (:mod:`scheduler.noderun`): ``Snapshot.is_run`` and the node table's rows
(``nodetable.rows_for``) answer for it without comparing it element by element. These tests
check, over random histories of cache and snapshot changes (pods assumed, confirmed, removed;
nodes changed, joining and leaving; what-ifs assumed and forgotten in the snapshot; windows
kept across changes, tables read before them, windows edited in place), that every answer
equals the element-wise one for the same nodes as a plain list."""

from __future__ import annotations

import random
from typing import Any

import pytest

from scheduler import arraypolicy
from scheduler.cache import Snapshot
from scheduler.framework import CycleState
from scheduler.nodeinfo import PodInfo
from scheduler.noderun import NodeRun
from scheduler.nodetable import NodeTable, rows_for
from scheduler.testing import make_node, make_pod, zoned_cache

ZONE = "topology.kubernetes.io/zone"


def _rows(rows: Any, n: int) -> list[int] | None:
    """Rows (a slice, an index array or ``None``) as a list of row numbers."""
    if rows is None:
        return None
    if isinstance(rows, slice):
        return list(range(n))[rows]
    return [int(r) for r in rows]


def _check(snap: Snapshot, run: NodeRun, old_table: NodeTable | None) -> bool:
    plain = list(run)
    answer = snap.is_run(run)
    assert answer == snap.is_run(plain)
    # the snapshot's table as it is (rows possibly not refilled yet), then after a read
    unread = snap._table
    for table in (unread, snap.node_table(), old_table):
        if table is None:
            continue
        n = len(table)
        got = _rows(rows_for(CycleState(), table, run), n)
        assert got == _rows(table.rows_of(plain, arraypolicy.MAPPED_MIN_NODES), n)
    # the invariant the proof leans on: rows exact at the table's epoch hold the NodeInfos
    if snap._table_epoch == snap._epoch and snap._table is not None:
        assert all(a is b for a, b in zip(snap._table.infos, snap.ordered(), strict=True))
    return answer


@pytest.mark.parametrize("seed", range(8))
def test_a_run_answers_as_its_elements_do(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    real_rows = Snapshot.run_rows
    by_proof = [0]

    def counted(self: Snapshot, nodes: NodeRun, table: NodeTable) -> Any:
        rows = real_rows(self, nodes, table)
        by_proof[0] += rows is not None
        return rows

    monkeypatch.setattr(Snapshot, "run_rows", counted)
    cache, names = zoned_cache(16)
    snap = cache.snapshot()
    snap.node_table()
    runs: list[NodeRun] = []
    proven = kept = 0
    old_table: NodeTable | None = None
    assumed: list[tuple[dict[str, Any], str]] = []
    whatifs: list[tuple[PodInfo, str]] = []
    extra = 0
    for step in range(300):
        op = rng.random()
        if op < 0.25:  # a pod is assumed in the cache
            p = make_pod(f"p{step}", uid=f"u{step}", requests={"cpu": "100m"})
            node = rng.choice(sorted(snap.node_info_map))
            cache.assume_pod(p, node)
            assumed.append((p, node))
        elif op < 0.4 and assumed:  # the bound pod confirms it (the snapshot's refresh path)
            p, node = assumed.pop(rng.randrange(len(assumed)))
            bound = {
                **p,
                "metadata": {**p["metadata"], "resourceVersion": str(step + 1)},
                "spec": {**p["spec"], "nodeName": node},
                "status": {"conditions": [{"type": "PodScheduled", "status": "True"}]},
            }
            cache.add_pod(bound)
        elif op < 0.5:  # a what-if in the snapshot
            pi = PodInfo(make_pod(f"w{step}", uid=f"w{step}", requests={"cpu": "50m"}))
            node = rng.choice(sorted(snap.node_info_map))
            snap.assume_pod(pi, node, defer_index=rng.random() < 0.5)
            whatifs.append((pi, node))
        elif op < 0.55 and whatifs:
            pi, node = whatifs.pop()
            snap.forget_pod(pi, node)
        elif op < 0.6:  # a node changes
            cache.update_node(None, make_node(rng.choice(names), labels={ZONE: f"z{rng.randrange(3)}"}))
        elif op < 0.64:  # a node joins
            name = f"m{extra:02d}"
            extra += 1
            cache.add_node(make_node(name))
            names.append(name)
        elif op < 0.67 and len(names) > 8:  # a node leaves
            name = names.pop(rng.randrange(len(names)))
            cache.remove_node(make_node(name))
            assumed = [(p, n) for p, n in assumed if n != name]
            whatifs = [(p, n) for p, n in whatifs if n != name]
        if rng.random() < 0.4:
            cache.update_snapshot(snap)
            whatifs.clear()
        if rng.random() < 0.2:
            old_table = snap.node_table()  # a table read now, asked after later changes
        if rng.random() < 0.5:  # a window, sometimes wrapping around
            n = len(snap.ordered())
            run = snap.run(rng.randrange(n), rng.randrange(1, n + 1))
            assert isinstance(run, NodeRun)
            if rng.random() < 0.1:  # edited in place: no proof any more
                i = rng.randrange(len(run))
                run[i] = run[(i + 1) % len(run)]
            runs = [run] + runs[:5]
        for run in runs:
            kept += 1
            proven += _check(snap, run, old_table)
    assert proven > 50 and kept > proven  # both answers were given many times
    assert by_proof[0] > 50  # rows found from the proof, not by comparing


def test_editing_a_run_drops_its_proof() -> None:
    cache, _ = zoned_cache(6)
    snap = cache.snapshot()
    edits = [
        lambda r: r.append(r[0]),
        lambda r: r.extend([r[0]]),
        lambda r: r.insert(0, r[-1]),
        lambda r: r.pop(),
        lambda r: r.remove(r[0]),
        lambda r: r.clear(),
        lambda r: r.sort(key=lambda ni: ni.name, reverse=True),
        lambda r: r.reverse(),
        lambda r: r.__setitem__(0, r[1]),
        lambda r: r.__delitem__(0),
        lambda r: r.__iadd__([r[0]]),
        lambda r: r.__imul__(2),
    ]
    for edit in edits:
        run = snap.run(1, 4)
        assert snap.is_run(run) and run.owner is snap
        edit(run)
        assert run.owner is None
        assert snap.is_run(run) == snap.is_run(list(run))
    run = snap.run(4, 4)  # wraps around: n04, n05, n00, n01
    assert [ni.name for ni in run] == ["n04", "n05", "n00", "n01"] and snap.is_run(run)
    assert type(run[1:]) is list and type(run.copy()) is list  # slices and copies carry no proof
