"""Comparisons answered by the pair memo (and atomic subtrees added without a walk) yield what
the full structured-merge-diff walk yields, on random status changes, and raise where it raises.

Each pair is compared several times over (the first comparison fills the memo, the others are
answered by it) and against the reference walk of :mod:`.test_tracker`, with and without the
reset fields of a status write skipped.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

import apiserver.patch.apply as apply_mod
from apiserver.patch.apply import _compare_excluding, compare_values, default_reset_fields
from apiserver.patch.fieldpath import FieldSet, key, make_path

from .test_tracker import POD, _mutate, _random_pod, reference

NOW = "2026-12-05T08:00:00Z"
LATER = "2026-12-05T08:00:01Z"
RESETS = [
    None,
    default_reset_fields(""),
    default_reset_fields("status"),
    FieldSet([make_path("status", "podIPs")]),
]


def _condition(rnd: random.Random, ctype: str) -> dict[str, Any]:
    cond: dict[str, Any] = {
        "type": ctype,
        "status": rnd.choice(["True", "False", True, 1]),
        "lastProbeTime": None,
        "lastTransitionTime": rnd.choice([NOW, LATER]),
    }
    if rnd.random() < 0.5:
        cond["observedGeneration"] = rnd.choice([1, 1.0, 2])
    return cond


def _status(rnd: random.Random) -> dict[str, Any]:
    """A pod status as the node agent writes them, with the odd wrong type or duplicate key."""
    types = rnd.sample(["PodScheduled", "Initialized", "ContainersReady", "Ready", "X"], rnd.randint(0, 5))
    if types and rnd.random() < 0.1:
        types.append(types[0])  # a duplicate key: the first item wins in both walks
    status: dict[str, Any] = {
        "phase": rnd.choice(["Pending", "Running"]),
        "conditions": [_condition(rnd, t) for t in types],
    }
    if rnd.random() < 0.6:
        ip = f"10.0.0.{rnd.randint(1, 3)}"
        status["podIP"] = ip
        status["podIPs"] = [{"ip": ip}] if rnd.random() < 0.9 else [{"ip": 1}]
        status["hostIPs"] = [{"ip": "172.16.0.1"}]
    if rnd.random() < 0.6:
        status["containerStatuses"] = [
            {"name": "c", "ready": rnd.choice([True, False]), "state": {"running": {"startedAt": NOW}}}
        ]
    if rnd.random() < 0.1:
        status["conditions"] = {"not": "a list"}
    return status


def _outcome(a: Any, b: Any, ignored: FieldSet | None) -> Any:
    try:
        if ignored is None:
            got = compare_values(a, b, POD)
        else:
            got = _compare_excluding(a, b, POD, ignored)
    except ValueError as e:
        return ("error", type(e), str(e))
    return (got.added, got.modified, got.removed)


def _reference_outcome(a: Any, b: Any, ignored: FieldSet | None) -> Any:
    try:
        want = reference(a, b, POD, ignored)
    except ValueError as e:
        return ("error", type(e), str(e))
    return (want["added"], want["modified"], want["removed"])


@pytest.mark.parametrize("seed", range(4))
def test_status_changes_compare_as_the_full_walk_when_the_memo_answers(seed: int) -> None:
    rnd = random.Random(seed)
    apply_mod._PAIRS.clear()
    pairs = []
    for _ in range(60):
        old = _random_pod(rnd)
        old["status"] = _status(rnd)
        new = copy.deepcopy(old) if rnd.random() < 0.2 else _mutate(rnd, old) if rnd.random() < 0.2 else old
        new = copy.deepcopy(new)
        new["status"] = _status(rnd) if rnd.random() < 0.8 else copy.deepcopy(old["status"])
        pairs.append((old, new))
    answered = 0
    for _ in range(2):  # the second round finds every pair remembered
        for old, new in pairs:
            for ignored in RESETS:
                want = _reference_outcome(old, new, ignored)
                before = len(apply_mod._PAIRS)
                assert _outcome(old, new, ignored) == want
                # copies: equal values, other objects (the memo keys on values, not identity)
                assert _outcome(copy.deepcopy(old), json.loads(json.dumps(new)), ignored) == want
                answered += len(apply_mod._PAIRS) == before
    assert answered > 100  # comparisons the memo answered (nothing new remembered)
    assert len(apply_mod._PAIRS) > 0


def test_pairs_that_differ_only_in_exact_types_are_not_confused() -> None:
    """``1`` and ``true`` name different set items; ``1`` and ``1.0`` are equal scalars that
    structured-merge-diff still compares by type: each pair gets its own comparison."""
    base = _random_pod(random.Random(0))
    for left, right in (([1], [True]), ([True], [1]), ([1], [1.0]), (["a"], ["a", 1])):
        for _ in range(2):
            a = copy.deepcopy(base)
            b = copy.deepcopy(base)
            a["metadata"]["finalizers"] = left
            b["metadata"]["finalizers"] = right
            a["status"]["conditions"] = [{"type": "Ready", "status": left[0]}]
            b["status"]["conditions"] = [{"type": "Ready", "status": right[0]}]
            assert _outcome(a, b, None) == _reference_outcome(a, b, None)


def test_a_pair_whose_comparison_raises_raises_every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """NaN cannot name a list item: the comparison raises, as the walk without the memo does."""
    a = _random_pod(random.Random(1))
    b = copy.deepcopy(a)
    a["status"]["conditions"] = [{"type": float("nan"), "status": "True"}]
    b["status"]["conditions"] = [{"type": float("nan"), "status": "False"}]
    first = _outcome(a, b, None)
    assert first[0] == "error"
    assert _outcome(a, b, None) == first
    with monkeypatch.context() as m:
        m.setattr(apply_mod, "_PAIR_DEPTH", 0)  # no pair memo
        assert _outcome(a, b, None) == first


def test_atomic_subtrees_are_one_leaf_and_leave_the_walk_memo_alone() -> None:
    """A pod's containerStatuses and hostIPs are atomic lists: one path each, whatever they hold,
    and no walk of them is remembered (every pod's are its own)."""
    apply_mod._WALKS.clear()
    a = _random_pod(random.Random(2))
    a["status"] = {"phase": "Pending"}
    for i in range(5):
        b = copy.deepcopy(a)
        b["status"]["containerStatuses"] = [{"name": "c", "containerID": f"containerd://{i}", "ready": True}]
        b["status"]["hostIPs"] = [{"ip": f"172.16.0.{i}"}]
        got = compare_values(a, b, POD)
        assert got.added == FieldSet(
            [make_path("status", "containerStatuses"), make_path("status", "hostIPs")]
        )
        assert _outcome(a, b, None) == _reference_outcome(a, b, None)
    assert not apply_mod._WALKS


def test_the_same_pair_at_another_path_or_under_other_reset_fields_is_compared_there() -> None:
    """A remembered pair answers for its own path and reset fields only: the same two label
    maps as annotations, or the same conditions with one of them reset, yield their own paths."""
    apply_mod._PAIRS.clear()
    a = _random_pod(random.Random(3))
    a["metadata"]["labels"] = {"x": "1"}
    a["metadata"]["annotations"] = {"x": "1"}
    a["status"]["conditions"] = [{"type": "Ready", "status": "False"}, {"type": "X", "status": "False"}]
    b = copy.deepcopy(a)
    b["metadata"]["labels"] = b["metadata"]["annotations"] = {"x": "2", "y": "3"}
    b["status"]["conditions"] = [{"type": "Ready", "status": "True"}, {"type": "X", "status": "True"}]
    reset_ready = FieldSet([make_path("status", "conditions", key({"type": "Ready"}))])
    for ignored in (None, reset_ready, default_reset_fields("status"), None, reset_ready):
        want = _reference_outcome(a, b, ignored)
        assert _outcome(a, b, ignored) == want
    # and a pair met under one path, then under the other only
    c = copy.deepcopy(a)
    c["metadata"]["annotations"] = {"x": "2", "y": "3"}
    assert _outcome(a, c, None) == _reference_outcome(a, c, None)
    d = copy.deepcopy(a)
    d["metadata"]["labels"] = {"x": "2", "y": "3"}
    assert _outcome(a, d, None) == _reference_outcome(a, d, None)
