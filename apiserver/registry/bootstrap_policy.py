"""The objects kube-apiserver's post-start hooks create: bootstrap RBAC roles and local APIServices.

* ``rbac/bootstrap-roles`` creates the default ClusterRoles charts bind to — ``cluster-admin``
  and the user-facing ``admin``/``edit``/``view``, which are *aggregated*: they carry only an
  ``aggregationRule`` and the clusterrole-aggregation controller fills their rules from the
  ``system:aggregate-to-*`` roles (and from any user ClusterRole with the same labels) — the
  ``system:*`` roles every authenticated user relies on under RBAC (``system:discovery``,
  ``system:basic-user``, ``system:public-info-viewer``) and the component roles, with kube's
  default ClusterRoleBindings. Rules are kube's ``policy.go`` rules, sorted as its rule builder
  sorts them. kubeadm's ``kubeadm:cluster-admins`` binding makes the kubeconfig user (group
  ``kubeadm:cluster-admins``) a cluster admin, as on a kubeadm or kind cluster.
* The aggregator's ``autoregister`` controller creates one *local* APIService per served
  group-version (``v1.``, ``v1.apps``, …), Available with reason ``Local``.

Both are created through the registry, so they carry uids, resourceVersions and pass validation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from apiserver.api.types import Obj

if TYPE_CHECKING:
    from apiserver.registry.generic import GenericStore


RBAC = "rbac.authorization.k8s.io"
RBAC_V1 = f"{RBAC}/v1"
AGGREGATE_TO = "rbac.authorization.k8s.io/aggregate-to-"
BOOTSTRAP_LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}
AUTOUPDATE = {"rbac.authorization.kubernetes.io/autoupdate": "true"}

READ = ("get", "list", "watch")
WRITE = ("create", "delete", "deletecollection", "patch", "update")
READ_WRITE = READ + WRITE


READ_UPDATE = ("get", "list", "watch", "update", "patch")
AUTHENTICATION = "authentication.k8s.io"
AUTHORIZATION = "authorization.k8s.io"


def rule(
    verbs: tuple[str, ...] | str, groups: tuple[str, ...] | str, *resources: str, names: tuple[str, ...] = ()
) -> Obj:
    """``rbacv1helpers.NewRule(...).Groups(...).Resources(...)[.Names(...)].RuleOrDie()`` (sorted lists)."""
    verbs = (verbs,) if isinstance(verbs, str) else verbs
    groups = (groups,) if isinstance(groups, str) else groups
    out: Obj = {"verbs": sorted(verbs), "apiGroups": sorted(groups), "resources": sorted(resources)}
    if names:
        out["resourceNames"] = sorted(names)
    return out


def url_rule(verbs: tuple[str, ...] | str, *urls: str) -> Obj:
    """``rbacv1helpers.NewRule(...).URLs(...).RuleOrDie()``."""
    verbs = (verbs,) if isinstance(verbs, str) else verbs
    return {"verbs": sorted(verbs), "nonResourceURLs": sorted(urls)}


def _events_rule() -> Obj:
    return rule(("create", "update", "patch"), ("", "events.k8s.io"), "events")


def _controller_manager_rules() -> list[Obj]:
    return [
        _events_rule(),
        rule("create", "coordination.k8s.io", "leases"),
        rule(("get", "update"), "coordination.k8s.io", "leases", names=("kube-controller-manager",)),
        rule("create", "", "secrets", "serviceaccounts"),
        rule("delete", "", "secrets"),
        rule("get", "", "namespaces", "secrets", "serviceaccounts", "configmaps"),
        rule("update", "", "secrets", "serviceaccounts"),
        rule("create", AUTHENTICATION, "tokenreviews"),
        rule("create", AUTHORIZATION, "subjectaccessreviews"),
        rule(("list", "watch"), "*", "*"),
        rule("create", "", "serviceaccounts/token"),
    ]


def _scheduler_rules() -> list[Obj]:
    return [
        _events_rule(),
        rule("create", "coordination.k8s.io", "leases"),
        rule(("get", "update"), "coordination.k8s.io", "leases", names=("kube-scheduler",)),
        rule(READ, "", "nodes"),
        rule(("get", "list", "watch", "delete"), "", "pods"),
        rule("create", "", "pods/binding", "bindings"),
        rule(("patch", "update"), "", "pods/status"),
        rule(READ, "", "services", "replicationcontrollers"),
        rule(READ, ("apps", "extensions"), "replicasets"),
        rule(READ, "apps", "statefulsets"),
        rule(READ, "policy", "poddisruptionbudgets"),
        rule(READ, "", "persistentvolumeclaims", "persistentvolumes"),
        rule("create", AUTHENTICATION, "tokenreviews"),
        rule("create", AUTHORIZATION, "subjectaccessreviews"),
        rule(READ, "storage.k8s.io", "csinodes"),
        rule(READ, "", "namespaces"),
        rule(READ, "storage.k8s.io", "csidrivers"),
        rule(READ, "storage.k8s.io", "csistoragecapacities"),
        rule(READ, "resource.k8s.io", "resourceclaims", "deviceclasses", "resourceslices"),
        rule(READ_UPDATE, "resource.k8s.io", "resourceclaims/status"),
        rule(READ, "scheduling.k8s.io", "workloads", "podgroups"),
    ]


def _node_rules() -> list[Obj]:
    return [
        rule("create", AUTHENTICATION, "tokenreviews"),
        rule("create", AUTHORIZATION, "subjectaccessreviews", "localsubjectaccessreviews"),
        rule(READ, "", "services"),
        rule(("create", "get", "list", "watch"), "", "nodes"),
        rule(("update", "patch"), "", "nodes/status"),
        rule(("update", "patch"), "", "nodes"),
        rule(("create", "update", "patch"), "", "events"),
        rule(READ, "", "pods"),
        rule(("create", "delete"), "", "pods"),
        rule(("update", "patch"), "", "pods/status"),
        rule("create", "", "pods/eviction"),
        rule(READ, "", "secrets", "configmaps"),
        rule("get", "", "persistentvolumeclaims", "persistentvolumes"),
        rule("get", "", "endpoints"),
        rule(("create", "get", "list", "watch"), "certificates.k8s.io", "certificatesigningrequests"),
        rule(("get", "create", "update", "patch", "delete"), "coordination.k8s.io", "leases"),
        rule("get", "storage.k8s.io", "volumeattachments"),
        rule("create", "", "serviceaccounts/token"),
        rule(("get", "update", "patch"), "", "persistentvolumeclaims/status"),
        rule(("get", "watch", "list"), "storage.k8s.io", "csidrivers"),
        rule(("get", "create", "update", "patch", "delete"), "storage.k8s.io", "csinodes"),
        rule(READ, "node.k8s.io", "runtimeclasses"),
        rule(READ, "resource.k8s.io", "resourceclaims", "resourceslices"),
    ]


def _system_roles() -> list[Obj]:
    """The ``system:*`` ClusterRoles of ``policy.go`` that gangplane's APIs give meaning to."""
    return [
        _cluster_role(
            "system:discovery",
            rules=[
                url_rule(
                    "get",
                    "/livez",
                    "/readyz",
                    "/healthz",
                    "/version",
                    "/version/",
                    "/openapi",
                    "/openapi/*",
                    "/api",
                    "/api/*",
                    "/apis",
                    "/apis/*",
                )
            ],
        ),
        _cluster_role(
            "system:monitoring",
            rules=[
                url_rule(
                    "get", "/metrics", "/livez", "/readyz", "/healthz", "/livez/*", "/readyz/*", "/healthz/*"
                )
            ],
        ),
        _cluster_role(
            "system:basic-user",
            rules=[
                rule("create", AUTHORIZATION, "selfsubjectaccessreviews", "selfsubjectrulesreviews"),
                rule("create", AUTHENTICATION, "selfsubjectreviews"),
            ],
        ),
        _cluster_role(
            "system:public-info-viewer",
            rules=[url_rule("get", "/livez", "/readyz", "/healthz", "/version", "/version/")],
        ),
        _cluster_role(
            "system:auth-delegator",
            rules=[
                rule("create", AUTHENTICATION, "tokenreviews"),
                rule("create", AUTHORIZATION, "subjectaccessreviews"),
            ],
        ),
        _cluster_role("system:kube-aggregator", rules=[rule(READ, "", "services", "endpoints")]),
        _cluster_role("system:kube-controller-manager", rules=_controller_manager_rules()),
        _cluster_role("system:kube-scheduler", rules=_scheduler_rules()),
        _cluster_role(
            "system:volume-scheduler",
            rules=[
                rule(READ_UPDATE, "", "persistentvolumes"),
                rule(READ, "storage.k8s.io", "storageclasses"),
                rule(READ_UPDATE, "", "persistentvolumeclaims"),
            ],
        ),
        _cluster_role("system:node", rules=_node_rules()),
        _cluster_role(
            "system:node-proxier",
            rules=[
                rule(("list", "watch"), "", "services", "endpoints"),
                rule(READ, "", "nodes"),
                _events_rule(),
                rule(("list", "watch"), "discovery.k8s.io", "endpointslices"),
            ],
        ),
        _cluster_role(
            "system:service-account-issuer-discovery",
            rules=[url_rule("get", "/.well-known/openid-configuration", "/openid/v1/jwks")],
        ),
    ]


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
        *_system_roles(),
    ]


