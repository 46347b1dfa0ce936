"""The admission plugins kube-apiserver enables by default that gangplane's workflows depend on."""

from __future__ import annotations

from apiserver import errors
from apiserver.admission import CREATE, DELETE, UPDATE, Attributes, Lookup, Plugin
from apiserver.admission.prioritydefault import GlobalDefault
from apiserver.api.wellknown import PODGROUP_PROTECTION_FINALIZER
from apiserver.rest.resources import ResourceDef
from featuregates import GENERIC_WORKLOAD

SYSTEM_CLUSTER_CRITICAL = ("system-cluster-critical", 2000000000)
SYSTEM_NODE_CRITICAL = ("system-node-critical", 2000001000)
IMMORTAL_NAMESPACES = ("default", "kube-system", "kube-public")
CLUSTER_SCOPED_ALWAYS_ALLOWED = True


def _core_pods(rd: ResourceDef) -> bool:
    return rd.group == "" and rd.plural == "pods"


def _pod_or_pod_group(rd: ResourceDef) -> bool:
    return _core_pods(rd) or (rd.group == "scheduling.k8s.io" and rd.plural == "podgroups")


class NamespaceLifecycle(Plugin):
    """Objects need an existing namespace; a terminating namespace takes no new objects (403)."""

    name = "NamespaceLifecycle"

    def handles(self, operation: str, rd: ResourceDef) -> bool:
        if rd.group == "" and rd.plural == "namespaces":
            return operation == DELETE
        return rd.namespaced and operation == CREATE

    def admit(self, attrs: Attributes, api: Lookup) -> None:
        rd = attrs.rd
        if rd.group == "" and rd.plural == "namespaces":
            if attrs.operation == DELETE and attrs.name in IMMORTAL_NAMESPACES:
                raise errors.forbidden("namespaces", attrs.name, "", "this namespace may not be deleted")
            return
        if not rd.namespaced or attrs.operation != CREATE:
            return
        ns = api.peek("", "namespaces", "", attrs.namespace)  # read only: no copy per create
        if ns is None:
            raise errors.not_found("namespaces", attrs.namespace)
        if (ns.get("metadata") or {}).get("deletionTimestamp") or (ns.get("status") or {}).get(
            "phase"
        ) == "Terminating":
            # Events are still accepted in a terminating namespace, as kube does.
            if rd.plural == "events":
                return
            raise errors.forbidden(
                rd.plural,
                attrs.name,
                rd.group,
                f"unable to create new content in namespace {attrs.namespace} because it is being terminated",
            )


class Priority(Plugin):
    """Resolves ``priorityClassName`` to ``spec.priority`` (pods and PodGroups), with globalDefault."""

    name = "Priority"

    def __init__(self) -> None:
        #: the global default class, looked for again only when the stored classes changed
        self._global_default = GlobalDefault()

    def handles(self, operation: str, rd: ResourceDef) -> bool:
        return operation == CREATE and _pod_or_pod_group(rd)

    def admit(self, attrs: Attributes, api: Lookup) -> None:
        rd = attrs.rd
        if attrs.operation != CREATE or attrs.subresource or attrs.obj is None:
            return
        if not (
            (rd.group == "" and rd.plural == "pods")
            or (rd.group == "scheduling.k8s.io" and rd.plural == "podgroups")
        ):
            return
        spec = attrs.obj.setdefault("spec", {})
        pc_name = spec.get("priorityClassName") or ""
        value: int | None = None
        policy: str | None = None
        if pc_name:
            if pc_name == SYSTEM_CLUSTER_CRITICAL[0]:
                value = SYSTEM_CLUSTER_CRITICAL[1]
            elif pc_name == SYSTEM_NODE_CRITICAL[0]:
                value = SYSTEM_NODE_CRITICAL[1]
            pc = api.peek("scheduling.k8s.io", "priorityclasses", "", pc_name)
            if pc is None and value is None:
                raise errors.forbidden(
                    rd.plural, attrs.name, rd.group, f"no PriorityClass with name {pc_name} was found"
                )
            if pc is not None:
                value = int(pc.get("value", 0))
                policy = pc.get("preemptionPolicy")
        else:
            default = self._global_default.find(api)
            if default is not None:
                spec["priorityClassName"] = default["metadata"]["name"]
                value = int(default.get("value", 0))
                policy = default.get("preemptionPolicy")
            else:
                value = 0
        if "priority" in spec and spec["priority"] is not None and spec["priority"] != value:
            raise errors.forbidden(
                rd.plural,
                attrs.name,
                rd.group,
                "the integer value of priority ({}) must not be provided in pod spec; priority admission controller computed {} from the given PriorityClass name".format(
                    spec["priority"], value
                ),
            )
        spec["priority"] = value
        if rd.plural == "pods":
            spec.setdefault("preemptionPolicy", policy or "PreemptLowerPriority")


