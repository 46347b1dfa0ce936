"""gangplane's additions to the Kubernetes 1.37 schema definitions.

KEP-6277 adds ``StatefulSetSpec.scheduling`` (type ``StatefulSetSchedulingConfiguration``), which
the released 1.37 API does not have. Everything schema-driven reads the definitions through
:mod:`apiserver.openapi.schema`, which calls :func:`apply_additions` once, so this module is the
single place where the new field is described. It has to be described *down to every leaf*:

* ``kubectl explain statefulset.spec.scheduling`` renders the served OpenAPI v3 schema;
* client-side ``kubectl apply`` computes a strategic merge patch from that schema and falls back
  to its compiled-in Go structs (which lack ``scheduling`` and fail) when a field is missing;
* the server's own strategic merge patch reads ``x-kubernetes-patch-*`` from it.

The field reuses the ``scheduling.k8s.io/v1alpha3`` building blocks that ship with 1.37, so only
the wrapper type is new; :func:`apply_additions` checks that the building blocks are present and
complete rather than silently serving a half-described field.

A second, smaller addition follows ``shared/reference/decisions.md``: PodGroup ``spec`` also
accepts the KEP's spelling ``podGroupTemplateRef {workloadName, podGroupTemplateName}``, which the
PodGroup strategy converts to the stored 1.37 ``workloadRef``. Describing it here keeps strict
field validation and ``kubectl explain`` consistent with what the server accepts.

The definitions are in the JSON-schema form of the ``kubernetes-validate`` data
(``#/$defs/`` refs, nullable ``["x", "null"]`` types); the OpenAPI documents convert them.
Entries of ``defs`` are shared with other code, so changed entries are replaced by copies.
"""

from __future__ import annotations

from typing import Any

Node = dict[str, Any]

_APPS = "io.k8s.api.apps.v1"
_SCHED_ALPHA = "io.k8s.api.scheduling.v1alpha3"

STATEFULSET_SPEC = f"{_APPS}.StatefulSetSpec"
STATEFULSET_SCHEDULING = f"{_APPS}.StatefulSetSchedulingConfiguration"

#: The v1alpha3 building blocks ``spec.scheduling`` embeds, with the properties each must have.
BUILDING_BLOCKS: dict[str, frozenset[str]] = {
    f"{_SCHED_ALPHA}.WorkloadPodGroupSchedulingPolicy": frozenset({"basic", "gang"}),
    f"{_SCHED_ALPHA}.WorkloadPodGroupBasicSchedulingPolicy": frozenset(),
    f"{_SCHED_ALPHA}.WorkloadPodGroupGangSchedulingPolicy": frozenset({"minCount"}),
    f"{_SCHED_ALPHA}.WorkloadPodGroupSchedulingConstraints": frozenset({"topology"}),
    f"{_SCHED_ALPHA}.TopologyConstraint": frozenset({"key"}),
    f"{_SCHED_ALPHA}.WorkloadPodGroupDisruptionMode": frozenset({"single", "all"}),
    f"{_SCHED_ALPHA}.WorkloadPodGroupSingleDisruptionMode": frozenset(),
    f"{_SCHED_ALPHA}.WorkloadPodGroupAllDisruptionMode": frozenset(),
    f"{_SCHED_ALPHA}.WorkloadPodGroupResourceClaim": frozenset(
        {"name", "resourceClaimName", "resourceClaimTemplateName"}
    ),
}

#: PodGroup versions whose spec also accepts the KEP-6277 ``podGroupTemplateRef`` spelling.
PODGROUP_VERSIONS = ("v1alpha3", "v1beta1")


def _ref(name: str, description: str, **extra: Any) -> Node:
    return {"$ref": f"#/$defs/{name}", "description": description, **extra}


