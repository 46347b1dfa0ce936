"""The resources gangplane serves, declared once; everything else is generated from this table."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from apiserver.registry.strategies import (
    admissionregistration,
    apiregistration,
    apps,
    authentication,
    authorization,
    autoscaling,
    batch,
    core,
    discovery,
    gangplane,
    metrics,
    misc,
    networking,
    rbac,
    replication,
    resource,
    scheduling,
    storage,
)
from apiserver.rest.resources import ResourceDef, Subresource
from apiserver.rest.strategy import Strategy
from apiserver.selectors import field_value_getter
from featuregates import COMPOSITE_POD_GROUP, GENERIC_WORKLOAD

#: every strategy module, imported here (not named in strings) so that a missing one fails the import
#: and import-linter sees the edges; each defines ``STRATEGIES: {(group, plural): Strategy}``
_STRATEGY_MODULES: tuple[ModuleType, ...] = (
    core,
    apps,
    misc,
    scheduling,
    resource,
    batch,
    discovery,
    replication,
    rbac,
    storage,
    networking,
    autoscaling,
    apiregistration,
    authorization,
    authentication,
    metrics,
    admissionregistration,
    gangplane,
)


class StrategyModuleError(RuntimeError):
    """A strategy module without a ``STRATEGIES`` table, or a served resource no module defines.

    Raised while the API is built, i.e. at start: a missing module must never mean a silently
    weaker server that stores objects without kube's defaults and validation.
    """


def _load_strategies() -> dict[tuple[str, str], Strategy]:
    out: dict[tuple[str, str], Strategy] = {}
    for mod in _STRATEGY_MODULES:
        strategies = getattr(mod, "STRATEGIES", None)
        if not isinstance(strategies, dict):
            raise StrategyModuleError(f"strategy module {mod.__name__} defines no STRATEGIES table")
        out.update(strategies)
    return out


def _fields(*paths: str, **aliases: str) -> dict[str, Any]:
    out = {p: field_value_getter(p) for p in paths}
    out.update({alias.replace("__", "."): field_value_getter(target) for alias, target in aliases.items()})
    return out


POD_FIELDS = _fields(
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.nominatedNodeName",
)
EVENT_FIELDS = _fields(
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
)
# events.k8s.io/v1 shares storage with core events; its selectors name the new fields.
EVENTS_V1_FIELDS = {
    **EVENT_FIELDS,
    **{
        "regarding.kind": field_value_getter("involvedObject.kind"),
        "regarding.namespace": field_value_getter("involvedObject.namespace"),
        "regarding.name": field_value_getter("involvedObject.name"),
        "regarding.uid": field_value_getter("involvedObject.uid"),
        "regarding.apiVersion": field_value_getter("involvedObject.apiVersion"),
        "regarding.resourceVersion": field_value_getter("involvedObject.resourceVersion"),
        "regarding.fieldPath": field_value_getter("involvedObject.fieldPath"),
        "reportingController": field_value_getter("reportingComponent"),
        "deprecatedSource": field_value_getter("source"),
    },
}


#: Resources whose kube storage sets ``ReturnDeletedObject`` (DELETE answers the object); the
#: others answer a Success Status. Matches the response types of kube's 1.37 OpenAPI.
RETURN_DELETED_OBJECT = frozenset(
    {
        ("", "pods"),
        ("", "namespaces"),
        ("", "services"),
        ("", "serviceaccounts"),
        ("", "persistentvolumeclaims"),
        ("", "persistentvolumes"),
        ("", "resourcequotas"),
        ("", "podtemplates"),
        ("storage.k8s.io", "storageclasses"),
        ("storage.k8s.io", "csidrivers"),
        ("resource.k8s.io", "deviceclasses"),
        ("resource.k8s.io", "resourceclaims"),
        ("resource.k8s.io", "resourceclaimtemplates"),
        ("resource.k8s.io", "resourceslices"),
    }
)


def _sub(
    name: str,
    kind: str,
    group: str = "",
    version: str = "",
    verbs: tuple[str, ...] = ("get", "patch", "update"),
) -> Subresource:
    return Subresource(name, kind, group, version, verbs)


def builtin_resources() -> list[ResourceDef]:
    s = _load_strategies()

    def st(group: str, plural: str) -> Strategy:
        strat = s.get((group, plural))
        if strat is None:
            raise StrategyModuleError(
                f"no strategy for {plural}.{group or 'core'} in any of "
                + ", ".join(m.__name__ for m in _STRATEGY_MODULES)
            )
        return strat

    def rd(
        group: str, version: str, kind: str, plural: str, namespaced: bool, *, status: bool = False, **kw: Any
    ) -> ResourceDef:
        subs = tuple(kw.pop("subresources", ()))
        if status:
            subs = (_sub("status", kind),) + subs
        kw.setdefault("return_deleted_object", (group, plural) in RETURN_DELETED_OBJECT)
        return ResourceDef(
            group, version, kind, plural, namespaced, strategy=st(group, plural), subresources=subs, **kw
        )

    ALL = ("all",)
    AR = "admissionregistration.k8s.io"
    EXT = ("api-extensions",)
    return [
        # core/v1
        rd(
            "",
            "v1",
            "Namespace",
            "namespaces",
            False,
            status=True,
            short_names=("ns",),
            verbs=("create", "delete", "get", "list", "patch", "update", "watch"),
            subresources=(_sub("finalize", "Namespace", verbs=("update",)),),
            field_selectors=_fields("status.phase"),
        ),
        rd(
            "",
            "v1",
            "Node",
            "nodes",
            False,
            status=True,
            short_names=("no",),
            field_selectors=_fields("spec.unschedulable"),
        ),
        rd(
            "",
            "v1",
            "Pod",
            "pods",
            True,
            status=True,
            short_names=("po",),
            categories=ALL,
            subresources=(
                _sub("binding", "Binding", verbs=("create",)),
                _sub("eviction", "Eviction", "policy", "v1", verbs=("create",)),
                _sub("log", "Pod", verbs=("get",)),
                _sub("exec", "PodExecOptions", verbs=("create", "get")),
                _sub("attach", "PodAttachOptions", verbs=("create", "get")),
                _sub("portforward", "PodPortForwardOptions", verbs=("create", "get")),
                _sub("ephemeralcontainers", "Pod", verbs=("get", "patch", "update")),
            ),
            field_selectors=POD_FIELDS,
        ),
        rd("", "v1", "Service", "services", True, status=True, short_names=("svc",), categories=ALL),
        rd("", "v1", "Endpoints", "endpoints", True, short_names=("ep",)),
        rd("", "v1", "ConfigMap", "configmaps", True, short_names=("cm",)),
        rd("", "v1", "Secret", "secrets", True, field_selectors=_fields("type")),
        rd(
            "",
            "v1",
            "ServiceAccount",
            "serviceaccounts",
            True,
            short_names=("sa",),
            subresources=(_sub("token", "TokenRequest", "authentication.k8s.io", "v1", verbs=("create",)),),
        ),
        rd("", "v1", "Event", "events", True, short_names=("ev",), field_selectors=EVENT_FIELDS),
        rd(
            "",
            "v1",
            "PersistentVolumeClaim",
            "persistentvolumeclaims",
            True,
            status=True,
            short_names=("pvc",),
        ),
        rd("", "v1", "PersistentVolume", "persistentvolumes", False, status=True, short_names=("pv",)),
        rd("", "v1", "LimitRange", "limitranges", True, short_names=("limits",)),
        rd("", "v1", "ResourceQuota", "resourcequotas", True, status=True, short_names=("quota",)),
        rd(
            "",
            "v1",
            "ReplicationController",
            "replicationcontrollers",
            True,
            status=True,
            short_names=("rc",),
            categories=ALL,
            subresources=(_sub("scale", "Scale", "autoscaling", "v1"),),
        ),
        rd("", "v1", "PodTemplate", "podtemplates", True),
        # apps/v1
        rd(
            "apps",
            "v1",
            "StatefulSet",
            "statefulsets",
            True,
            status=True,
            short_names=("sts",),
            categories=ALL,
            subresources=(_sub("scale", "Scale", "autoscaling", "v1"),),
        ),
        rd("apps", "v1", "ControllerRevision", "controllerrevisions", True),
        rd(
            "apps",
            "v1",
            "Deployment",
            "deployments",
            True,
            status=True,
            short_names=("deploy",),
            categories=ALL,
            subresources=(_sub("scale", "Scale", "autoscaling", "v1"),),
        ),
        rd(
            "apps",
            "v1",
            "ReplicaSet",
            "replicasets",
            True,
            status=True,
            short_names=("rs",),
            categories=ALL,
            subresources=(_sub("scale", "Scale", "autoscaling", "v1"),),
            field_selectors=_fields("status.replicas"),
        ),
        rd("apps", "v1", "DaemonSet", "daemonsets", True, status=True, short_names=("ds",), categories=ALL),
        # batch/v1
        rd(
            "batch",
            "v1",
            "Job",
            "jobs",
            True,
            status=True,
            categories=ALL,
            field_selectors=_fields("status.successful"),
        ),
        rd("batch", "v1", "CronJob", "cronjobs", True, status=True, short_names=("cj",), categories=ALL),
        # events.k8s.io/v1 (same storage as core events)
        rd(
            "events.k8s.io",
            "v1",
            "Event",
            "events",
            True,
            short_names=("ev",),
            storage_of=("", "events"),
            field_selectors=EVENTS_V1_FIELDS,
        ),
        # discovery.k8s.io/v1
        rd("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", True),
        # coordination.k8s.io/v1
        rd("coordination.k8s.io", "v1", "Lease", "leases", True),
        # policy/v1
        rd(
            "policy",
            "v1",
            "PodDisruptionBudget",
            "poddisruptionbudgets",
            True,
            status=True,
            short_names=("pdb",),
        ),
        # scheduling.k8s.io
        rd("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", False, short_names=("pc",)),
        rd("scheduling.k8s.io", "v1beta1", "Workload", "workloads", True, gate=GENERIC_WORKLOAD),
        rd("scheduling.k8s.io", "v1beta1", "PodGroup", "podgroups", True, status=True, gate=GENERIC_WORKLOAD),
        rd(
            "scheduling.k8s.io",
            "v1alpha3",
            "CompositePodGroup",
            "compositepodgroups",
            True,
            status=True,
            gate=COMPOSITE_POD_GROUP,
        ),
        # scheduling.gangplane.dev/v1alpha1: gangplane's own group (scheduling records)
        rd("scheduling.gangplane.dev", "v1alpha1", "SchedulingRecord", "schedulingrecords", True),
        # rbac.authorization.k8s.io/v1
        rd("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", False),
        rd("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", False),
        rd("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", True),
        rd("rbac.authorization.k8s.io", "v1", "Role", "roles", True),
        # storage.k8s.io/v1
        rd("storage.k8s.io", "v1", "StorageClass", "storageclasses", False, short_names=("sc",)),
        rd("storage.k8s.io", "v1", "CSIDriver", "csidrivers", False),
        # networking.k8s.io/v1
        rd("networking.k8s.io", "v1", "Ingress", "ingresses", True, status=True, short_names=("ing",)),
        rd("networking.k8s.io", "v1", "IngressClass", "ingressclasses", False),
        rd("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", True, short_names=("netpol",)),
        # autoscaling/v2 (the stored version)
        rd(
            "autoscaling",
            "v2",
            "HorizontalPodAutoscaler",
            "horizontalpodautoscalers",
            True,
            status=True,
            short_names=("hpa",),
            categories=ALL,
        ),
        # autoscaling/v1: the same stored HPAs, converted (strategies/autoscaling_v1.py)
        rd(
            "autoscaling",
            "v1",
            "HorizontalPodAutoscaler",
            "horizontalpodautoscalers",
            True,
            status=True,
            short_names=("hpa",),
            categories=ALL,
            storage_of=("autoscaling", "horizontalpodautoscalers"),
        ),
        # apiregistration.k8s.io/v1
        rd("apiregistration.k8s.io", "v1", "APIService", "apiservices", False, status=True),
        # authorization.k8s.io/v1: create-only reviews, answered and never stored
        rd(
            "authorization.k8s.io",
            "v1",
            "SelfSubjectAccessReview",
            "selfsubjectaccessreviews",
            False,
            verbs=("create",),
        ),
        rd(
            "authorization.k8s.io",
            "v1",
            "SelfSubjectRulesReview",
            "selfsubjectrulesreviews",
            False,
            verbs=("create",),
        ),
        rd(
            "authorization.k8s.io",
            "v1",
            "SubjectAccessReview",
            "subjectaccessreviews",
            False,
            verbs=("create",),
        ),
        rd(
            "authorization.k8s.io",
            "v1",
            "LocalSubjectAccessReview",
            "localsubjectaccessreviews",
            True,
            verbs=("create",),
        ),
        # authentication.k8s.io/v1: create-only reviews (kubectl auth whoami)
        rd(
            "authentication.k8s.io", "v1", "SelfSubjectReview", "selfsubjectreviews", False, verbs=("create",)
        ),
        rd("authentication.k8s.io", "v1", "TokenReview", "tokenreviews", False, verbs=("create",)),
        # metrics.k8s.io/v1beta1: what metrics-server serves, computed from the simulated pods (kubectl top)
        rd("metrics.k8s.io", "v1beta1", "NodeMetrics", "nodes", False, verbs=("get", "list")),
        rd("metrics.k8s.io", "v1beta1", "PodMetrics", "pods", True, verbs=("get", "list")),
        # admissionregistration.k8s.io/v1
        rd(
            AR,
            "v1",
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations",
            False,
            categories=EXT,
        ),
        rd(AR, "v1", "MutatingWebhookConfiguration", "mutatingwebhookconfigurations", False, categories=EXT),
        rd(
            AR,
            "v1",
            "ValidatingAdmissionPolicy",
            "validatingadmissionpolicies",
            False,
            status=True,
            categories=EXT,
        ),
        rd(
            AR,
            "v1",
            "ValidatingAdmissionPolicyBinding",
            "validatingadmissionpolicybindings",
            False,
            categories=EXT,
        ),
        rd(
            AR,
            "v1",
            "MutatingAdmissionPolicy",
            "mutatingadmissionpolicies",
            False,
            categories=EXT,
        ),
        rd(
            AR,
            "v1",
            "MutatingAdmissionPolicyBinding",
            "mutatingadmissionpolicybindings",
            False,
            categories=EXT,
        ),
        # resource.k8s.io/v1 (DRA)
        rd("resource.k8s.io", "v1", "ResourceClaim", "resourceclaims", True, status=True),
        rd("resource.k8s.io", "v1", "ResourceClaimTemplate", "resourceclaimtemplates", True),
        rd("resource.k8s.io", "v1", "DeviceClass", "deviceclasses", False),
        rd(
            "resource.k8s.io",
            "v1",
            "ResourceSlice",
            "resourceslices",
            False,
            field_selectors=_fields("spec.nodeName", "spec.driver"),
        ),
    ]
