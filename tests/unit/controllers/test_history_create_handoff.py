"""``History.create(handoff=True)`` on a real in-process server stores what the copied create
stores, answers alike, and leaves the caller's revision (its memo's candidate) as it was.

The handed-off body is :func:`history.named_revision`'s: its own but for ``data``, which is the
caller's and becomes the stored revision's. Differential over random revisions (labels,
annotations with characters JSON escapes, several containers, owner references) and random
name clashes (a stored revision of the same name with other data: the collision count is
bumped; with the same data: it is taken as it is): two servers, one create each, with and
without handoff. Every stored revision and every answer must be equal (server-drawn uids and
times normalised), and the caller's revision equal byte for byte to what it was, its ``data``
the very objects it held.
"""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.interface import CONTROLLERREVISIONS
from apiserver.meta import FakeClock
from apiserver.server.instance import build_api
from apiserver.server.localclient import LocalClient, ReadOnlyObjects
from controllers import history
from controllers.statefulset import utils as su
from controllers.testing import statefulset

pytestmark = pytest.mark.anyio

NS = "default"


def _revision(rnd: random.Random, name: str) -> tuple[Obj, Obj]:
    sts = statefulset(name, rnd.randint(1, 4))
    sts["metadata"]["uid"] = f"uid-{name}"
    template = sts["spec"]["template"]
    template["metadata"]["labels"].update(
        {f"k{i}": rnd.choice(["a", "b-c", "x.y"]) for i in range(rnd.randint(0, 3))}
    )
    if rnd.random() < 0.4:
        template["metadata"]["annotations"] = {"why": rnd.choice(["<x> & y", "\u2028", "plain"])}
    containers = template["spec"]["containers"]
    for i in range(rnd.randint(0, 2)):
        containers.append(
            {"name": f"side{i}", "image": "busybox", "args": ["-c", rnd.choice(["<", "&", "ok"])]}
        )
    rev = history.new_controller_revision(
        sts, su.API_VERSION, su.KIND, template["metadata"]["labels"], su.revision_data(sts), 1, 0
    )
    if rnd.random() < 0.3:
        rev["metadata"]["annotations"] = {"note": rnd.choice(["a", "<b>"])}
    return sts, rev


def _walk_ids(value: Any) -> list[int]:
    """The ids of every dict and list in ``value``, in order."""
    out: list[int] = []
    if isinstance(value, dict):
        out.append(id(value))
        for v in value.values():
            out.extend(_walk_ids(v))
    elif isinstance(value, list):
        out.append(id(value))
        for v in value:
            out.extend(_walk_ids(v))
    return out


def _normal(obj: Obj) -> Obj:
    md = obj["metadata"]
    out: Obj = orjson.loads(orjson.dumps(obj))
    out["metadata"]["uid"] = "UID"
    out["metadata"]["creationTimestamp"] = "T"
    out["metadata"]["resourceVersion"] = "RV"
    for entry in out["metadata"].get("managedFields") or []:
        entry["time"] = "T"
    assert md["resourceVersion"]
    return out


async def _run(seed: int, handoff: bool) -> list[Any]:
    rnd = random.Random(seed)
    api = build_api(clock=FakeClock())
    client = LocalClient(api, read_only_objects=ReadOnlyObjects(enabled=True))
    hist = history.History(client)  # type: ignore[arg-type]
    log: list[Any] = []
    for i in range(8):
        sts, rev = _revision(rnd, f"s{i}")
        clash = rnd.random()
        if clash < 0.5:
            # a stored revision under the first attempt's name: other data (a collision) or the same
            other = rnd.random() < 0.6
            stored = orjson.loads(
                orjson.dumps(history.named_revision(rev, f"s{i}", history.hash_revision(rev["data"], 0)))
            )
            if other:
                stored["data"] = {"other": i}
            await client.create(CONTROLLERREVISIONS, stored, NS)
        before = orjson.dumps(rev)
        ids = _walk_ids(rev["data"])
        try:
            got, collision = await hist.create(sts, rev, 0, handoff=handoff)
            log.append(("created", _normal(got), collision))
        except errors.StatusError as e:  # never expected: logged so both sides must agree
            log.append(("error", e.code))
        assert orjson.dumps(rev) == before, "the caller's revision changed"
        assert _walk_ids(rev["data"]) == ids, "the caller's data was replaced"
    items = (await client.list(CONTROLLERREVISIONS, NS))["items"]
    log.append(("stored", sorted(orjson.dumps(_normal(o)) for o in items)))
    client.read_only_objects.verify()
    return log


@pytest.mark.parametrize("seed", range(6))
async def test_handed_off_revision_creates_store_what_copied_ones_store(seed: int) -> None:
    handed_off = await _run(seed, True)
    copied = await _run(seed, False)
    assert any(entry[0] == "created" and entry[2] > 0 for entry in copied) or seed > 2
    assert handed_off == copied