class DefaultTolerationSeconds(Plugin):
    """Adds the 300s NoExecute tolerations for not-ready/unreachable nodes to every pod."""

    name = "DefaultTolerationSeconds"

    def handles(self, operation: str, rd: ResourceDef) -> bool:
        return operation == CREATE and _core_pods(rd)

    def admit(self, attrs: Attributes, api: Lookup) -> None:
        if attrs.operation != CREATE or attrs.rd.plural != "pods" or attrs.rd.group or attrs.subresource:
            return
        spec = (attrs.obj or {}).setdefault("spec", {})
        tols = spec.get("tolerations") or []
        if not tols:
            # nothing to look through (most pods): both tolerations, as the loop below adds them
            spec["tolerations"] = [
                {"key": _NOT_READY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": _UNREACHABLE, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            ]
            return
        for key in _NOT_READY_UNREACHABLE:
            if any(t.get("key") == key and t.get("effect") in ("NoExecute", None, "") for t in tols):
                continue
            if any(t.get("operator") == "Exists" and not t.get("key") for t in tols):
                continue
            tols.append(_default_toleration(key))
        spec["tolerations"] = tols


#: the taints DefaultTolerationSeconds tolerates for 300 s, in the order it adds them
_NOT_READY = "node.kubernetes.io/not-ready"
_UNREACHABLE = "node.kubernetes.io/unreachable"
_NOT_READY_UNREACHABLE = (_NOT_READY, _UNREACHABLE)


def _default_toleration(key: str) -> dict[str, object]:
    return {"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}


class ServiceAccount(Plugin):
    """Defaults ``serviceAccountName`` to ``default`` (the token volume is not simulated)."""

    name = "ServiceAccount"

    def handles(self, operation: str, rd: ResourceDef) -> bool:
        return operation == CREATE and _core_pods(rd)

    def admit(self, attrs: Attributes, api: Lookup) -> None:
        if attrs.operation != CREATE or attrs.rd.plural != "pods" or attrs.rd.group or attrs.subresource:
            return
        spec = (attrs.obj or {}).setdefault("spec", {})
        if not spec.get("serviceAccountName"):
            spec["serviceAccountName"] = spec.get("serviceAccount") or "default"
        spec.setdefault("serviceAccount", spec["serviceAccountName"])


class PodGroupProtection(Plugin):
    """1.37's PodGroupProtection: stamp the finalizer on new PodGroups; refuse pods naming a deleting group."""

    name = "PodGroupProtection"

    def handles(self, operation: str, rd: ResourceDef) -> bool:
        return operation == CREATE and _pod_or_pod_group(rd)

    def admit(self, attrs: Attributes, api: Lookup) -> None:
        rd = attrs.rd
        if attrs.operation != CREATE or attrs.subresource or attrs.obj is None:
            return
        if not attrs.gates.enabled(GENERIC_WORKLOAD):
            return
        if rd.group == "scheduling.k8s.io" and rd.plural == "podgroups":
            fins = attrs.obj.setdefault("metadata", {}).setdefault("finalizers", [])
            if PODGROUP_PROTECTION_FINALIZER not in fins:
                fins.append(PODGROUP_PROTECTION_FINALIZER)

    def validate(self, attrs: Attributes, api: Lookup) -> None:
        rd = attrs.rd
        if attrs.operation != CREATE or attrs.subresource or attrs.obj is None:
            return
        if not attrs.gates.enabled(GENERIC_WORKLOAD):
            return
        if rd.group == "" and rd.plural == "pods":
            group_name = ((attrs.obj.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
            if not group_name:
                return
            pg = api.peek("scheduling.k8s.io", "podgroups", attrs.namespace, group_name)
            if pg is not None and (pg.get("metadata") or {}).get("deletionTimestamp"):
                raise errors.forbidden(
                    "pods",
                    attrs.name,
                    "",
                    f'cannot create Pod referencing PodGroup "{group_name}" because it is being deleted',
                )


def default_plugins() -> list[Plugin]:
    """Order matters, as in kube: lifecycle first, then mutation, then validation."""
    return [
        NamespaceLifecycle(),
        ServiceAccount(),
        Priority(),
        DefaultTolerationSeconds(),
        PodGroupProtection(),
    ]


__all__ = [
    "CREATE",
    "DELETE",
    "UPDATE",
    "DefaultTolerationSeconds",
    "NamespaceLifecycle",
    "PodGroupProtection",
    "Priority",
    "ServiceAccount",
    "default_plugins",
]
