"""The clusterrole-aggregation controller fills aggregated ClusterRoles from labelled ClusterRoles.

The bootstrap ``view``/``edit``/``admin`` roles pick up the ``system:aggregate-to-*`` rules (``edit``
includes ``view``'s, ``admin`` includes both), a user ClusterRole labelled
``aggregate-to-view`` extends all three, and removing the label takes its rules away again.
"""

from __future__ import annotations

import pytest

from apiserver.client.interface import GVR
from apiserver.registry.bootstrap_policy import _admin_rules, _edit_rules, _view_rules
from controllers.clusterroleaggregation import NAME, aggregated_rules, new_clusterrole_aggregation_controller
from tests.helpers import wait_for_object

pytestmark = pytest.mark.anyio
CLUSTERROLES = GVR("rbac.authorization.k8s.io", "v1", "clusterroles")
VIEW_LABEL = "rbac.authorization.k8s.io/aggregate-to-view"
CRD_RULE = {"verbs": ["get", "list", "watch"], "apiGroups": ["example.com"], "resources": ["widgets"]}


def _rules_are(expected: list[dict]):  # noqa: ANN202 - predicate factory
    return lambda o: o is not None and (o.get("rules") or []) == expected


async def test_bootstrap_roles_are_aggregated(cp, client) -> None:
    cp.register(NAME, new_clusterrole_aggregation_controller)
    await cp.start_component(NAME)
    view = _view_rules()
    edit = _edit_rules() + [r for r in view if r not in _edit_rules()]
    await wait_for_object(client, CLUSTERROLES, "view", cond=_rules_are(view))
    await wait_for_object(client, CLUSTERROLES, "edit", cond=_rules_are(edit))
    # admin aggregates edit: wait for it to have caught up with edit's final rules, not an earlier pass
    admin = await wait_for_object(
        client,
        CLUSTERROLES,
        "admin",
        cond=lambda o: o is not None and all(r in (o.get("rules") or []) for r in _admin_rules() + edit),
    )
    assert [m["manager"] for m in admin["metadata"]["managedFields"] if m["operation"] == "Apply"] == [NAME]


async def test_labelled_cluster_role_extends_and_leaves_the_aggregate(cp, client) -> None:
    cp.register(NAME, new_clusterrole_aggregation_controller)
    await cp.start_component(NAME)
    await wait_for_object(client, CLUSTERROLES, "view", cond=_rules_are(_view_rules()))
    await client.create(
        CLUSTERROLES,
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "widgets-view", "labels": {VIEW_LABEL: "true"}},
            "rules": [CRD_RULE],
        },
    )
    await wait_for_object(client, CLUSTERROLES, "view", cond=_rules_are(_view_rules() + [CRD_RULE]))
    edit = await wait_for_object(
        client, CLUSTERROLES, "edit", cond=lambda o: o is not None and CRD_RULE in (o.get("rules") or [])
    )
    assert edit is not None
    await client.patch(CLUSTERROLES, "widgets-view", {"metadata": {"labels": {VIEW_LABEL: None}}})
    await wait_for_object(client, CLUSTERROLES, "view", cond=_rules_are(_view_rules()))


def test_aggregated_rules_orders_by_selector_then_name_and_deduplicates() -> None:
    sel = {"clusterRoleSelectors": [{"matchLabels": {"a": "1"}}, {"matchLabels": {"b": "1"}}]}
    r1, r2, r3 = (
        {"verbs": ["get"], "apiGroups": [""], "resources": [x]} for x in ("pods", "secrets", "nodes")
    )
    roles = [
        {"metadata": {"name": "agg", "labels": {"a": "1"}}, "aggregationRule": sel, "rules": [r3]},
        {"metadata": {"name": "z", "labels": {"a": "1"}}, "rules": [r2]},
        {"metadata": {"name": "m", "labels": {"a": "1", "b": "1"}}, "rules": [r1, r2]},
        {"metadata": {"name": "b-only", "labels": {"b": "1"}}, "rules": [r3]},
    ]
    assert aggregated_rules(roles[0], roles) == [r1, r2, r3]