def _group(name: str) -> Obj:
    return {"apiGroup": RBAC, "kind": "Group", "name": name}


def _user(name: str) -> Obj:
    return {"apiGroup": RBAC, "kind": "User", "name": name}


def _binding(name: str, subjects: list[Obj], role: str | None = None, bootstrap: bool = True) -> Obj:
    md: Obj = {"name": name}
    if bootstrap:
        md.update(labels=dict(BOOTSTRAP_LABELS), annotations=dict(AUTOUPDATE))
    obj: Obj = {
        "apiVersion": RBAC_V1,
        "kind": "ClusterRoleBinding",
        "metadata": md,
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": role or name},
    }
    if subjects:
        obj["subjects"] = subjects
    return obj


#: kubeadm's group for the admin.conf user, bound to cluster-admin (kubeadm 1.29+, kind)
KUBEADM_CLUSTER_ADMINS = "kubeadm:cluster-admins"


def bootstrap_cluster_role_bindings() -> list[Obj]:
    """kube's ``ClusterRoleBindings()``, then kubeadm's ``kubeadm:cluster-admins``."""
    return [
        _binding("cluster-admin", [_group("system:masters")]),
        _binding("system:monitoring", [_group("system:monitoring")]),
        _binding("system:discovery", [_group("system:authenticated")]),
        _binding("system:basic-user", [_group("system:authenticated")]),
        _binding(
            "system:public-info-viewer", [_group("system:authenticated"), _group("system:unauthenticated")]
        ),
        _binding("system:node-proxier", [_user("system:kube-proxy")]),
        _binding("system:kube-controller-manager", [_user("system:kube-controller-manager")]),
        _binding("system:kube-scheduler", [_user("system:kube-scheduler")]),
        _binding("system:volume-scheduler", [_user("system:kube-scheduler")]),
        _binding("system:node", []),
        _binding("system:service-account-issuer-discovery", [_group("system:serviceaccounts")]),
        _binding(
            KUBEADM_CLUSTER_ADMINS, [_group(KUBEADM_CLUSTER_ADMINS)], role="cluster-admin", bootstrap=False
        ),
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


def seed(api: GenericStore) -> None:
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
