"""The update revision remembered per set (controllers/statefulset/revisions.py, ``RevisionMemo.update_revision``).

Through a set's life (created, a template change, a rollback to an earlier template, a changed
annotation), after each step settles the memo's answer is compared with the search it replaces
(the newest stored revision whose data equals the candidate for the current template), over the
cache's revisions.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import CONTROLLERREVISIONS, STATEFULSETS
from apiserver.meta import get_path, key_of
from controllers import history
from controllers.manager import STATEFULSET, register_controllers
from controllers.statefulset import StatefulSetController
from controllers.testing import statefulset, wait_object
from gangplane.controlplane import ControlPlane
from tests.integration.kep6277_support import settled

pytestmark = pytest.mark.anyio


@pytest.fixture
async def ctrl(cp: ControlPlane) -> AsyncIterator[StatefulSetController]:
    register_controllers(cp, STATEFULSET)
    comp = await cp.start_component(STATEFULSET)
    assert isinstance(comp, StatefulSetController)
    yield comp


async def observed(client: Any, ctrl: StatefulSetController) -> str:
    """Until the set's status is of its generation and the controller has settled; its updateRevision."""
    got = await wait_object(
        client,
        STATEFULSETS,
        "web",
        "default",
        lambda o: (
            o is not None and (o.get("status") or {}).get("observedGeneration") == o["metadata"]["generation"]
        ),
    )
    assert got is not None
    await settled(ctrl, client, "web")
    return str(got["status"]["updateRevision"])


def memo_and_search(ctrl: StatefulSetController) -> tuple[Obj | None, Obj]:
    """(the memo's update revision, the search's) for the cached set."""
    sts = ctrl.sets.get_by_name("default", "web")
    assert sts is not None
    revisions = history.sort_revisions(
        [r for r in ctrl.revisions.list("default") if r["metadata"]["labels"].get("app") == "web"]
    )
    collision = int(get_path(sts, "status.collisionCount", 0) or 0)
    memo = ctrl.control.memo.update_revision(sts, key_of(sts), collision, revisions)
    candidate = ctrl.control._new_revision(sts, history.next_revision(revisions), collision)
    equal = history.find_equal_revisions(revisions, candidate)
    return memo, equal[-1]


async def test_the_memo_gives_what_the_search_finds_through_updates_and_a_rollback(
    client: Any, ctrl: StatefulSetController
) -> None:
    await client.create(
        STATEFULSETS,
        statefulset("web", 1, policy="Parallel", updateStrategy={"type": "OnDelete"}),
        "default",
    )

    async def set_image(image: str) -> str:
        patch = {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": image}]}}}}
        await client.patch(STATEFULSETS, "web", patch, "default")
        return await observed(client, ctrl)

    names = [await observed(client, ctrl)]
    for image in ("v1", "v2", "v1"):  # the last one is a rollback: r1 renumbered
        names.append(await set_image(image))
        memo, search = memo_and_search(ctrl)
        assert memo is None or memo is search
        await ctrl.sync("default/web")  # a sync that writes nothing remembers what it found
        memo, search = memo_and_search(ctrl)
        assert memo is search and memo["metadata"]["name"] == names[-1]
    assert names[3] == names[1]
    renumbered = await client.get(CONTROLLERREVISIONS, names[1], "default")
    assert renumbered["revision"] == 4
    # an annotation is copied into revisions: a new candidate, the memo does not answer for it
    await client.patch(STATEFULSETS, "web", {"metadata": {"annotations": {"a": "b"}}}, "default")
    await wait_object(
        client, STATEFULSETS, "web", "default", lambda o: o is not None and o["metadata"].get("annotations")
    )
    await observed(client, ctrl)
    memo, search = memo_and_search(ctrl)
    assert memo is None or memo is search


async def test_the_sync_after_the_creating_one_finds_the_created_revision_in_the_memo(
    client: Any, ctrl: StatefulSetController
) -> None:
    await client.create(STATEFULSETS, statefulset("web", 2, policy="Parallel"), "default")
    name = await observed(client, ctrl)
    memo, search = memo_and_search(ctrl)
    assert memo is search and memo["metadata"]["name"] == name
