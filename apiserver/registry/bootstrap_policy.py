"""The objects kube-apiserver's post-start hooks create: bootstrap RBAC roles and local APIServices.

* ``rbac/bootstrap-roles`` creates the default ClusterRoles charts bind to — ``cluster-admin``
  and the user-facing ``admin``/``edit``/``view``, which are *aggregated*: they carry only an
  ``aggregationRule`` and the clusterrole-aggregation controller fills their rules from the
  ``system:aggregate-to-*`` roles (and from any user ClusterRole with the same labels) — plus the
  ``cluster-admin`` binding of ``system:masters``. Rules are kube's ``policy.go`` rules, sorted as
  its rule builder sorts them.
* The aggregator's ``autoregister`` controller creates one *local* APIService per served
  group-version (``v1.``, ``v1.apps``, …), Available with reason ``Local``.

Both are created through the registry, so they carry uids, resourceVersions and pass validation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from apiserver.api.types import Obj

if TYPE_CHECKING:
    from apiserver.registry.generic import API


RBAC = "rbac.authorization.k8s.io"
RBAC_V1 = f"{RBAC}/v1"
AGGREGATE_TO = "rbac.authorization.k8s.io/aggregate-to-"
BOOTSTRAP_LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}
AUTOUPDATE = {"rbac.authorization.kubernetes.io/autoupdate": "true"}

READ = ("get", "list", "watch")
WRITE = ("create", "delete", "deletecollection", "patch", "update")
READ_WRITE = READ + WRITE


def rule(verbs: tuple[str, ...] | str, groups: tuple[str, ...] | str, *resources: str) -> Obj:
    """``rbacv1helpers.NewRule(...).Groups(...).Resources(...).RuleOrDie()`` (sorted lists)."""
    verbs = (verbs,) if isinstance(verbs, str) else verbs
    groups = (groups,) if isinstance(groups, str) else groups
    return {"verbs": sorted(verbs), "apiGroups": sorted(groups), "resources": sorted(resources)}


def _view_rules() -> list[Obj]:
    return [
        rule(
            READ,
            "",
            "pods",
            "replicationcontrollers",
            "replicationcontrollers/scale",
            "serviceaccounts",
            "services",
            "services/status",
            "endpoints",
            "persistentvolumeclaims",
            "persistentvolumeclaims/status",
            "configmaps",
        ),
        rule(
            READ,
            "",
            "limitranges",
            "resourcequotas",
            "bindings",
            "events",
            "pods/status",
            "resourcequotas/status",
            "namespaces/status",
            "replicationcontrollers/status",
            "pods/log",
        ),
        rule(READ, "", "namespaces"),
        rule(READ, "discovery.k8s.io", "endpointslices"),
        rule(
            READ,
            "apps",
            "controllerrevisions",
            "statefulsets",
            "statefulsets/status",
            "statefulsets/scale",
            "daemonsets",
            "daemonsets/status",
            "deployments",
            "deployments/status",
            "deployments/scale",
            "replicasets",
            "replicasets/status",
            "replicasets/scale",
        ),
        rule(READ, "autoscaling", "horizontalpodautoscalers", "horizontalpodautoscalers/status"),
        rule(READ, "batch", "jobs", "cronjobs", "cronjobs/status", "jobs/status"),
        rule(
            READ,
            "extensions",
            "daemonsets",
            "daemonsets/status",
            "deployments",
            "deployments/scale",
            "deployments/status",
            "ingresses",
            "ingresses/status",
            "replicasets",
            "replicasets/scale",
            "replicasets/status",
            "replicationcontrollers/scale",
            "networkpolicies",
        ),
        rule(READ, "policy", "poddisruptionbudgets", "poddisruptionbudgets/status"),
        rule(READ, "networking.k8s.io", "networkpolicies", "ingresses", "ingresses/status"),
    ]


def _edit_rules() -> list[Obj]:
    return [
        rule(
            READ,
            "",
            "pods/attach",
            "pods/proxy",
            "pods/exec",
            "pods/portforward",
            "secrets",
            "services/proxy",
        ),
        rule("impersonate", "", "serviceaccounts"),
        rule(WRITE, "", "pods", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward"),
        rule("create", "", "pods/eviction"),
        rule(
            WRITE,
            "",
            "replicationcontrollers",
            "replicationcontrollers/scale",
            "serviceaccounts",
            "services",
            "services/proxy",
            "persistentvolumeclaims",
            "configmaps",
            "secrets",
            "events",
        ),
        rule("create", "", "serviceaccounts/token"),
        rule(
            WRITE,
            "apps",
            "statefulsets",
            "statefulsets/scale",
            "daemonsets",
            "deployments",
            "deployments/scale",
            "deployments/rollback",
            "replicasets",
            "replicasets/scale",
        ),
        rule(WRITE, "autoscaling", "horizontalpodautoscalers"),
        rule(WRITE, "batch", "jobs", "cronjobs"),
        rule(
            WRITE,
            "extensions",
            "daemonsets",
            "deployments",
            "deployments/scale",
            "deployments/rollback",
            "ingresses",
            "replicasets",
            "replicasets/scale",
            "replicationcontrollers/scale",
            "networkpolicies",
        ),
        rule(WRITE, "policy", "poddisruptionbudgets"),
        rule(WRITE, "networking.k8s.io", "networkpolicies", "ingresses"),
        rule(READ_WRITE, "coordination.k8s.io", "leases"),
    ]


def _admin_rules() -> list[Obj]:
    return [
        rule("create", "authorization.k8s.io", "localsubjectaccessreviews"),
        rule(READ_WRITE, RBAC, "roles", "rolebindings"),
    ]


def _cluster_role(
    name: str,
    *,
    rules: list[Obj] | None = None,
    labels: dict[str, str] | None = None,
    aggregate: str | None = None,
) -> Obj:
    obj: Obj = {
        "apiVersion": RBAC_V1,
        "kind": "ClusterRole",
        "metadata": {
            "name": name,
            "labels": {**BOOTSTRAP_LABELS, **(labels or {})},
            "annotations": dict(AUTOUPDATE),
        },
    }
    if aggregate is not None:
        obj["aggregationRule"] = {
            "clusterRoleSelectors": [{"matchLabels": {AGGREGATE_TO + aggregate: "true"}}]
        }
    if rules is not None:
        obj["rules"] = rules
    return obj


def bootstrap_cluster_roles() -> list[Obj]:
    """``ClusterRoles()`` of kube's bootstrap policy that charts and operators reference."""
    to = AGGREGATE_TO
    return [
        _cluster_role(
            "cluster-admin",
            rules=[
                {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
                {"verbs": ["*"], "nonResourceURLs": ["*"]},
            ],
        ),
        _cluster_role("admin", aggregate="admin"),
        _cluster_role("edit", labels={to + "admin": "true"}, aggregate="edit"),
        _cluster_role("view", labels={to + "edit": "true"}, aggregate="view"),
        _cluster_role("system:aggregate-to-admin", labels={to + "admin": "true"}, rules=_admin_rules()),
        _cluster_role("system:aggregate-to-edit", labels={to + "edit": "true"}, rules=_edit_rules()),
        _cluster_role("system:aggregate-to-view", labels={to + "view": "true"}, rules=_view_rules()),
    ]


def bootstrap_cluster_role_bindings() -> list[Obj]:
    return [
        {
            "apiVersion": RBAC_V1,
            "kind": "ClusterRoleBinding",
            "metadata": {
                "name": "cluster-admin",
                "labels": dict(BOOTSTRAP_LABELS),
                "annotations": dict(AUTOUPDATE),
            },
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "cluster-admin"},
            "subjects": [{"apiGroup": RBAC, "kind": "Group", "name": "system:masters"}],
        }
    ]


