"""Assemble an API server instance: registry, store, admission, validators, patchers, bootstrap objects.

Both ``gangplane serve`` and the in-process test harness build the API through :func:`build_api`,
so tests exercise the exact stack a kubectl user talks to.
"""

from __future__ import annotations

import logging
from typing import Any

from prometheus_client import CollectorRegistry

from apiserver import errors
from apiserver.admission.plugins import default_plugins
from apiserver.admission.policy.mutating import MutatingAdmissionPolicyPlugin
from apiserver.admission.policy.validating import ValidatingAdmissionPolicyPlugin
from apiserver.admission.webhook.dispatch import MutatingWebhookPlugin, ValidatingWebhookPlugin
from apiserver.api.types import Obj
from apiserver.apiextensions.controller import install as install_custom_resources
from apiserver.auth.authorizer import ALWAYS_ALLOW, Authorization
from apiserver.auth.serviceaccount import LAST_USED_LABEL, MarkUsed, ServiceAccountTokens, SigningKey
from apiserver.field import new_path
from apiserver.meta import Clock, new_uid, rfc3339
from apiserver.openapi import schema
from apiserver.patch.apply import server_side_apply
from apiserver.patch.fieldvalidation import check_body
from apiserver.patch.strategic import strategic_merge
from apiserver.patch.tracker import FieldTracker
from apiserver.registry.builtin import builtin_resources
from apiserver.registry.generic import APPLY_PATCH, MERGE_PATCH, STRATEGIC_PATCH, GenericStore, WriteOptions
from apiserver.registry.rbac_policy import StorePolicySource
from apiserver.registry.servicealloc import DEFAULT_NODE_PORT_RANGE, DEFAULT_SERVICE_CIDR, ServiceAllocator
from apiserver.rest.resources import Registry, ResourceDef
from apiserver.server.metrics import APIServerMetrics
from apiserver.storage.interface import Storage
from apiserver.storage.memory import MemoryStorage
from apiserver.validation.meta import validate_object_meta, validate_object_meta_update
from apiserver.validation.metamemo import ValidatedMetadata
from apiserver.validation.names import (
    name_is_dns1035_label,
    name_is_dns_label,
    name_is_dns_subdomain,
    name_is_path_segment,
)
from featuregates import FeatureGate

