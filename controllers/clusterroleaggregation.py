"""The ClusterRole aggregation controller (kube-controller-manager's ``clusterrole-aggregation``).

A ClusterRole with an ``aggregationRule`` owns no rules of its own: its ``rules`` are the union of
the rules of every *other* ClusterRole matched by any of its ``clusterRoleSelectors`` — selectors
in order, matched roles by name, each distinct rule once. This is how the bootstrap ``admin``,
``edit`` and ``view`` roles pick up ``system:aggregate-to-*`` rules, and how a CRD's chart extends
them (a ClusterRole labelled ``rbac.authorization.k8s.io/aggregate-to-view: "true"``).

Any ClusterRole change can change any aggregate, so every event enqueues every aggregating
ClusterRole; ``sync`` writes only when the computed rules differ, with a forced server-side apply
as field manager ``clusterrole-aggregation-controller`` (what kube sends).
"""

from __future__ import annotations

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.context import ComponentContext
from apiserver.client.interface import GVR
from apiserver.selectors import label_selector_from_dict
from controllers.base import Controller
from controllers.metrics import controller_metrics

NAME = "clusterrole-aggregation-controller"
CLUSTERROLES = GVR("rbac.authorization.k8s.io", "v1", "clusterroles")
APPLY = "application/apply-patch+yaml"


def aggregated_rules(role: Obj, all_roles: list[Obj]) -> list[Obj]:
    """The rules ``role``'s aggregationRule selects (kube's ``syncClusterRole``)."""
    name = (role.get("metadata") or {}).get("name")
    out: list[Obj] = []
    by_name = sorted(all_roles, key=lambda r: (r.get("metadata") or {}).get("name") or "")
    for sel in (role.get("aggregationRule") or {}).get("clusterRoleSelectors") or []:
        try:
            selector = label_selector_from_dict(sel)
        except ValueError:
            continue  # validation refuses such selectors; a stored one selects nothing
        for other in by_name:
            md = other.get("metadata") or {}
            if md.get("name") == name or not selector.matches(md.get("labels") or {}):
                continue
            for rule in other.get("rules") or []:
                if rule not in out:
                    out.append(rule)
    return out


class ClusterRoleAggregationController(Controller):
    name = NAME

    def setup(self) -> None:
        self.roles = self.informers.informer(CLUSTERROLES)
        self.roles.add_event_handler(self._any, lambda old, new: self._any(new), self._any)

    def _any(self, _obj: Obj) -> None:
        for role in self.roles.list():
            if role.get("aggregationRule") is not None:
                self.enqueue(role["metadata"]["name"])

    async def sync(self, key: str) -> None:
        role = self.roles.get(key)
        if role is None or role.get("aggregationRule") is None:
            return
        rules = aggregated_rules(role, self.roles.list())
        if rules == (role.get("rules") or []):
            return
        patch = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": key},
            "rules": rules,
        }
        try:
            await self.client.patch(
                CLUSTERROLES, key, patch, patch_type=APPLY, field_manager=NAME, force=True
            )
        except errors.StatusError as e:
            if e.code == 404:
                return
            raise


def new_clusterrole_aggregation_controller(ctx: ComponentContext) -> ClusterRoleAggregationController:
    return ClusterRoleAggregationController(
        ctx.client(NAME),
        informers=ctx.shared_informers(),
        clock=ctx.clock,
        metrics=controller_metrics(ctx.metrics_registry),
    )
