"""Assemble an API server instance: registry, store, admission, validators, patchers, bootstrap objects.

Both ``gangplane serve`` and the in-process test harness build the API through :func:`build_api`,
so tests exercise the exact stack a kubectl user talks to.
"""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry

from apiserver.admission.plugins import default_plugins
from apiserver.api.types import Obj
from apiserver.field import new_path
from apiserver.meta import Clock, new_uid, rfc3339
from apiserver.openapi import schema
from apiserver.patch.apply import server_side_apply
from apiserver.patch.fieldvalidation import check_body
from apiserver.patch.strategic import strategic_merge
from apiserver.patch.tracker import FieldTracker
from apiserver.registry.builtin import builtin_resources
from apiserver.registry.generic import API, APPLY_PATCH, STRATEGIC_PATCH, WriteOptions
from apiserver.registry.resources import Registry, ResourceDef
from apiserver.server.metrics import APIServerMetrics
from apiserver.storage.store import Store
from apiserver.validation.meta import validate_object_meta, validate_object_meta_update
from apiserver.validation.names import (
    name_is_dns1035_label,
    name_is_dns_label,
    name_is_dns_subdomain,
    name_is_path_segment,
)
from featuregates import FeatureGate

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
SYSTEM_PRIORITY_CLASSES = (
    ("system-node-critical", 2000001000, "Used for system critical pods that must not be moved from their current node."),
    ("system-cluster-critical", 2000000000, "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."),
)


def _meta_validator() -> tuple[Any, Any]:
    """``ValidateObjectMeta`` with each kind's name rule, and ``ValidateObjectMetaUpdate``."""
    # The name rules of each kind's kube validation (ValidateXName).
    dns_label_kinds = {("", "namespaces"), ("apps", "statefulsets")}
    dns1035_kinds = {("", "services")}
    path_segment_kinds: set[tuple[str, str]] = {
        ("rbac.authorization.k8s.io", "roles"),
        ("rbac.authorization.k8s.io", "clusterroles"),
        ("rbac.authorization.k8s.io", "rolebindings"),
        ("rbac.authorization.k8s.io", "clusterrolebindings"),
        ("apiregistration.k8s.io", "apiservices"),
    }
    no_name_check = {("", "events")}

    def any_name(name: str, prefix: bool) -> list[str]:
        return []

    def name_fn_for(rd: ResourceDef) -> Any:
        key = (rd.group, rd.plural)
        if key in no_name_check:
            return any_name
        if key in dns_label_kinds:
            return name_is_dns_label
        if key in dns1035_kinds:
            return name_is_dns1035_label
        if key in path_segment_kinds:
            return name_is_path_segment
        return name_is_dns_subdomain

    def validate(obj: Obj, rd: ResourceDef) -> list:
        return validate_object_meta(obj.get("metadata") or {}, rd.namespaced, name_fn_for(rd), new_path("metadata"))

    def validate_update(new: Obj, old: Obj) -> list:
        return validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {}, new_path("metadata"))

    return validate, validate_update


def _patchers() -> dict[str, Any]:
    def smp(rd: ResourceDef, current: Obj, patch: Obj) -> Obj:
        node = schema.for_gvk(rd.group, rd.version, rd.kind)
        return strategic_merge(current, patch, node)

    def ssa(rd: ResourceDef, live: Obj | None, applied: Obj, opts: WriteOptions, now: str) -> Obj:
        node = schema.for_gvk(rd.group, rd.version, rd.kind)
        applied.setdefault("apiVersion", rd.api_version)
        applied.setdefault("kind", rd.kind)
        return server_side_apply(
            live, applied, opts.field_manager, opts.force, node, now, rd.api_version, kind=rd.kind, subresource=opts.subresource
        )

    return {STRATEGIC_PATCH: smp, APPLY_PATCH: ssa}


def build_api(
    gates: FeatureGate | None = None,
    clock: Clock | None = None,
    store: Store | None = None,
    extra_resources: list[ResourceDef] | None = None,
) -> API:
    gates = gates or FeatureGate()
    registry = Registry(builtin_resources() + list(extra_resources or []))
    meta_validate, meta_update_validate = _meta_validator()
    api = API(
        registry,
        store or Store(),
        gates,
        default_plugins(),
        clock or Clock(),
        meta_validator=meta_validate,
        meta_update_validator=meta_update_validate,
        body_checker=check_body,
        patchers=_patchers(),
        field_tracker=FieldTracker(),
    )
    bootstrap(api)
    return api


def bootstrap(api: API) -> None:
    """The objects every kube-apiserver creates at start."""
    ns_rd = api.registry.get("", "v1", "namespaces")
    pc_rd = api.registry.get("scheduling.k8s.io", "v1", "priorityclasses")
    assert ns_rd is not None and pc_rd is not None
    for ns in SYSTEM_NAMESPACES:
        if api.store.get(ns_rd.storage_key, ("", ns)) is None:
            api.create(ns_rd, "", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    for name, value, desc in SYSTEM_PRIORITY_CLASSES:
        if api.store.get(pc_rd.storage_key, ("", name)) is None:
            api.store.create(
                pc_rd.storage_key,
                ("", name),
                _system_priority_class(api, name, value, desc),
            )
    from apiserver.registry import bootstrap_policy

    bootstrap_policy.seed(api)


def _system_priority_class(api: API, name: str, value: int, desc: str) -> Obj:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name, "uid": new_uid(), "creationTimestamp": rfc3339(api.clock.now()), "generation": 1},
        "value": value,
        "globalDefault": False,
        "description": desc,
        "preemptionPolicy": "PreemptLowerPriority",
    }


def new_metrics_registry() -> tuple[CollectorRegistry, APIServerMetrics]:
    reg = CollectorRegistry()
    return reg, APIServerMetrics(reg)
