"""Owner lookup for dependents' events: controller references by kind, group and UID; orphans by selector."""

from __future__ import annotations

import pytest

from apiserver.client.informer import Informer
from apiserver.client.interface import GVR
from controllers.ownerlookup import (
    owners_of_added,
    owners_of_updated,
    owners_selecting,
    resolve_controller_ref,
)

DEPLOYMENTS = GVR("apps", "v1", "deployments")

pytestmark = pytest.mark.anyio


def deployment(name: str, uid: str, selector: object) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default", "uid": uid},
        "spec": {
            "selector": selector,
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": []}},
        },
    }


async def _owners(cp, client) -> Informer:  # noqa: ANN001
    for name, sel in (("web", {"matchLabels": {"app": "web"}}), ("all", {})):
        obj = deployment(name, "", sel)
        obj["spec"]["template"]["metadata"]["labels"] = {"app": "web"}
        if not sel:
            obj["spec"]["selector"] = {"matchLabels": {"app": "web", "tier": "x"}}
            obj["spec"]["template"]["metadata"]["labels"] = {"app": "web", "tier": "x"}
        obj["spec"]["template"]["spec"]["containers"] = [{"name": "c", "image": "i"}]
        await client.create(DEPLOYMENTS, obj, "default")
    inf = Informer(cp.client("lookup"), DEPLOYMENTS)
    inf.start()
    await inf.wait_for_sync()
    return inf


async def test_controller_ref_resolves_only_with_kind_group_and_uid(cp, client) -> None:
    inf = await _owners(cp, client)
    try:
        web = inf.get_by_name("default", "web")
        uid = web["metadata"]["uid"]
        ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": uid, "controller": True}
        assert resolve_controller_ref(inf, "default", ref, "Deployment", "apps") is web
        assert resolve_controller_ref(inf, "default", {**ref, "uid": "other"}, "Deployment", "apps") is None
        assert (
            resolve_controller_ref(inf, "default", {**ref, "kind": "ReplicaSet"}, "Deployment", "apps")
            is None
        )
        assert (
            resolve_controller_ref(inf, "default", {**ref, "apiVersion": "v1"}, "Deployment", "apps") is None
        )
        assert resolve_controller_ref(inf, "other", ref, "Deployment", "apps") is None
        assert resolve_controller_ref(inf, "default", None, "Deployment", "apps") is None
    finally:
        await inf.stop()


async def test_orphans_match_owners_by_selector_in_their_namespace(cp, client) -> None:
    inf = await _owners(cp, client)
    try:
        pod = {"metadata": {"name": "p", "namespace": "default", "labels": {"app": "web", "tier": "x"}}}
        assert sorted(o["metadata"]["name"] for o in owners_selecting(inf, pod)) == ["all", "web"]
        pod["metadata"]["labels"] = {"app": "web"}
        assert [o["metadata"]["name"] for o in owners_selecting(inf, pod)] == ["web"]
        pod["metadata"]["namespace"] = "kube-system"
        assert owners_selecting(inf, pod) == []

        def broken(owner: dict) -> object:
            raise ValueError("malformed selector")

        assert (
            owners_selecting(inf, {"metadata": {"namespace": "default", "labels": {"app": "web"}}}, broken)
            == []
        )
    finally:
        await inf.stop()


def _pod(labels: dict[str, str], owner: dict | None = None) -> dict:
    md: dict = {"name": "p", "namespace": "default", "labels": labels, "resourceVersion": "1"}
    if owner is not None:
        md["ownerReferences"] = [{**owner, "controller": True}]
    return {"metadata": md}


_A = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "a", "uid": "ua"}
_B = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "b", "uid": "ub"}
_OWNERS = {"ua": {"metadata": {"name": "a", "uid": "ua"}}, "ub": {"metadata": {"name": "b", "uid": "ub"}}}
_SELECTING = [{"metadata": {"name": "sel", "uid": "us"}}]


def _resolve(namespace: str, ref: dict | None) -> dict | None:
    return None if ref is None else _OWNERS.get(ref.get("uid", ""))


def _orphan_owners(pod: dict) -> list[dict]:
    return _SELECTING if pod["metadata"]["labels"].get("app") == "web" else []


def _names(owners: list[dict]) -> list[str]:
    return [o["metadata"]["name"] for o in owners]


@pytest.mark.parametrize(
    ("owner", "want"),
    [
        pytest.param(_A, ["a"], id="controlled: its controller"),
        pytest.param({**_A, "uid": "stale"}, [], id="controller does not resolve: nobody, not the selectors"),
        pytest.param(None, ["sel"], id="orphan: every owner selecting it"),
    ],
)
def test_owners_of_added(owner: dict | None, want: list[str]) -> None:
    assert _names(owners_of_added(_pod({"app": "web"}, owner), _resolve, _orphan_owners)) == want


@pytest.mark.parametrize(
    ("old", "cur", "want", "controller"),
    [
        pytest.param(_pod({"app": "web"}, _A), _pod({"app": "web"}, _A), ["a"], "a", id="same controller"),
        pytest.param(_pod({}, _A), _pod({}, _B), ["a", "b"], "b", id="controller changed: old, then new"),
        pytest.param(
            _pod({"app": "web"}, _A),
            _pod({"app": "web"}),
            ["a", "sel"],
            None,
            id="released: old, then selectors",
        ),
        pytest.param(_pod({}), _pod({"app": "web"}), ["sel"], None, id="orphan relabelled: selectors"),
        pytest.param(_pod({"app": "web"}), _pod({"app": "web"}), [], None, id="orphan unchanged: nobody"),
        pytest.param(
            _pod({}, _A), _pod({"app": "web"}, {**_B, "uid": "stale"}), ["a"], None, id="new controller gone"
        ),
    ],
)
def test_owners_of_updated(old: dict, cur: dict, want: list[str], controller: str | None) -> None:
    owners, now = owners_of_updated(old, cur, _resolve, _orphan_owners)
    assert _names(owners) == want
    assert (None if now is None else now["metadata"]["name"]) == controller