log = logging.getLogger("gangplane.apiserver")

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
SYSTEM_PRIORITY_CLASSES = (
    (
        "system-node-critical",
        2000001000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    (
        "system-cluster-critical",
        2000000000,
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    ),
)


#: the root of ObjectMeta's field paths (a Path is never modified: ``child`` makes new ones)
_METADATA = new_path("metadata")


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

    def kube_finalizers(rd: ResourceDef) -> bool:
        # apiextensions validates CRDs and custom resources with apimachinery's generic ObjectMeta
        # rules, without core's "standard or fully qualified" finalizer-name check.
        return rd.group != "apiextensions.k8s.io" and rd.converter is None

    # each kind's (name rule, finalizer rule), worked out on its first write; the entry holds the
    # ResourceDef so its id is not reused while the entry lives
    rules: dict[int, tuple[ResourceDef, Any, bool]] = {}

    def validate(obj: Obj, rd: ResourceDef) -> list:
        got = rules.get(id(rd))
        if got is None or got[0] is not rd:
            got = rules[id(rd)] = (rd, name_fn_for(rd), kube_finalizers(rd))
        return validate_object_meta(
            obj.get("metadata") or {},
            rd.namespaced,
            got[1],
            _METADATA,
            kube_finalizers=got[2],
        )

    def validate_update(new: Obj, old: Obj, rd: ResourceDef | None = None, collections: bool = True) -> list:
        """``collections`` False: the caller's ``validate`` of ``new`` found no error, so its
        labels, annotations, owner references and managed fields are known valid."""
        return validate_object_meta_update(
            new.get("metadata") or {},
            old.get("metadata") or {},
            new_path("metadata"),
            kube_finalizers=rd is None or kube_finalizers(rd),
            collections=collections,
        )

    return validate, validate_update


def _patchers() -> dict[str, Any]:
    def smp(rd: ResourceDef, current: Obj, patch: Obj) -> Obj:
        node = schema.for_gvk(rd.group, rd.version, rd.kind)
        # the registry's ``current`` is its own fresh decoding of the stored object: merge in it
        return strategic_merge(current, patch, node, copy_original=False)

    def ssa(rd: ResourceDef, live: Obj | None, applied: Obj, opts: WriteOptions, now: str) -> Obj:
        # a custom resource's own schema carries its list-type/map-type markers
        node = rd.schema if rd.schema is not None else schema.for_gvk(rd.group, rd.version, rd.kind)
        applied.setdefault("apiVersion", rd.api_version)
        applied.setdefault("kind", rd.kind)
        return server_side_apply(
            live,
            applied,
            opts.field_manager,
            opts.force,
            node,
            now,
            rd.api_version,
            kind=rd.kind,
            subresource=opts.subresource,
        )

    return {STRATEGIC_PATCH: smp, APPLY_PATCH: ssa}


def build_api(
    gates: FeatureGate | None = None,
    clock: Clock | None = None,
    store: Storage | None = None,
    extra_resources: list[ResourceDef] | None = None,
    service_cluster_ip_range: str = DEFAULT_SERVICE_CIDR,
    service_node_port_range: str = DEFAULT_NODE_PORT_RANGE,
    authorization_mode: str = ALWAYS_ALLOW,
    service_account_key: SigningKey | None = None,
    webhook_service_addresses: dict[str, str] | None = None,
) -> GenericStore:
    gates = gates or FeatureGate()
    registry = Registry(builtin_resources() + list(extra_resources or []))
    meta_validate, meta_update_validate = _meta_validator()
    allocator = ServiceAllocator(service_cluster_ip_range, service_node_port_range)
    plugins: list[Any] = default_plugins()
    plugins.insert(1, allocator)  # after NamespaceLifecycle, before anything reads the Service
    # kube's order: built-in mutating plugins, then MutatingAdmissionPolicy; built-in validating
    # plugins, then ValidatingAdmissionPolicy (the generic registry runs every admit before every validate)
    plugins += [
        MutatingAdmissionPolicyPlugin(),
        MutatingWebhookPlugin(webhook_service_addresses),
        ValidatingAdmissionPolicyPlugin(),
        ValidatingWebhookPlugin(webhook_service_addresses),
    ]
    api = GenericStore(
        registry,
        store or MemoryStorage(),
        gates,
        plugins,
        clock or Clock(),
        meta_validator=meta_validate,
        meta_update_validator=meta_update_validate,
        body_checker=check_body,
        patchers=_patchers(),
        field_tracker=FieldTracker(),
        validated_metadata=ValidatedMetadata(),
    )
    api.webhook_service_addresses = dict(webhook_service_addresses or {})
    install_custom_resources(api)
    api.write_hooks.append(allocator.observe)
    api.authorization = Authorization(authorization_mode, StorePolicySource(api))
    api.service_account_tokens = ServiceAccountTokens(
        api.lookup, api.clock.now, key=service_account_key, mark_used=_legacy_token_tracker(api)
    )
    api.authenticate_token = api.service_account_tokens
    bootstrap(api, allocator.first_ip)
    return api


def _legacy_token_tracker(api: GenericStore) -> MarkUsed:
    """Labels a legacy token's Secret with the day of its use, as kube-apiserver's legacy validator
    does (a merge patch naming the Secret's uid, so a recreated Secret is left alone)."""

    def mark_used(namespace: str, name: str, uid: str, day: str) -> None:
        secrets = api.registry.get("", "v1", "secrets")
        assert secrets is not None
        patch = {"metadata": {"uid": uid, "labels": {LAST_USED_LABEL: day}}}
        try:
            api.patch(
                secrets, namespace, name, patch, MERGE_PATCH, WriteOptions(field_manager="kube-apiserver")
            )
        except errors.StatusError as e:  # gone or recreated meanwhile: nothing to track
            log.info("could not label legacy token secret %s/%s: %s", namespace, name, e.message)

    return mark_used


def bootstrap(api: GenericStore, kubernetes_service_ip: str = "") -> None:
    """The objects every kube-apiserver creates at start (namespaces, priority classes, the kubernetes Service)."""
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
    if kubernetes_service_ip:
        ensure_kubernetes_service(api, kubernetes_service_ip)


KUBERNETES_SERVICE_LABELS = {"component": "apiserver", "provider": "kubernetes"}


def ensure_kubernetes_service(api: GenericStore, cluster_ip: str) -> None:
    """The ``default/kubernetes`` Service at the range's first address (kube's kubernetesservice controller)."""
    rd = api.registry.get("", "v1", "services")
    assert rd is not None
    if api.store.get(rd.storage_key, ("default", "kubernetes")) is not None:
        return
    api.create(
        rd,
        "default",
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "kubernetes", "labels": dict(KUBERNETES_SERVICE_LABELS)},
            "spec": {
                "type": "ClusterIP",
                "clusterIP": cluster_ip,
                "sessionAffinity": "None",
                "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}],
            },
        },
    )