def _scheduling_configuration() -> Node:
    """``StatefulSetSchedulingConfiguration``, described from KEP-6277 "Proposal"."""
    return {
        "description": (
            "StatefulSetSchedulingConfiguration describes how the pods of a StatefulSet are scheduled "
            "as one group. It reuses the scheduling.k8s.io/v1alpha3 building blocks of the Workload "
            "API; the StatefulSet controller compiles it into one Workload and one PodGroup."
        ),
        "properties": {
            "schedulingPolicy": _ref(
                f"{_SCHED_ALPHA}.WorkloadPodGroupSchedulingPolicy",
                "schedulingPolicy selects the scheduling policy of the StatefulSet's pod group. Exactly "
                "one of basic or gang may be set; when the field is omitted the controller resolves it "
                "to basic. gang requires podManagementPolicy: Parallel, and combining it with "
                "OrderedReady is rejected. In Alpha the controller derives gang.minCount from "
                "spec.replicas and rejects a minCount supplied by the user.",
            ),
            "schedulingConstraints": _ref(
                f"{_SCHED_ALPHA}.WorkloadPodGroupSchedulingConstraints",
                "schedulingConstraints holds scheduling constraints, such as topology, for the "
                "StatefulSet's pods. Setting schedulingConstraints.topology requires every pod of the "
                "StatefulSet to be placed within a single instance of the named topology domain "
                "(KEP-5732).",
            ),
            "disruptionMode": _ref(
                f"{_SCHED_ALPHA}.WorkloadPodGroupDisruptionMode",
                "disruptionMode states how an outside actor, such as preemption, may disrupt the "
                "StatefulSet's pods; it does not change how the StatefulSet controller itself replaces "
                "pods. Exactly one of single or all may be set, and the value is copied to the PodGroup. "
                "single (the scheduler's default when unset) makes each pod an independent disruption "
                "victim; all makes the whole StatefulSet one atomic disruption unit and is only valid "
                "with the gang policy.",
            ),
            "resourceClaims": {
                "description": (
                    "resourceClaims lists the ResourceClaims that the StatefulSet's pods may share. A pod "
                    "uses the devices allocated to such a claim by declaring, in its own "
                    "spec.resourceClaims, a claim with the same name that refers to the same "
                    "ResourceClaim or ResourceClaimTemplate. At most 4 claims may be listed, the limit "
                    "of the resulting PodGroup. Takes effect only with the DRAWorkloadResourceClaims "
                    "feature gate (KEP-5729) enabled in kube-apiserver, kube-controller-manager, "
                    "kube-scheduler and kubelet."
                ),
                "items": {"$ref": f"#/$defs/{_SCHED_ALPHA}.WorkloadPodGroupResourceClaim"},
                "maxItems": 4,
                "type": ["array", "null"],
                "x-kubernetes-list-map-keys": ["name"],
                "x-kubernetes-list-type": "map",
                "x-kubernetes-patch-merge-key": "name",
                "x-kubernetes-patch-strategy": "merge",
            },
        },
        "type": ["object", "null"],
    }


_SCHEDULING_FIELD_DESCRIPTION = (
    "scheduling, if set, opts this StatefulSet into Workload-Aware Scheduling: the controller compiles "
    "it into one Workload and one PodGroup, and every pod the StatefulSet creates references that "
    "PodGroup. An empty value (scheduling: {}) is valid and resolves to the basic policy with no "
    "constraints, no disruption mode and no shared claims. Gang scheduling requires "
    "podManagementPolicy: Parallel. The field is immutable in Alpha and requires the "
    "WorkloadWithStatefulSet feature gate."
)


def _podgroup_template_reference() -> Node:
    return {
        "description": (
            "PodGroupTemplateReference is the KEP-6277 spelling of a PodGroup's reference to the "
            "Workload template it was created from. The server converts it to workloadRef."
        ),
        "properties": {
            "podGroupTemplateName": {
                "description": (
                    "podGroupTemplateName is the name of the PodGroupTemplate within the Workload. "
                    "Converted to workloadRef.templateName."
                ),
                "type": "string",
            },
            "workloadName": {
                "description": (
                    "workloadName is the name of the Workload that holds the template. Converted to "
                    "workloadRef.workloadName."
                ),
                "type": "string",
            },
        },
        "required": ["workloadName", "podGroupTemplateName"],
        "type": ["object", "null"],
    }


def check_building_blocks(defs: dict[str, Node]) -> None:
    """Fail loudly if the schema data lacks a building block or one of its properties.

    ``spec.scheduling`` would otherwise be served with an opaque hole that breaks ``kubectl
    explain`` and client-side apply far from the cause.
    """
    for name, props in BUILDING_BLOCKS.items():
        node = defs.get(name)
        if node is None:
            raise RuntimeError(f"schema definition {name} (needed by StatefulSet spec.scheduling) is missing")
        missing = props - set(node.get("properties") or {})
        if missing:
            raise RuntimeError(f"schema definition {name} lacks properties {sorted(missing)}")


def _with_property(node: Node, name: str, prop: Node) -> Node:
    """A copy of ``node`` with one more property; the original entry stays untouched."""
    return {**node, "properties": {**(node.get("properties") or {}), name: prop}}


def apply_additions(defs: dict[str, Node]) -> None:
    """Add gangplane's fields to ``defs`` (called once by :func:`apiserver.openapi.schema.definitions`)."""
    check_building_blocks(defs)

    defs[STATEFULSET_SCHEDULING] = _scheduling_configuration()
    defs[STATEFULSET_SPEC] = _with_property(
        defs[STATEFULSET_SPEC], "scheduling", _ref(STATEFULSET_SCHEDULING, _SCHEDULING_FIELD_DESCRIPTION)
    )

    for version in PODGROUP_VERSIONS:
        spec_name = f"io.k8s.api.scheduling.{version}.PodGroupSpec"
        if spec_name not in defs:
            continue
        ref_name = f"io.k8s.api.scheduling.{version}.PodGroupTemplateReference"
        defs[ref_name] = _podgroup_template_reference()
        defs[spec_name] = _with_property(
            defs[spec_name],
            "podGroupTemplateRef",
            _ref(
                ref_name,
                "KEP-6277 spelling, converted to workloadRef. podGroupTemplateRef names the Workload and "
                "the PodGroupTemplate this PodGroup was created from; the server accepts it on create "
                "and update, stores it as workloadRef {workloadName, templateName} and answers with a "
                "warning. It is never returned.",
            ),
        )
