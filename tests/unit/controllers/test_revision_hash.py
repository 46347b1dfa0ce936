"""The revision hash with the pod spec's share memoized (controllers/revisionhash.py) against the
general FNV-1 over the whole revision (``history.hash_revision``), and the revisions the controller
stores for sets made from one manifest."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import CONTROLLERREVISIONS, STATEFULSETS
from controllers import history
from controllers.manager import STATEFULSET, register_controllers
from controllers.revisionhash import RevisionHasher
from controllers.statefulset import StatefulSetController
from controllers.statefulset import utils as su
from controllers.testing import statefulset
from gangplane.controlplane import ControlPlane
from tests.integration.kep6277_support import settled

_ODD = ["a", "é", "<b>&", "\u2028", "\u2029", "日本", '"q"', "\\", "\t", "\x7f", ""]


def _value(rng: random.Random, depth: int) -> Any:
    kind = rng.randrange(8 if depth < 3 else 5)
    if kind == 0:
        return rng.choice(_ODD) + str(rng.randrange(1000))
    if kind == 1:
        return rng.randrange(-(10**12), 10**12)
    if kind == 2:
        return rng.choice([0.5, 1.0, 1e-7, 2.5e20, -3.25])
    if kind == 3:
        return rng.choice([True, False, None])
    if kind == 4:
        return ""
    if kind == 5:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(_ODD) + str(i): _value(rng, depth + 1) for i in range(rng.randrange(5))}


def _template(rng: random.Random, name: str) -> Obj:
    template: Obj = {"spec": {"containers": [{"name": "c", "image": "i"}], "x": _value(rng, 0)}}
    if rng.random() < 0.8:
        md: Obj = {"labels": {"app": name, rng.choice(_ODD) + "k": rng.choice(_ODD)}}
        if rng.random() < 0.5:
            md["annotations"] = {"note": rng.choice(_ODD) * rng.randrange(3)}
        template["metadata"] = md
    return template


def _data(template: Obj) -> Obj:
    return su.revision_data({"spec": {"template": template}})


def test_the_hash_is_fnv1_of_the_whole_revision_for_random_templates() -> None:
    rng = random.Random(6277)
    hasher = RevisionHasher()
    pod_specs = [_template(rng, "x")["spec"] for _ in range(12)]
    for i in range(300):
        template = _template(rng, f"set-{i}")
        template["spec"] = rng.choice(pod_specs)  # sets sharing pod specs, as from one manifest
        collision = rng.choice([0, 0, 0, 1, 7, 123])
        data = _data(template)
        assert hasher.hash(data, collision) == history.hash_revision(data, collision)
    assert hasher.hits > 200  # most answers came from a kept table
    assert hasher.general == 0


def test_the_same_pod_spec_under_other_labels_reuses_its_table() -> None:
    hasher = RevisionHasher()
    names = [f"g{i}" for i in range(20)]
    for name in names:
        data = su.revision_data(statefulset(name, 3))
        assert hasher.hash(data, 0) == history.hash_revision(data, 0)
    assert (hasher.misses, hasher.hits) == (1, 19)
    # a different collision count is another tail: its own table, the same value as the general path
    data = su.revision_data(statefulset("g0", 3))
    assert hasher.hash(data, 1) == history.hash_revision(data, 1) != history.hash_revision(data, 0)
    assert hasher.misses == 2


def test_other_shapes_take_the_general_path() -> None:
    hasher = RevisionHasher()
    shapes: list[Obj] = [
        {"spec": {"template": {"$patch": "replace", "metadata": {}, "spec": {}, "status": {"a": 1}}}},
        {"spec": {"template": {"$patch": "replace", "metadata": {"labels": {"a": "b"}}}}},
        {"spec": {"template": {"spec": {"a": 1}}, "replicas": 3}},
        {"spec": {"template": {"spec": {"a": 1}}}, "other": 1},
        {"x": 1},
        [],
    ]
    for data in shapes:
        assert hasher.hash(data, 0) == history.hash_revision(data, 0)
    assert hasher.general == len(shapes)
    # a template of the pod spec alone (no $patch, no metadata): no separator before it
    data = {"spec": {"template": {"spec": {"containers": []}}}}
    assert hasher.hash(data, 0) == history.hash_revision(data, 0)
    assert hasher.general == len(shapes)


def test_tables_are_bounded_and_evicted_least_recently_used_first() -> None:
    hasher = RevisionHasher(capacity=2)
    datas = [su.revision_data(statefulset("web", 1, image=f"img:{i}")) for i in range(5)]
    for _ in range(2):
        for data in datas:
            assert hasher.hash(data, 0) == history.hash_revision(data, 0)
        assert len(hasher) == 2
    assert hasher.hits == 0  # each was evicted before it came round again
    hasher.hash(datas[-1], 0)
    assert hasher.hits == 1


def test_the_controllers_candidate_is_the_general_revision() -> None:
    """``_new_revision`` (hash memoized) builds byte for byte what ``new_controller_revision`` does."""
    from controllers.statefulset.control import StatefulSetControl

    control = StatefulSetControl.__new__(StatefulSetControl)
    control.hasher = RevisionHasher()
    for i in range(10):
        sts = statefulset(f"g{i}", 3)
        sts["metadata"].update(uid=f"uid-{i}", generation=1, annotations={"a": "<&>"} if i % 2 else {})
        for collision in (0, 2):
            general = history.new_controller_revision(
                sts,
                su.API_VERSION,
                su.KIND,
                sts["spec"]["template"]["metadata"]["labels"],
                su.revision_data(sts),
                4,
                collision,
            )
            if i % 2:
                general["metadata"]["annotations"] = su.revision_annotations(sts)
            assert orjson.dumps(control._new_revision(sts, 4, collision)) == orjson.dumps(general)


@pytest.fixture
async def ctrl(cp: ControlPlane) -> AsyncIterator[StatefulSetController]:
    register_controllers(cp, STATEFULSET)
    comp = await cp.start_component(STATEFULSET)
    assert isinstance(comp, StatefulSetController)
    yield comp


@pytest.mark.anyio
async def test_sets_from_one_manifest_get_kubes_revision_names(
    client: Any, ctrl: StatefulSetController
) -> None:
    names = [f"web-{i}" for i in range(4)]
    for name in names:
        await client.create(STATEFULSETS, statefulset(name, 1, policy="Parallel"), "default")
    for name in names:
        await settled(ctrl, client, name)
    stored = {r["metadata"]["name"]: r for r in (await client.list(CONTROLLERREVISIONS, "default"))["items"]}
    for name in names:
        sts = await client.get(STATEFULSETS, name, "default")
        want = history.hash_revision(su.revision_data(sts), 0)
        rev = stored[history.revision_name(name, want)]
        assert rev["metadata"]["labels"][history.HASH_LABEL] == want
        assert sts["status"]["updateRevision"] == history.revision_name(name, want)
    assert ctrl.control.hasher.misses == 1
    assert ctrl.control.hasher.hits >= len(names) - 1


def test_a_tail_table_continues_fnv1_from_any_state() -> None:
    """H_t(h) = h·pᵏ + C_t(h mod 256) (mod 2³²) for every state, not only the ones seen."""
    from controllers.revisionhash import _fnv1_from, _Tail

    rng = random.Random(32)
    for length in (0, 1, 2, 7, 64, 600):
        tail = bytes(rng.randrange(256) for _ in range(length))
        table = _Tail(tail)
        for _ in range(200):
            h = rng.randrange(1 << 32)
            assert table.finish(h) == _fnv1_from(h, tail)
    assert history.fnv1_32(b"a") == _fnv1_from(0x811C9DC5, b"a") == 0x050C5D7E