def publish_apiserver_endpoint(api: GenericStore, host: str, port: int) -> None:
    """Point the ``kubernetes`` Service at the serving address: its EndpointSlice and Endpoints.

    kube-apiserver's endpoint reconciler writes these for its advertise address. gangplane listens on
    loopback, which kube's endpoint validation refuses for user writes, so the API server stores its
    own record directly, as it does for the system priority classes.
    """
    from apiserver.meta import new_uid, rfc3339

    svc_rd = api.registry.get("", "v1", "services")
    assert svc_rd is not None
    svc = api.store.get(svc_rd.storage_key, ("default", "kubernetes"))
    if svc is None:
        return
    now = rfc3339(api.clock.now())
    address = "127.0.0.1" if host in ("", "0.0.0.0", "localhost") else host
    family = "IPv6" if ":" in address else "IPv4"
    targets = [
        (
            ("discovery.k8s.io", "endpointslices"),
            {
                "apiVersion": "discovery.k8s.io/v1",
                "kind": "EndpointSlice",
                "metadata": {
                    "name": "kubernetes",
                    "namespace": "default",
                    "labels": {"kubernetes.io/service-name": "kubernetes"},
                    "generation": 1,
                },
                "addressType": family,
                "endpoints": [{"addresses": [address], "conditions": {"ready": True}}],
                "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
            },
        ),
        (
            ("", "endpoints"),
            {
                "apiVersion": "v1",
                "kind": "Endpoints",
                "metadata": {
                    "name": "kubernetes",
                    "namespace": "default",
                    "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"},
                },
                "subsets": [
                    {
                        "addresses": [{"ip": address}],
                        "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
                    }
                ],
            },
        ),
    ]
    for storage_key, obj in targets:
        if api.registry.get(storage_key[0], "v1", storage_key[1]) is None:
            continue
        current = api.store.get(storage_key, ("default", "kubernetes"))
        if current is None:
            obj["metadata"].update(uid=new_uid(), creationTimestamp=now)
            rec = api.store.create(storage_key, ("default", "kubernetes"), obj)
            api._notify("create", api.registry.get(storage_key[0], "v1", storage_key[1]), rec.obj)
        else:
            md = current.obj["metadata"]
            obj["metadata"].update(uid=md["uid"], creationTimestamp=md["creationTimestamp"])
            rec = api.store.update(storage_key, ("default", "kubernetes"), obj, current.rv)
            api._notify("update", api.registry.get(storage_key[0], "v1", storage_key[1]), rec.obj)


def _system_priority_class(api: GenericStore, name: str, value: int, desc: str) -> Obj:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {
            "name": name,
            "uid": new_uid(),
            "creationTimestamp": rfc3339(api.clock.now()),
            "generation": 1,
        },
        "value": value,
        "globalDefault": False,
        "description": desc,
        "preemptionPolicy": "PreemptLowerPriority",
    }


def new_metrics_registry() -> tuple[CollectorRegistry, APIServerMetrics]:
    reg = CollectorRegistry()
    return reg, APIServerMetrics(reg)