# kube-apiserver's apiVersionPriorities (group priority minimum, version priority).
_PRIORITIES: dict[tuple[str, str], tuple[int, int]] = {
    ("", "v1"): (18000, 1),
    ("apps", "v1"): (17800, 15),
    ("events.k8s.io", "v1"): (17750, 15),
    ("authentication.k8s.io", "v1"): (17700, 15),
    ("authorization.k8s.io", "v1"): (17600, 15),
    ("autoscaling", "v2"): (17500, 30),
    ("autoscaling", "v1"): (17500, 15),
    ("batch", "v1"): (17400, 15),
    ("certificates.k8s.io", "v1"): (17300, 15),
    ("networking.k8s.io", "v1"): (17200, 15),
    ("policy", "v1"): (17100, 15),
    ("rbac.authorization.k8s.io", "v1"): (17000, 15),
    ("storage.k8s.io", "v1"): (16800, 15),
    ("apiextensions.k8s.io", "v1"): (16700, 15),
    ("admissionregistration.k8s.io", "v1"): (16700, 15),
    ("scheduling.k8s.io", "v1"): (16600, 15),
    ("coordination.k8s.io", "v1"): (16500, 15),
    ("node.k8s.io", "v1"): (16300, 15),
    ("discovery.k8s.io", "v1"): (16200, 15),
    ("resource.k8s.io", "v1"): (15900, 15),
    ("apiregistration.k8s.io", "v1"): (18000, 15),
}


def _priority(group: str, version: str) -> tuple[int, int]:
    known = _PRIORITIES.get((group, version))
    if known is not None:
        return known
    # A group-version missing from kube's table: the group's known minimum (or the aggregator's
    # floor), with the conventional beta/alpha version priorities.
    group_min = next((g for (grp, _), (g, _v) in _PRIORITIES.items() if grp == group), 15000)
    return group_min, 9 if "beta" in version else 1 if "alpha" in version else 15


def local_api_service(group: str, version: str) -> Obj:
    group_min, version_prio = _priority(group, version)
    spec: Obj = {"version": version, "groupPriorityMinimum": group_min, "versionPriority": version_prio}
    if group:
        spec = {"group": group, **spec}
    return {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {
            "name": f"{version}.{group}",
            "labels": {"kube-aggregator.kubernetes.io/automanaged": "onstart"},
        },
        "spec": spec,
    }


def seed(api: API) -> None:
    """Create what is missing (a restart over a kept store leaves existing objects alone)."""
    for group, plural, objs in (
        (RBAC, "clusterroles", bootstrap_cluster_roles()),
        (RBAC, "clusterrolebindings", bootstrap_cluster_role_bindings()),
    ):
        rd = api.registry.get(group, "v1", plural)
        if rd is None:
            continue
        for obj in objs:
            if api.store.get(rd.storage_key, ("", obj["metadata"]["name"])) is None:
                api.create(rd, "", obj)
    rd = api.registry.get("apiregistration.k8s.io", "v1", "apiservices")
    if rd is None:
        return
    seen: set[tuple[str, str]] = set()
    for d in api.registry.all():
        if (d.group, d.version) in seen or not api.served(d):
            continue
        seen.add((d.group, d.version))
        svc = local_api_service(d.group, d.version)
        if api.store.get(rd.storage_key, ("", svc["metadata"]["name"])) is None:
            api.create(rd, "", svc)
