"""Strategies of the core/v1 resources, after ``pkg/registry/core/*/strategy.go``.

Each class applies kube's v1 defaults (``pkg/apis/core/v1/defaults.go``), the create/update
preparation of its registry strategy (status reset, gated-field dropping, server-set status)
and the validation of ``pkg/apis/core/validation`` with the same field paths and messages.
Object metadata is validated by the generic registry, not here.
"""

from __future__ import annotations

import base64
import binascii
import copy
import ipaddress
import re
from typing import Any

from apiserver import field
from apiserver.api.types import as_int as _int
from apiserver.field import ErrorList, Path
from apiserver.registry.strategies import podspec
from apiserver.registry.strategies.pod_ephemeral import PodEphemeralContainersStrategy
from apiserver.registry.strategies.podspec import (
    PodValidationOptions,
    as_dict,
    as_list,
    canonical_resource_list,
    fmt_errors,
    pod_qos_class,
    quantity_or_none,
    quantity_text,
    validate_quantity_value,
)
from apiserver.registry.strategy import Obj, Strategy, StrategyContext
from apiserver.validation import names
from apiserver.validation.meta import (
    FIELD_IMMUTABLE,
    validate_immutable,
    validate_label_selector,
    validate_labels,
    validate_nonnegative_field,
)

MAX_SECRET_SIZE = 1024 * 1024
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
POD_PHASES = ["Pending", "Running", "Succeeded", "Failed", "Unknown"]
ACCESS_MODES = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]  # sets.List order
VOLUME_MODES = ["Block", "Filesystem"]
RECLAIM_POLICIES = ["Delete", "Recycle", "Retain"]
SERVICE_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]  # sets.List order
SESSION_AFFINITIES = ["ClientIP", "None"]
TRAFFIC_POLICIES = ["Cluster", "Local"]
DEFAULT_CLIENT_IP_TIMEOUT = 10800
LIMIT_TYPES = frozenset({"Pod", "Container", "PersistentVolumeClaim"})
EVENT_TYPES = ("Normal", "Warning")
_QUOTA_RESOURCES = frozenset(
    {
        "pods",
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
        "requests.cpu",
        "requests.memory",
        "requests.storage",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "cpu",
        "memory",
        "storage",
        "ephemeral-storage",
    }
)
_QUOTA_SCOPES = (
    "Terminating",
    "NotTerminating",
    "BestEffort",
    "NotBestEffort",
    "PriorityClass",
    "CrossNamespacePodAffinity",
    "VolumeAttributesClass",
)
_CONFIG_KEY_FMT = "[-._a-zA-Z0-9]+"
_CONFIG_KEY_RE = re.compile(_CONFIG_KEY_FMT)
_SCHEDULING_GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"


def _spec(obj: Obj) -> Obj:
    """``obj["spec"]`` as a dict, created when missing or malformed (defaulting writes into it)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = {}
        obj["spec"] = spec
    return spec


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def is_config_map_key(value: str) -> list[str]:
    """``IsConfigMapKey``: the keys of ConfigMap/Secret data and projected items."""
    errs: list[str] = []
    if names.byte_len(value) > names.DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(names.max_len_error(names.DNS1123_SUBDOMAIN_MAX_LENGTH))
    if _CONFIG_KEY_RE.fullmatch(value) is None:
        errs.append(
            names.regex_error(
                "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
                _CONFIG_KEY_FMT,
                "key.name",
                "KEY_NAME",
                "key-name",
            )
        )
    if value == ".":
        errs.append("must not be '.'")
    elif value == "..":
        errs.append("must not be '..'")
    elif value.startswith(".."):
        errs.append("must not start with '..'")
    return errs


#: a newline-joined run of keys that ``is_config_map_key`` accepts, none starting with ``..``:
#: lets a map of 100,000 keys be checked in one C call (a key holding a newline fails it)
_CONFIG_KEYS_RE = re.compile(r"(?:(?!\.\.)[-._a-zA-Z0-9]+\n)*")


def all_config_map_keys(keys: list[str]) -> bool:
    """Whether every key passes :func:`is_config_map_key` (the bulk check of a whole map).

    The pattern refuses a key starting with ``..`` (so ``..`` too); ``.`` alone and a key
    holding a newline (which would read as two keys) are ruled out before it.
    """
    if not keys:
        return True
    if max(map(len, keys)) > names.DNS1123_SUBDOMAIN_MAX_LENGTH or "." in keys:
        return False
    joined = "\n".join(keys) + "\n"
    return joined.count("\n") == len(keys) and _CONFIG_KEYS_RE.fullmatch(joined) is not None


def is_valid_ip(value: str) -> list[str]:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return ["must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"]
    return []


def is_valid_cidr(value: str) -> list[str]:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        return ["must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"]
    return [] if "/" in value else ["must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"]


def _canonical_status_lists(obj: Obj, *keys: str) -> None:
    status = obj.get("status")
    if isinstance(status, dict):
        for k in keys:
            if isinstance(status.get(k), dict):
                status[k] = canonical_resource_list(status[k])


def _keep_old_status(new: Obj, old: Obj) -> None:
    if "status" in old:
        new["status"] = copy.deepcopy(old["status"])
    else:
        new.pop("status", None)


class UntrackedGenerationStrategy(Strategy):
    """A resource whose kube strategy never bumps ``metadata.generation`` (no spec/status split)."""

    tracks_generation = False

    def generation_relevant(self, obj: Obj) -> Any:
        return None


# ============================================================================ Pod


def _apply_label_keys(term: Any, labels: dict[str, Any]) -> None:
    """``applyMatchLabelKeysAndMismatchLabelKeys``: fold label keys into the term's selector."""
    if not isinstance(term, dict) or not isinstance(term.get("labelSelector"), dict):
        return
    sel = term["labelSelector"]
    for key, op in (("matchLabelKeys", "In"), ("mismatchLabelKeys", "NotIn")):
        for k in as_list(term.get(key)):
            if isinstance(k, str) and k in labels:
                sel.setdefault("matchExpressions", []).append(
                    {"key": k, "operator": op, "values": [labels[k]]}
                )


def mutate_pod_affinity(pod: Obj) -> None:
    """``mutatePodAffinity``: resolve ``matchLabelKeys``/``mismatchLabelKeys`` at creation."""
    labels = as_dict(as_dict(pod.get("metadata")).get("labels"))
    aff = as_dict(_spec(pod).get("affinity"))
    for kind in ("podAffinity", "podAntiAffinity"):
        pa = as_dict(aff.get(kind))
        for wt in as_list(pa.get("preferredDuringSchedulingIgnoredDuringExecution")):
            _apply_label_keys(as_dict(wt).get("podAffinityTerm"), labels)
        for term in as_list(pa.get("requiredDuringSchedulingIgnoredDuringExecution")):
            _apply_label_keys(term, labels)


def scheduling_gated_condition() -> Obj:
    """The ``PodScheduled=False/SchedulingGated`` condition the apiserver adds to gated pods."""
    return {
        "type": "PodScheduled",
        "status": "False",
        "lastProbeTime": None,
        "lastTransitionTime": None,
        "reason": "SchedulingGated",
        "message": _SCHEDULING_GATED_MESSAGE,
    }


def _validate_pod_metadata_and_spec(pod: Obj, ctx: StrategyContext) -> ErrorList:
    """``validatePodMetadataAndSpec`` minus ObjectMeta (the registry validates that)."""
    spec = as_dict(pod.get("spec"))
    sp = Path("spec")
    errs: ErrorList = []
    ann = as_dict(as_dict(pod.get("metadata")).get("annotations"))
    if MIRROR_POD_ANNOTATION in ann and not spec.get("nodeName"):
        errs.append(
            field.invalid(
                Path("metadata", "annotations").key(MIRROR_POD_ANNOTATION),
                ann[MIRROR_POD_ANNOTATION],
                "must set spec.nodeName if mirror pod annotation is set",
            )
        )
    errs.extend(podspec.validate_pod_spec(spec, sp, PodValidationOptions(resource_is_pod=True)))
    if not spec.get("serviceAccountName"):
        for vi, vol in enumerate(as_list(spec.get("volumes"))):
            for si, src in enumerate(as_list(as_dict(as_dict(vol).get("projected")).get("sources"))):
                if as_dict(src).get("serviceAccountToken") is not None:
                    errs.append(
                        field.forbidden(
                            sp.child("volumes")
                            .index(vi)
                            .child("projected", "sources")
                            .index(si)
                            .child("serviceAccountToken"),
                            "must not be specified when serviceAccountName is not set",
                        )
                    )
    for key in ("containers", "initContainers"):
        for i, c in enumerate(as_list(spec.get(key))):
            image = _str(as_dict(c).get("image"))
            if image != image.strip():
                errs.append(
                    field.invalid(
                        sp.child(key).index(i).child("image"),
                        image,
                        "must not have leading or trailing whitespace",
                    )
                )
    return errs


def _validate_mirror_annotation_update(new: Obj, old: Obj) -> ErrorList:
    new_ann = as_dict(as_dict(new.get("metadata")).get("annotations"))
    old_ann = as_dict(as_dict(old.get("metadata")).get("annotations"))
    p = Path("metadata", "annotations").key(MIRROR_POD_ANNOTATION)
    if (
        MIRROR_POD_ANNOTATION in old_ann
        and new_ann.get(MIRROR_POD_ANNOTATION) != old_ann[MIRROR_POD_ANNOTATION]
    ):
        return [field.forbidden(p, "may not remove or update mirror pod annotation")]
    if MIRROR_POD_ANNOTATION in new_ann and MIRROR_POD_ANNOTATION not in old_ann:
        return [field.forbidden(p, "may not add mirror pod annotation")]
    return []


class PodStrategy(Strategy):
    """``pkg/registry/core/pod/strategy.go``: Pending status and QoS on create, immutable spec."""

    has_status = True
    graceful_delete = True

    def check_graceful_delete(self, obj: Obj, requested: int | None) -> int:
        """kube's pod ``CheckGracefulDelete``: unscheduled or terminal pods go at once."""
        spec = as_dict(obj.get("spec"))
        phase = as_dict(obj.get("status")).get("phase")
        if requested is not None:
            grace = requested
        else:
            grace = int(spec.get("terminationGracePeriodSeconds", 30) or 0)
        if not spec.get("nodeName") or phase in ("Succeeded", "Failed"):
            return 0
        return max(grace, 0)

    def default(self, obj: Obj) -> None:
        podspec.default_pod(obj)

    def prepare_for_create(self, ctx: StrategyContext, obj: Obj) -> None:
        spec = _spec(obj)
        podspec.drop_disabled_pod_spec_fields(spec, None, ctx.gates)
        obj["status"] = {"phase": "Pending", "qosClass": pod_qos_class(obj)}
        if as_list(spec.get("schedulingGates")):
            obj["status"]["conditions"] = [scheduling_gated_condition()]
        mutate_pod_affinity(obj)

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        errs = _validate_pod_metadata_and_spec(obj, ctx)
        spec = as_dict(obj.get("spec"))
        if as_list(spec.get("ephemeralContainers")):
            errs.append(field.forbidden(Path("spec", "ephemeralContainers"), "cannot be set on create"))
        if spec.get("nodeName") and as_list(spec.get("schedulingGates")):
            errs.append(
                field.forbidden(
                    Path("spec", "nodeName"), "cannot be set until all schedulingGates have been cleared"
                )
            )
        return errs

    def warnings_on_create(self, ctx: StrategyContext, obj: Obj) -> list[str]:
        return pod_warnings(as_dict(obj.get("spec")), Path("spec"))

    def prepare_for_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> None:
        _keep_old_status(new, old)
        podspec.drop_disabled_pod_spec_fields(_spec(new), old.get("spec"), ctx.gates)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        errs = _validate_pod_metadata_and_spec(new, ctx)
        errs.extend(_validate_mirror_annotation_update(new, old))
        errs.extend(podspec.validate_pod_spec_update(new, old))
        return errs

    def prepare_for_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> None:
        super().prepare_for_status_update(ctx, new, old)
        status = new.get("status")
        if isinstance(status, dict) and not status.get("qosClass"):
            old_qos = as_dict(old.get("status")).get("qosClass")
            if old_qos:
                status["qosClass"] = old_qos

    def validate_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_pod_status_update(new, old)

    def subresource_strategy(self, name: str) -> Strategy | None:
        return _EPHEMERAL_CONTAINERS if name == "ephemeralcontainers" else None


#: ``pods/ephemeralcontainers`` (``kubectl debug``), validated with the pod's own checks first
_EPHEMERAL_CONTAINERS = PodEphemeralContainersStrategy(_validate_pod_metadata_and_spec)


def pod_warnings(spec: Obj, path: Path) -> list[str]:
    """A few of ``GetWarningsForPodTemplate``'s warnings that users commonly hit."""
    out: list[str] = []
    tgps = _int(spec.get("terminationGracePeriodSeconds"))
    if tgps is not None and tgps < 0:
        out.append(
            f"{path.child('terminationGracePeriodSeconds')}: must be >= 0; negative values are invalid and will be treated as 1"
        )
    for key in ("nodeSelector",):
        for label in as_dict(spec.get(key)):
            if label == "beta.kubernetes.io/os":
                out.append(
                    f'{path.child(key).key(label)}: deprecated since v1.14; use "kubernetes.io/os" instead'
                )
            elif label == "beta.kubernetes.io/arch":
                out.append(
                    f'{path.child(key).key(label)}: deprecated since v1.14; use "kubernetes.io/arch" instead'
                )
    return out


def validate_pod_status_update(new: Obj, old: Obj) -> ErrorList:
    """``ValidatePodStatusUpdate``: nominated node name, phase, conditions, container states."""
    errs: ErrorList = []
    status, old_status = as_dict(new.get("status")), as_dict(old.get("status"))
    sp = Path("status")
    for i, cond in enumerate(as_list(status.get("conditions"))):
        ctype = _str(as_dict(cond).get("type"))
        if ctype not in ("PodScheduled", "Ready", "Initialized"):
            # kube reports these under "metadata" (its path variable is reused), kept verbatim.
            errs.extend(
                fmt_errors(
                    ctype, Path("metadata", "conditions").index(i).child("Type"), names.is_qualified_name
                )
            )
    if as_dict(new.get("spec")).get("nodeName") != as_dict(old.get("spec")).get("nodeName"):
        errs.append(field.forbidden(sp.child("nodeName"), "may not be changed directly"))
    phase = status.get("phase")
    if phase not in (None, "") and phase not in POD_PHASES:
        errs.append(field.not_supported(sp.child("phase"), phase, POD_PHASES))
    nnn = _str(status.get("nominatedNodeName"))
    if nnn and nnn != old_status.get("nominatedNodeName"):
        errs.extend(
            fmt_errors(nnn, sp.child("nominatedNodeName"), lambda s: names.name_is_dns_subdomain(s, False))
        )
    restart = _str(as_dict(old.get("spec")).get("restartPolicy"))
    errs.extend(_container_state_transitions(status, old_status, "containerStatuses", restart, set(), sp))
    sidecars = {
        _str(as_dict(c).get("name"))
        for c in as_list(as_dict(old.get("spec")).get("initContainers"))
        if podspec.is_restartable_init_container(as_dict(c))
    }
    errs.extend(
        _container_state_transitions(status, old_status, "initContainerStatuses", restart, sidecars, sp)
    )
    for i, ip in enumerate(as_list(status.get("podIPs"))):
        errs.extend(fmt_errors(_str(as_dict(ip).get("ip")), sp.child("podIPs").index(i), is_valid_ip))
    errs.extend(validate_nonnegative_field(status.get("observedGeneration"), sp.child("observedGeneration")))
    return errs


def _container_state_transitions(
    status: Obj, old_status: Obj, key: str, restart: str, restartable: set[str], sp: Path
) -> ErrorList:
    """Terminated containers of a non-restarting pod may not come back to life."""
    if restart == "Always":
        return []
    errs: ErrorList = []
    new_by_name = {_str(as_dict(s).get("name")): as_dict(s) for s in as_list(status.get(key))}
    for i, old_cs in enumerate(as_list(old_status.get(key))):
        old_cs = as_dict(old_cs)
        term = as_dict(as_dict(old_cs.get("state")).get("terminated"))
        if not as_dict(old_cs.get("state")).get("terminated"):
            continue
        if (_int(term.get("exitCode")) or 0) != 0 and restart == "OnFailure":
            continue
        name = _str(old_cs.get("name"))
        if name in restartable:
            continue
        new_cs = new_by_name.get(name)
        if new_cs is not None and not as_dict(new_cs.get("state")).get("terminated"):
            errs.append(
                field.forbidden(
                    sp.child(key).index(i).child("state"), "may not be transitioned to non-terminated state"
                )
            )
    return errs


# ============================================================================ Node


def validate_node_taints(taints: Any, path: Path) -> ErrorList:
    """``validateNodeTaints``: key, value, effect; unique per (key, effect)."""
    errs: ErrorList = []
    seen: set[tuple[str, str]] = set()
    for i, t in enumerate(as_list(taints)):
        t = as_dict(t)
        p = path.index(i)
        key, value, effect = _str(t.get("key")), _str(t.get("value")), _str(t.get("effect"))
        errs.extend(fmt_errors(key, p.child("key"), names.is_qualified_name))
        msgs = names.is_valid_label_value(value)
        if msgs:
            errs.append(field.invalid(p.child("value"), value, ";".join(msgs)))
        errs.extend(podspec.validate_taint_effect(effect, False, p.child("effect")))
        if (key, effect) in seen:
            errs.append(
                field.FieldError(
                    field.ErrorType.DUPLICATE, str(p), t, "taints must be unique by key and effect pair"
                )
            )
            continue
        seen.add((key, effect))
    return errs


def _validate_node_resources(node: Obj) -> ErrorList:
    errs: ErrorList = []
    status = as_dict(node.get("status"))
    for kind in ("capacity", "allocatable"):
        for name, raw in as_dict(status.get(kind)).items():
            errs.extend(validate_quantity_value(name, raw, Path("status", kind, name))[1])
    return errs


def _validate_node_common(node: Obj) -> ErrorList:
    spec = as_dict(node.get("spec"))
    # kube validates taints under "metadata" (the path variable it had at hand); kept verbatim.
    errs = validate_node_taints(spec.get("taints"), Path("metadata", "taints"))
    errs.extend(_validate_node_resources(node))
    cidrs = as_list(spec.get("podCIDRs"))
    p = Path("spec", "podCIDRs")
    for i, c in enumerate(cidrs):
        errs.extend(fmt_errors(_str(c), p.index(i), is_valid_cidr))
    seen: set[str] = set()
    for i, c in enumerate(cidrs):
        if c in seen:
            errs.append(field.duplicate(p.index(i), c))
        seen.add(c)
    return errs


class NodeStrategy(UntrackedGenerationStrategy):
    """Nodes: kubelets register with a status, so create keeps it; updates keep the old one."""

    has_status = True

    def default(self, obj: Obj) -> None:
        status = obj.get("status")
        if isinstance(status, dict):
            if status.get("allocatable") is None and isinstance(status.get("capacity"), dict):
                status["allocatable"] = copy.deepcopy(status["capacity"])
            _canonical_status_lists(obj, "capacity", "allocatable")

    def prepare_for_create(self, ctx: StrategyContext, obj: Obj) -> None:
        """Unlike most resources the status given on create is kept (``kubelet`` registration)."""

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return _validate_node_common(obj)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_node_update(new, old)

    def validate_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_node_update(new, old)


def validate_node_update(new: Obj, old: Obj) -> ErrorList:
    """``ValidateNodeUpdate``: podCIDRs and providerID are set once; addresses unique."""
    errs = _validate_node_common(new)
    spec, old_spec = as_dict(new.get("spec")), as_dict(old.get("spec"))
    seen: list[Any] = []
    for i, addr in enumerate(as_list(as_dict(new.get("status")).get("addresses"))):
        if addr in seen:
            errs.append(field.duplicate(Path("status", "addresses").index(i), addr))
        seen.append(addr)
    old_cidrs = as_list(old_spec.get("podCIDRs"))
    if old_cidrs and old_cidrs != as_list(spec.get("podCIDRs")):
        errs.append(
            field.forbidden(
                Path("spec", "podCIDRs"), 'node updates may not change podCIDR except from "" to valid'
            )
        )
    old_pid = _str(old_spec.get("providerID"))
    if old_pid and old_pid != _str(spec.get("providerID")):
        errs.append(
            field.forbidden(
                Path("spec", "providerID"), 'node updates may not change providerID except from "" to valid'
            )
        )
    if spec.get("externalID") != old_spec.get("externalID"):
        errs.append(field.forbidden(Path("spec", "externalID"), "may not be updated"))
    return errs


# ============================================================================ Namespace


def _validate_namespace_finalizers(finalizers: Any) -> ErrorList:
    p = Path("spec", "finalizers")
    errs: ErrorList = []
    for f in as_list(finalizers):
        f = _str(f)
        errs.extend(fmt_errors(f, p, names.is_qualified_name))
        if "/" not in f and f != "kubernetes":
            errs.append(
                field.invalid(p, f, "name is neither a standard finalizer name nor is it fully qualified")
            )
    return errs


class NamespaceStrategy(UntrackedGenerationStrategy):
    """Namespaces: Active on create with the ``kubernetes`` finalizer; name label enforced."""

    has_status = True

    def holds_deletion(self, obj: Obj) -> bool:
        """kube's namespace REST ``Delete``: ``spec.finalizers`` keep it until the namespace
        controller has emptied it and released them through ``namespaces/finalize``."""
        return bool(as_list(_spec(obj).get("finalizers")))

    def prepare_for_delete(self, obj: Obj) -> None:
        obj.setdefault("status", {})["phase"] = "Terminating"

    def default(self, obj: Obj) -> None:
        status = obj.get("status")
        if isinstance(status, dict) and not status.get("phase"):
            status["phase"] = "Active"
        _ensure_name_label(obj)

    def prepare_for_create(self, ctx: StrategyContext, obj: Obj) -> None:
        obj["status"] = {"phase": "Active"}
        spec = _spec(obj)
        fins = [f for f in as_list(spec.get("finalizers"))]
        if "kubernetes" not in fins:
            fins.append("kubernetes")
        spec["finalizers"] = fins
        _ensure_name_label(obj)

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return _validate_namespace_finalizers(as_dict(obj.get("spec")).get("finalizers"))

    def prepare_for_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> None:
        _keep_old_status(new, old)
        old_fins = as_dict(old.get("spec")).get("finalizers")
        spec = _spec(new)
        if old_fins is None:
            spec.pop("finalizers", None)
        else:
            spec["finalizers"] = copy.deepcopy(old_fins)
        if not spec and "spec" not in old:
            new.pop("spec", None)
        _ensure_name_label(new)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return _validate_namespace_finalizers(as_dict(new.get("spec")).get("finalizers"))

    def validate_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        """``ValidateNamespaceStatusUpdate``: Active while alive, Terminating once deleted."""
        phase = as_dict(new.get("status")).get("phase") or ""
        p = Path("status", "Phase")
        if not as_dict(new.get("metadata")).get("deletionTimestamp"):
            if phase != "Active":
                return [field.invalid(p, phase, "may only be 'Active' if `deletionTimestamp` is empty")]
        elif phase != "Terminating":
            return [field.invalid(p, phase, "may only be 'Terminating' if `deletionTimestamp` is not empty")]
        return []


def _ensure_name_label(obj: Obj) -> None:
    md = obj.get("metadata")
    if isinstance(md, dict) and md.get("name"):
        labels = md.get("labels")
        if not isinstance(labels, dict):
            labels = {}
            md["labels"] = labels
        labels[NAMESPACE_NAME_LABEL] = md["name"]


# ============================================================================ Service


def _is_headless(spec: Obj) -> bool:
    ips = as_list(spec.get("clusterIPs"))
    return bool(ips) and ips[0] == "None" or spec.get("clusterIP") == "None"


def _externally_accessible(spec: Obj) -> bool:
    return spec.get("type") in ("LoadBalancer", "NodePort") or (
        spec.get("type") == "ClusterIP" and bool(as_list(spec.get("externalIPs")))
    )


def _needs_cluster_ip(spec: Obj) -> bool:
    return (spec.get("type") or "ClusterIP") != "ExternalName"


def _needs_node_port(spec: Obj) -> bool:
    t = spec.get("type") or "ClusterIP"
    return t == "NodePort" or (
        t == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts", True) is not False
    )


def _externally_accessible(spec: Obj) -> bool:
    t = spec.get("type") or "ClusterIP"
    return t in ("NodePort", "LoadBalancer") or (t == "ClusterIP" and bool(as_list(spec.get("externalIPs"))))


def drop_type_dependent_fields(spec: Obj, old_spec: Obj) -> None:
    """``dropTypeDependentFields``: on a type change, clear what the new type cannot have, unless the user changed it."""
    if (spec.get("type") or "ClusterIP") == (old_spec.get("type") or "ClusterIP"):
        return
    if _needs_cluster_ip(old_spec) and not _needs_cluster_ip(spec):
        if spec.get("clusterIP") == old_spec.get("clusterIP") and spec.get("clusterIPs") == old_spec.get(
            "clusterIPs"
        ):
            spec.pop("clusterIP", None)
            spec.pop("clusterIPs", None)
        if spec.get("ipFamilies") == old_spec.get("ipFamilies"):
            spec.pop("ipFamilies", None)
        if spec.get("ipFamilyPolicy") == old_spec.get("ipFamilyPolicy"):
            spec.pop("ipFamilyPolicy", None)
    ports = [p for p in as_list(spec.get("ports")) if isinstance(p, dict)]
    old_ports = [p for p in as_list(old_spec.get("ports")) if isinstance(p, dict)]
    same_node_ports = [p.get("nodePort") for p in ports] == [p.get("nodePort") for p in old_ports]
    if _needs_node_port(old_spec) and not _needs_node_port(spec) and same_node_ports:
        for p in ports:
            p.pop("nodePort", None)
    old_hc = old_spec.get("type") == "LoadBalancer" and old_spec.get("externalTrafficPolicy") == "Local"
    new_hc = spec.get("type") == "LoadBalancer" and spec.get("externalTrafficPolicy") == "Local"
    if old_hc and not new_hc and spec.get("healthCheckNodePort") == old_spec.get("healthCheckNodePort"):
        spec.pop("healthCheckNodePort", None)
    if old_spec.get("type") == "LoadBalancer" and spec.get("type") != "LoadBalancer":
        if "allocateLoadBalancerNodePorts" in spec and spec.get(
            "allocateLoadBalancerNodePorts"
        ) == old_spec.get("allocateLoadBalancerNodePorts"):
            spec.pop("allocateLoadBalancerNodePorts", None)
        if spec.get("loadBalancerClass") == old_spec.get("loadBalancerClass"):
            spec.pop("loadBalancerClass", None)
    if not _externally_accessible(spec) and spec.get("externalTrafficPolicy") == old_spec.get(
        "externalTrafficPolicy"
    ):
        spec.pop("externalTrafficPolicy", None)


class ServiceStrategy(UntrackedGenerationStrategy):
    """Services: kube's defaults, port rules and immutable cluster IPs.

    Allocation of ClusterIPs and NodePorts is :mod:`apiserver.registry.servicealloc`.
    """

    has_status = True

    def default(self, obj: Obj) -> None:
        spec = _spec(obj)
        if not spec.get("sessionAffinity"):
            spec["sessionAffinity"] = "None"
        if spec["sessionAffinity"] == "None":
            spec.pop("sessionAffinityConfig", None)
        elif spec["sessionAffinity"] == "ClientIP":
            cfg = as_dict(as_dict(spec.get("sessionAffinityConfig")).get("clientIP"))
            if cfg.get("timeoutSeconds") is None:
                spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": DEFAULT_CLIENT_IP_TIMEOUT}}
        if not spec.get("type"):
            spec["type"] = "ClusterIP"
        for p in as_list(spec.get("ports")):
            if not isinstance(p, dict):
                continue
            if not p.get("protocol"):
                p["protocol"] = "TCP"
            if p.get("targetPort") in (None, 0, ""):
                p["targetPort"] = p.get("port")
        if spec["type"] in ("NodePort", "LoadBalancer") and not spec.get("externalTrafficPolicy"):
            spec["externalTrafficPolicy"] = "Cluster"
        if spec["type"] != "ExternalName" and spec.get("internalTrafficPolicy") is None:
            spec["internalTrafficPolicy"] = "Cluster"
        if spec["type"] == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
            spec["allocateLoadBalancerNodePorts"] = True
        if spec.get("clusterIP") and not as_list(spec.get("clusterIPs")):
            spec["clusterIPs"] = [spec["clusterIP"]]

    def prepare_for_create(self, ctx: StrategyContext, obj: Obj) -> None:
        obj["status"] = {"loadBalancer": {}}
        spec = _spec(obj)
        if spec.get("type") != "ExternalName":
            spec.setdefault("ipFamilyPolicy", "SingleStack")
            spec.setdefault("ipFamilies", ["IPv4"])

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_service_spec(as_dict(obj.get("spec")))

    def prepare_for_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> None:
        _keep_old_status(new, old)
        drop_type_dependent_fields(_spec(new), as_dict(old.get("spec")))
        spec, old_spec = _spec(new), as_dict(old.get("spec"))
        if (
            spec.get("type") != "ExternalName"
            and old_spec.get("type") != "ExternalName"
            and not spec.get("clusterIP")
        ):
            for key in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
                if key in old_spec:
                    spec[key] = copy.deepcopy(old_spec[key])
        old_node_ports = {
            (p.get("port"), p.get("protocol")): p.get("nodePort")
            for p in map(as_dict, as_list(old_spec.get("ports")))
        }
        if spec.get("type") in ("NodePort", "LoadBalancer"):
            for p in as_list(spec.get("ports")):
                if isinstance(p, dict) and not p.get("nodePort"):
                    np = old_node_ports.get((p.get("port"), p.get("protocol")))
                    if np:
                        p["nodePort"] = np

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        spec, old_spec = as_dict(new.get("spec")), as_dict(old.get("spec"))
        errs = validate_service_spec(spec)
        if spec.get("type") != "ExternalName" and old_spec.get("type") != "ExternalName":
            new_ips, old_ips = as_list(spec.get("clusterIPs")), as_list(old_spec.get("clusterIPs"))
            for i in range(min(len(new_ips), len(old_ips))):
                if new_ips[i] != old_ips[i]:
                    errs.append(
                        field.invalid(Path("spec", "clusterIPs").index(i), new_ips, "may not change once set")
                    )
        return errs


def validate_service_spec(spec: Obj) -> ErrorList:
    """``ValidateService`` (spec part): ports, type, affinity, traffic policies."""
    sp = Path("spec")
    errs: ErrorList = []
    stype = _str(spec.get("type"))
    ports = as_list(spec.get("ports"))
    headless = _is_headless(spec)
    if not ports and not headless and stype != "ExternalName":
        errs.append(field.required(sp.child("ports")))
    if stype in ("LoadBalancer", "NodePort") and headless:
        errs.append(
            field.invalid(
                sp.child("clusterIPs").index(0), "None", f"may not be set to 'None' for {stype} services"
            )
        )
    if stype == "ExternalName":
        if as_list(spec.get("clusterIPs")):
            errs.append(field.forbidden(sp.child("clusterIPs"), "may not be set for ExternalName services"))
        cname = _str(spec.get("externalName")).removesuffix(".")
        if cname:
            errs.extend(fmt_errors(cname, sp.child("externalName"), names.is_dns1123_subdomain))
        else:
            errs.append(field.required(sp.child("externalName")))
    seen_names: set[str] = set()
    for i, port in enumerate(ports):
        port = as_dict(port)
        pp = sp.child("ports").index(i)
        name = _str(port.get("name"))
        if len(ports) > 1 and not name:
            errs.append(field.required(pp.child("name")))
        elif name:
            errs.extend(fmt_errors(name, pp.child("name"), names.is_dns1123_label))
            if name in seen_names:
                errs.append(field.duplicate(pp.child("name"), name))
            seen_names.add(name)
        pnum = _int(port.get("port")) or 0
        errs.extend(field.invalid(pp.child("port"), pnum, m) for m in names.is_valid_port_num(pnum))
        proto = _str(port.get("protocol"))
        if not proto:
            errs.append(field.required(pp.child("protocol")))
        elif proto not in podspec.PORT_PROTOCOLS:
            errs.append(field.not_supported(pp.child("protocol"), proto, podspec.PORT_PROTOCOLS))
        errs.extend(podspec.validate_port_num_or_name(port.get("targetPort"), pp.child("targetPort")))
        if stype == "ClusterIP" and port.get("nodePort"):
            errs.append(field.forbidden(pp.child("nodePort"), "may not be used when `type` is 'ClusterIP'"))
    if spec.get("selector") is not None:
        errs.extend(validate_labels(spec.get("selector"), sp.child("selector")))
    sa = _str(spec.get("sessionAffinity"))
    if not sa:
        errs.append(field.required(sp.child("sessionAffinity")))
    elif sa not in SESSION_AFFINITIES:
        errs.append(field.not_supported(sp.child("sessionAffinity"), sa, SESSION_AFFINITIES))
    if sa == "None" and spec.get("sessionAffinityConfig") is not None:
        errs.append(
            field.forbidden(
                sp.child("sessionAffinityConfig"), "must not be set when session affinity is None"
            )
        )
    for i, ip in enumerate(as_list(spec.get("externalIPs"))):
        errs.extend(fmt_errors(_str(ip), sp.child("externalIPs").index(i), is_valid_ip))
    if not stype:
        errs.append(field.required(sp.child("type")))
    elif stype not in SERVICE_TYPES:
        errs.append(field.not_supported(sp.child("type"), stype, SERVICE_TYPES))
    seen_ports: set[tuple[Any, Any]] = set()
    seen_node_ports: set[tuple[Any, Any]] = set()
    for i, port in enumerate(ports):
        port = as_dict(port)
        pp = sp.child("ports").index(i)
        np = port.get("nodePort")
        if np:
            if (port.get("protocol"), np) in seen_node_ports:
                errs.append(field.duplicate(pp.child("nodePort"), np))
            seen_node_ports.add((port.get("protocol"), np))
        key = (port.get("protocol"), port.get("port"))
        if key in seen_ports:
            errs.append(field.duplicate(pp, {"port": port.get("port"), "protocol": port.get("protocol")}))
        seen_ports.add(key)
    if spec.get("allocateLoadBalancerNodePorts") is not None and stype != "LoadBalancer":
        errs.append(
            field.forbidden(
                sp.child("allocateLoadBalancerNodePorts"), "may only be used when `type` is 'LoadBalancer'"
            )
        )
    etp = _str(spec.get("externalTrafficPolicy"))
    if not _externally_accessible(spec):
        if etp:
            errs.append(
                field.invalid(
                    sp.child("externalTrafficPolicy"),
                    etp,
                    "may only be set for externally-accessible services",
                )
            )
    elif not etp:
        errs.append(field.required(sp.child("externalTrafficPolicy")))
    elif etp not in TRAFFIC_POLICIES:
        errs.append(field.not_supported(sp.child("externalTrafficPolicy"), etp, TRAFFIC_POLICIES))
    itp = spec.get("internalTrafficPolicy")
    if stype == "ExternalName":
        pass
    elif itp is None:
        errs.append(field.required(sp.child("internalTrafficPolicy")))
    elif itp not in TRAFFIC_POLICIES:
        errs.append(field.not_supported(sp.child("internalTrafficPolicy"), itp, TRAFFIC_POLICIES))
    return errs


# ============================================================================ Endpoints


class EndpointsStrategy(UntrackedGenerationStrategy):
    """Endpoints: ports default to TCP; addresses must be IPs."""

    def default(self, obj: Obj) -> None:
        for ss in as_list(obj.get("subsets")):
            for p in as_list(as_dict(ss).get("ports")):
                if isinstance(p, dict) and not p.get("protocol"):
                    p["protocol"] = "TCP"

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_endpoints(obj)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_endpoints(new)


def validate_endpoints(obj: Obj) -> ErrorList:
    errs: ErrorList = []
    for i, ss in enumerate(as_list(obj.get("subsets"))):
        ss = as_dict(ss)
        p = Path("subsets").index(i)
        for key in ("addresses", "notReadyAddresses"):
            for j, addr in enumerate(as_list(ss.get(key))):
                addr = as_dict(addr)
                ap = p.child(key).index(j)
                errs.extend(fmt_errors(_str(addr.get("ip")), ap.child("ip"), is_valid_ip))
                hostname = _str(addr.get("hostname"))
                if hostname:
                    errs.extend(fmt_errors(hostname, ap.child("hostname"), names.is_dns1123_label))
                node = addr.get("nodeName")
                if node:
                    errs.extend(
                        fmt_errors(
                            _str(node), ap.child("nodeName"), lambda s: names.name_is_dns_subdomain(s, False)
                        )
                    )
        ports = as_list(ss.get("ports"))
        for j, port in enumerate(ports):
            port = as_dict(port)
            pp = p.child("ports").index(j)
            name = _str(port.get("name"))
            if len(ports) > 1 and not name:
                errs.append(field.required(pp.child("name")))
            elif name:
                errs.extend(fmt_errors(name, pp.child("name"), names.is_dns1123_label))
            num = _int(port.get("port")) or 0
            errs.extend(field.invalid(pp.child("port"), num, m) for m in names.is_valid_port_num(num))
            proto = _str(port.get("protocol"))
            if not proto:
                errs.append(field.required(pp.child("protocol")))
            elif proto not in podspec.PORT_PROTOCOLS:
                errs.append(field.not_supported(pp.child("protocol"), proto, podspec.PORT_PROTOCOLS))
    return errs


# ============================================================================ ConfigMap / Secret


def _validate_immutable_data(new: Obj, old: Obj, keys: tuple[str, ...]) -> ErrorList:
    """Objects marked ``immutable: true`` keep their data and the flag forever."""
    if old.get("immutable") is not True:
        return []
    errs: ErrorList = []
    if new.get("immutable") is not True:
        errs.append(field.forbidden("immutable", "field is immutable when `immutable` is set"))
    for key in keys:
        if new.get(key) != old.get(key):
            errs.append(field.forbidden(key, "field is immutable when `immutable` is set"))
    return errs


class ConfigMapStrategy(UntrackedGenerationStrategy):
    """ConfigMaps: config-key names, 1 MiB total, optional immutability."""

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_config_map(obj)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return _validate_immutable_data(new, old, ("data", "binaryData")) + validate_config_map(new)


def validate_config_map(obj: Obj) -> ErrorList:
    errs: ErrorList = []
    total = 0
    data, binary = as_dict(obj.get("data")), as_dict(obj.get("binaryData"))
    keys = [k for k in data if isinstance(k, str)]
    if len(keys) == len(data) and all_config_map_keys(keys) and not (binary and binary.keys() & data.keys()):
        # the common case of a large map in a few C passes: every key good, no duplicate
        values = [v if isinstance(v, str) else "" for v in data.values()]
        total += sum(map(names.byte_len, values))
    else:
        for key, value in data.items():
            if is_config_map_key(key):  # the path is built only for a bad key
                errs.extend(fmt_errors(key, Path("data").key(key), is_config_map_key))
            if key in binary:
                errs.append(
                    field.invalid(Path("data").key(key), key, "duplicate of key present in binaryData")
                )
            total += names.byte_len(_str(value))
    for key, value in binary.items():
        if is_config_map_key(key):
            errs.extend(fmt_errors(key, Path("binaryData").key(key), is_config_map_key))
        decoded, _ = decode_base64(_str(value))
        total += len(decoded)
    if total > MAX_SECRET_SIZE:
        errs.append(field.too_long("", MAX_SECRET_SIZE))
    return errs


_B64_ALPHABET = {
    c: i for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
}


def decode_base64(s: str) -> tuple[bytes, int | None]:
    """Go's ``base64.StdEncoding.Decode`` as JSON ``[]byte`` uses it: ``(bytes, bad offset)``.

    The offset is what ``illegal base64 data at input byte N`` reports (``None`` if valid);
    ``\\r`` and ``\\n`` are skipped, padding is mandatory.
    """
    data = s.encode("utf-8", "surrogatepass")
    if len(data) % 4 == 0 and b"\n" not in data and b"\r" not in data:
        # The common case in C (a helm release Secret is hundreds of KB): strict binascii accepts
        # exactly what Go accepts for whole quanta without line breaks; whatever it refuses takes
        # the walk below, which finds the offset Go reports.
        try:
            return binascii.a2b_base64(data, strict_mode=True), None
        except binascii.Error:
            pass
    return decode_base64_walk(data)


def decode_base64_walk(data: bytes) -> tuple[bytes, int | None]:
    """:func:`decode_base64` one symbol at a time, as Go's decoder reads: exact, and slow."""
    out = bytearray()
    si, n = 0, len(data)
    while True:
        quantum: list[int] = []
        while len(quantum) < 4:
            if si == n:
                if not quantum:
                    return bytes(out), None
                return bytes(out), si - len(quantum)
            ch = chr(data[si])
            si += 1
            if ch in _B64_ALPHABET and data[si - 1] < 128:
                quantum.append(_B64_ALPHABET[ch])
                continue
            if ch in "\r\n":
                continue
            if ch != "=":
                return bytes(out), si - 1
            # padding: only after two or three symbols
            if len(quantum) < 2:
                return bytes(out), si - 1
            if len(quantum) == 2:
                while si < n and chr(data[si]) in "\r\n":
                    si += 1
                if si == n:
                    return bytes(out), n
                if chr(data[si]) != "=":
                    return bytes(out), si - 1
                si += 1
            while si < n and chr(data[si]) in "\r\n":
                si += 1
            if si < n:
                return bytes(out), si
            break
        val = 0
        for q in quantum:
            val = (val << 6) | q
        val <<= 6 * (4 - len(quantum))
        raw = val.to_bytes(3, "big")
        out += raw[: len(quantum) - 1] if len(quantum) < 4 else raw
        if len(quantum) < 4:
            return bytes(out), None


class SecretStrategy(UntrackedGenerationStrategy):
    """Secrets: ``Opaque`` by default, ``stringData`` folded into ``data``, base64 checked."""

    def default(self, obj: Obj) -> None:
        if not obj.get("type"):
            obj["type"] = "Opaque"
        sd = obj.pop("stringData", None)
        if isinstance(sd, dict) and sd:
            data = obj.get("data")
            if not isinstance(data, dict):
                data = {}
                obj["data"] = data
            for k, v in sd.items():
                data[k] = base64.b64encode(_str(v).encode("utf-8")).decode("ascii")

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_secret(obj)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        errs = validate_immutable(new.get("type"), old.get("type"), Path("type"))
        errs.extend(_validate_immutable_data(new, old, ("data",)))
        errs.extend(validate_secret(new))
        return errs


_SECRET_REQUIRED_KEYS = {
    "kubernetes.io/dockercfg": (".dockercfg",),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/ssh-auth": ("ssh-privatekey",),
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
}


def validate_secret(obj: Obj) -> ErrorList:
    """``ValidateSecret``: keys, base64 values, 1 MiB, per-type required keys."""
    errs: ErrorList = []
    dp = Path("data")
    total = 0
    data = as_dict(obj.get("data"))
    for key, value in data.items():
        if is_config_map_key(key):  # the path is built only for a bad key
            errs.extend(fmt_errors(key, dp.key(key), is_config_map_key))
        decoded, bad = decode_base64(_str(value))
        if bad is not None:
            errs.append(
                field.invalid(
                    dp.key(key), "<secret contents redacted>", f"illegal base64 data at input byte {bad}"
                )
            )
        total += len(decoded)
    if total > MAX_SECRET_SIZE:
        errs.append(field.too_long(dp, MAX_SECRET_SIZE))
    stype = _str(obj.get("type"))
    if stype == "kubernetes.io/service-account-token":
        ann = as_dict(as_dict(obj.get("metadata")).get("annotations"))
        if not ann.get("kubernetes.io/service-account.name"):
            errs.append(
                field.required(Path("metadata", "annotations").key("kubernetes.io/service-account.name"))
            )
    elif stype == "kubernetes.io/basic-auth":
        if "username" not in data and "password" not in data:
            errs.append(field.required(dp.key("username")))
            errs.append(field.required(dp.key("password")))
    else:
        for key in _SECRET_REQUIRED_KEYS.get(stype, ()):
            if key not in data or (stype == "kubernetes.io/ssh-auth" and not data.get(key)):
                errs.append(field.required(dp.key(key)))
    return errs


class ServiceAccountStrategy(UntrackedGenerationStrategy):
    """ServiceAccounts carry nothing beyond metadata that kube validates."""


# ============================================================================ Event (core/v1)

REPORTING_INSTANCE_LIMIT = 128
ACTION_LIMIT = 128
REASON_LIMIT = 128
NOTE_LIMIT = 1024


def legacy_validate_event(
    event: Obj, namespace: str, reporting_field: str = "reportingComponent"
) -> ErrorList:
    """``legacyValidateEvent``: lenient rules every Event must pass, whatever its API group."""
    errs: ErrorList = []
    involved_ns = _str(as_dict(event.get("involvedObject")).get("namespace"))
    ns = namespace or _str(as_dict(event.get("metadata")).get("namespace"))
    ip = Path("involvedObject", "namespace")
    if not event.get("eventTime"):
        if not involved_ns:
            if ns not in ("", "default"):
                errs.append(field.invalid(ip, involved_ns, "does not match event.namespace"))
        elif ns != involved_ns:
            errs.append(field.invalid(ip, involved_ns, "does not match event.namespace"))
    else:
        if not involved_ns and ns not in ("default", "kube-system"):
            errs.append(field.invalid(ip, involved_ns, "does not match event.namespace"))
        rc = _str(event.get("reportingComponent"))
        if not rc:
            errs.append(field.required(reporting_field))
        errs.extend(fmt_errors(rc, Path(reporting_field), names.is_qualified_name))
        for key, limit in (
            ("reportingInstance", REPORTING_INSTANCE_LIMIT),
            ("action", ACTION_LIMIT),
            ("reason", REASON_LIMIT),
        ):
            value = _str(event.get(key))
            if not value:
                errs.append(field.required(key))
            if len(value) > limit:
                errs.append(field.invalid(key, "", f"can have at most {limit} characters"))
        if len(_str(event.get("message"))) > NOTE_LIMIT:
            errs.append(field.invalid("message", "", f"can have at most {NOTE_LIMIT} characters"))
    errs.extend(fmt_errors(ns, Path("namespace"), names.is_dns1123_subdomain))
    return errs


class EventStrategy(UntrackedGenerationStrategy):
    """core/v1 Events: only the legacy rules apply (old clients must keep working)."""

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return legacy_validate_event(obj, ctx.namespace)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return legacy_validate_event(new, ctx.namespace)


# ============================================================================ PersistentVolumeClaim / PersistentVolume


def validate_pvc_spec(spec: Any, path: Path) -> ErrorList:
    """``ValidatePersistentVolumeClaimSpec``."""
    spec = as_dict(spec)
    errs: ErrorList = []
    modes = as_list(spec.get("accessModes"))
    if not modes:
        errs.append(field.required(path.child("accessModes"), "at least 1 access mode is required"))
    if isinstance(spec.get("selector"), dict):
        errs.extend(validate_label_selector(spec["selector"], path.child("selector")))
    rwop = other = False
    for m in modes:
        if m not in ACCESS_MODES:
            errs.append(field.not_supported(path.child("accessModes"), m, ACCESS_MODES))
        if m == "ReadWriteOncePod":
            rwop = True
        elif m in ACCESS_MODES:
            other = True
    if rwop and other:
        errs.append(
            field.forbidden(path.child("accessModes"), "may not use ReadWriteOncePod with other access modes")
        )
    sp = path.child("resources").key("storage")
    requests = as_dict(as_dict(spec.get("resources")).get("requests"))
    if "storage" not in requests:
        errs.append(field.required(sp))
    else:
        q = quantity_or_none(requests["storage"])
        if q is None:
            errs.extend(validate_quantity_value("storage", requests["storage"], sp)[1])
        elif q <= 0:
            errs.append(field.invalid(sp, quantity_text(requests["storage"]), "must be greater than zero"))
    scn = spec.get("storageClassName")
    if isinstance(scn, str) and scn:
        errs.extend(
            fmt_errors(scn, path.child("storageClassName"), lambda s: names.name_is_dns_subdomain(s, False))
        )
    vm = spec.get("volumeMode")
    if vm is not None and vm not in VOLUME_MODES:
        errs.append(field.not_supported(path.child("volumeMode"), vm, VOLUME_MODES))
    return errs


class PersistentVolumeClaimStrategy(UntrackedGenerationStrategy):
    """PVCs: Pending on create; spec immutable except bound-claim growth and one-time binding."""

    has_status = True

    def default(self, obj: Obj) -> None:
        podspec.default_pvc_spec(_spec(obj))
        status = obj.get("status")
        if isinstance(status, dict) and not status.get("phase"):
            status["phase"] = "Pending"
        _canonical_status_lists(obj, "capacity", "allocatedResources")

    def prepare_for_create(self, ctx: StrategyContext, obj: Obj) -> None:
        obj["status"] = {"phase": "Pending"}

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_pvc_spec(obj.get("spec"), Path("spec"))

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_pvc_update(new, old)

    def validate_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        errs: ErrorList = []
        if not as_list(as_dict(new.get("spec")).get("accessModes")):
            errs.append(field.required(Path("Spec", "accessModes")))
        for name, raw in as_dict(as_dict(new.get("status")).get("capacity")).items():
            errs.extend(validate_quantity_value(name, raw, Path("status", "capacity").key(name))[1])
        return errs


def validate_pvc_update(new: Obj, old: Obj) -> ErrorList:
    """``ValidatePersistentVolumeClaimUpdate`` with volume-expansion recovery enabled (GA)."""
    errs = validate_pvc_spec(new.get("spec"), Path("spec"))
    new_spec, old_spec = copy.deepcopy(as_dict(new.get("spec"))), copy.deepcopy(as_dict(old.get("spec")))
    if not old_spec.get("volumeName"):
        if "volumeName" in new_spec:
            old_spec["volumeName"] = new_spec["volumeName"]
        else:
            old_spec.pop("volumeName", None)
    bound = as_dict(new.get("status")).get("phase") == "Bound"
    new_req = as_dict(as_dict(new_spec.get("resources")).get("requests"))
    if bound and new_req:
        old_storage = as_dict(as_dict(old_spec.get("resources")).get("requests")).get("storage")
        if old_storage is None:
            new_req.pop("storage", None)
        else:
            new_req["storage"] = old_storage
    for spec in (new_spec, old_spec):
        spec.pop("volumeAttributesClassName", None)
    if old_spec.get("storageClassName") is None and new_spec.get("storageClassName") is not None:
        old_spec["storageClassName"] = new_spec["storageClassName"]
    if new_spec != old_spec:
        errs.append(
            field.forbidden(
                "spec",
                "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"
                + podspec.spec_diff(old_spec, new_spec, "core.PersistentVolumeClaimSpec"),
            )
        )
    old_size = quantity_or_none(
        as_dict(as_dict(as_dict(old.get("spec")).get("resources")).get("requests")).get("storage")
    )
    new_size = quantity_or_none(
        as_dict(as_dict(as_dict(new.get("spec")).get("resources")).get("requests")).get("storage")
    )
    status_size = quantity_or_none(as_dict(as_dict(old.get("status")).get("capacity")).get("storage"))
    if (
        old_size is not None
        and new_size is not None
        and new_size < old_size
        and new_size <= (status_size or 0)
    ):
        errs.append(
            field.forbidden(
                Path("spec", "resources", "requests", "storage"), "field can not be less than status.capacity"
            )
        )
    errs.extend(
        validate_immutable(
            as_dict(new.get("spec")).get("volumeMode"),
            as_dict(old.get("spec")).get("volumeMode"),
            Path("volumeMode"),
        )
    )
    return errs


class PersistentVolumeStrategy(UntrackedGenerationStrategy):
    """PVs: Retain and Filesystem by default; Pending on create; the source is immutable."""

    has_status = True

    def default(self, obj: Obj) -> None:
        spec = _spec(obj)
        if not spec.get("persistentVolumeReclaimPolicy"):
            spec["persistentVolumeReclaimPolicy"] = "Retain"
        if not spec.get("volumeMode"):
            spec["volumeMode"] = "Filesystem"
        if isinstance(spec.get("capacity"), dict):
            spec["capacity"] = canonical_resource_list(spec["capacity"])
        status = obj.get("status")
        if isinstance(status, dict) and not status.get("phase"):
            status["phase"] = "Pending"

    def prepare_for_create(self, ctx: StrategyContext, obj: Obj) -> None:
        obj["status"] = {"phase": "Pending"}
        if ctx.now:
            obj["status"]["lastPhaseTransitionTime"] = ctx.now

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_pv_spec(as_dict(obj.get("spec")))

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        errs = validate_pv_spec(as_dict(new.get("spec")))
        new_src = {
            k: v for k, v in as_dict(new.get("spec")).items() if k in podspec._VOLUME_SOURCES or k == "local"
        }
        old_src = {
            k: v for k, v in as_dict(old.get("spec")).items() if k in podspec._VOLUME_SOURCES or k == "local"
        }
        if new_src != old_src:
            errs.append(
                field.forbidden(
                    Path("spec", "persistentvolumesource"),
                    "spec.persistentvolumesource is immutable after creation\n"
                    + podspec.spec_diff(old_src, new_src, "core.PersistentVolumeSource"),
                )
            )
        errs.extend(
            validate_immutable(
                as_dict(new.get("spec")).get("volumeMode"),
                as_dict(old.get("spec")).get("volumeMode"),
                Path("volumeMode"),
            )
        )
        return errs

    def prepare_for_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> None:
        super().prepare_for_status_update(ctx, new, old)
        status, old_status = as_dict(new.get("status")), as_dict(old.get("status"))
        if ctx.now and status and status.get("phase") != old_status.get("phase"):
            status["lastPhaseTransitionTime"] = ctx.now


def validate_pv_spec(spec: Obj) -> ErrorList:
    sp = Path("spec")
    errs: ErrorList = []
    if not as_list(spec.get("accessModes")):
        errs.append(field.required(sp.child("accessModes")))
    for m in as_list(spec.get("accessModes")):
        if m not in ACCESS_MODES:
            errs.append(field.not_supported(sp.child("accessModes"), m, ACCESS_MODES))
    rp = spec.get("persistentVolumeReclaimPolicy")
    if rp and rp not in RECLAIM_POLICIES:
        errs.append(field.not_supported(sp.child("persistentVolumeReclaimPolicy"), rp, RECLAIM_POLICIES))
    cap = as_dict(spec.get("capacity"))
    if not cap:
        errs.append(field.required(sp.child("capacity")))
    elif "storage" not in cap or len(cap) > 1:
        errs.append(field.not_supported(sp.child("capacity"), list(cap), ["storage"]))
    for name, raw in cap.items():
        errs.extend(validate_quantity_value(name, raw, sp.child("capacity").key(name))[1])
    sources = [k for k in spec if k in podspec._VOLUME_SOURCES or k == "local"]
    if not sources:
        errs.append(field.required(sp, "must specify a volume type"))
    for k in sources[1:]:
        errs.append(field.forbidden(sp.child(k), "may not specify more than 1 volume type"))
    scn = spec.get("storageClassName")
    if isinstance(scn, str) and scn:
        errs.extend(
            fmt_errors(scn, sp.child("storageClassName"), lambda s: names.name_is_dns_subdomain(s, False))
        )
    vm = spec.get("volumeMode")
    if vm is not None and vm not in VOLUME_MODES:
        errs.append(field.not_supported(sp.child("volumeMode"), vm, VOLUME_MODES))
    return errs


# ============================================================================ LimitRange / ResourceQuota


class LimitRangeStrategy(UntrackedGenerationStrategy):
    """LimitRanges: container defaults derived from max/default/min; relational checks."""

    def default(self, obj: Obj) -> None:
        for item in as_list(as_dict(obj.get("spec")).get("limits")):
            if not isinstance(item, dict):
                continue
            for key in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio"):
                if isinstance(item.get(key), dict):
                    item[key] = canonical_resource_list(item[key])
            if item.get("type") != "Container":
                continue
            default = item.setdefault("default", {})
            default_req = item.setdefault("defaultRequest", {})
            for k, v in as_dict(item.get("max")).items():
                default.setdefault(k, v)
            for k, v in default.items():
                default_req.setdefault(k, v)
            for k, v in as_dict(item.get("min")).items():
                default_req.setdefault(k, v)

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_limit_range(obj)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_limit_range(new)


def validate_limit_range(obj: Obj) -> ErrorList:
    """``ValidateLimitRange`` (type names, resource names, min <= default(Request) <= max)."""
    errs: ErrorList = []
    lp = Path("spec", "limits")
    seen_types: set[str] = set()
    for i, item in enumerate(as_list(as_dict(obj.get("spec")).get("limits"))):
        item = as_dict(item)
        p = lp.index(i)
        ltype = _str(item.get("type"))
        type_errs = fmt_errors(ltype, p.child("type"), names.is_qualified_name)
        if not type_errs and "/" not in ltype and ltype not in LIMIT_TYPES:
            type_errs.append(
                field.invalid(p.child("type"), ltype, "must be a standard limit type or fully qualified")
            )
        errs.extend(type_errs)
        if ltype in seen_types:
            errs.append(field.duplicate(p.child("type"), ltype))
        seen_types.add(ltype)
        values: dict[str, dict[str, Any]] = {}
        kinds = (
            ["max", "min"]
            + (["default", "defaultRequest"] if ltype != "Pod" else [])
            + ["maxLimitRequestRatio"]
        )
        if ltype == "Pod":
            for key in ("default", "defaultRequest"):
                if as_dict(item.get(key)):
                    errs.append(field.forbidden(p.child(key), "may not be specified when `type` is 'Pod'"))
        for kind in kinds:
            for name, raw in as_dict(item.get(kind)).items():
                rp = p.child(kind).key(name)
                if ltype in ("Pod", "Container"):
                    errs.extend(podspec.validate_container_resource_name(name, rp))
                else:
                    errs.extend(podspec.validate_resource_name(name, rp))
                q = quantity_or_none(raw)
                if q is not None:
                    values.setdefault(name, {})[kind] = (q, quantity_text(raw))
        if (
            ltype == "PersistentVolumeClaim"
            and "storage" not in as_dict(item.get("min"))
            and "storage" not in as_dict(item.get("max"))
        ):
            errs.append(
                field.required(
                    p.child("limits"),
                    "either minimum or maximum storage value is required, but neither was provided",
                )
            )
        for name, v in values.items():
            mn, mx, df, dr = v.get("min"), v.get("max"), v.get("default"), v.get("defaultRequest")
            if mn and mx and mn[0] > mx[0]:
                errs.append(
                    field.invalid(
                        p.child("min").key(name),
                        mn[1],
                        f"min value {mn[1]} is greater than max value {mx[1]}",
                    )
                )
            if dr and mn and mn[0] > dr[0]:
                errs.append(
                    field.invalid(
                        p.child("defaultRequest").key(name),
                        dr[1],
                        f"min value {mn[1]} is greater than default request value {dr[1]}",
                    )
                )
            if dr and mx and dr[0] > mx[0]:
                errs.append(
                    field.invalid(
                        p.child("defaultRequest").key(name),
                        dr[1],
                        f"default request value {dr[1]} is greater than max value {mx[1]}",
                    )
                )
            if dr and df and dr[0] > df[0]:
                errs.append(
                    field.invalid(
                        p.child("defaultRequest").key(name),
                        dr[1],
                        f"default request value {dr[1]} is greater than default limit value {df[1]}",
                    )
                )
            if df and mn and mn[0] > df[0]:
                errs.append(
                    field.invalid(
                        p.child("default").key(name),
                        mn[1],
                        f"min value {mn[1]} is greater than default value {df[1]}",
                    )
                )
            if df and mx and df[0] > mx[0]:
                errs.append(
                    field.invalid(
                        p.child("default").key(name),
                        mx[1],
                        f"default value {df[1]} is greater than max value {mx[1]}",
                    )
                )
            ratio = v.get("maxLimitRequestRatio")
            if ratio and ratio[0] < 1:
                errs.append(
                    field.invalid(
                        p.child("maxLimitRequestRatio").key(name),
                        ratio[1],
                        f"ratio {ratio[1]} is less than 1",
                    )
                )
    return errs


def _validate_quota_resources(rl: Any, path: Path) -> ErrorList:
    errs: ErrorList = []
    for name, raw in as_dict(rl).items():
        rp = path.key(name)
        name_errs = fmt_errors(name, rp, names.is_qualified_name)
        if not name_errs and "/" not in name:
            if not podspec.is_standard_resource(name):
                name_errs.append(
                    field.invalid(rp, name, "must be a standard resource type or fully qualified")
                )
            elif name not in _QUOTA_RESOURCES and not name.startswith("requests.hugepages-"):
                name_errs.append(field.invalid(rp, name, "must be a standard resource for quota"))
        errs.extend(name_errs)
        errs.extend(validate_quantity_value(name, raw, rp)[1])
    return errs


class ResourceQuotaStrategy(UntrackedGenerationStrategy):
    """ResourceQuotas: quota resource names and quantities; status is the controller's."""

    has_status = True

    def default(self, obj: Obj) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict) and isinstance(spec.get("hard"), dict):
            spec["hard"] = canonical_resource_list(spec["hard"])
        _canonical_status_lists(obj, "hard", "used")

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_resource_quota_spec(as_dict(obj.get("spec")))

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_resource_quota_spec(as_dict(new.get("spec")))

    def validate_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        status = as_dict(new.get("status"))
        return _validate_quota_resources(
            status.get("hard"), Path("status", "hard")
        ) + _validate_quota_resources(status.get("used"), Path("status", "used"))


def validate_resource_quota_spec(spec: Obj) -> ErrorList:
    errs = _validate_quota_resources(spec.get("hard"), Path("spec", "hard"))
    scopes = as_list(spec.get("scopes"))
    for s in scopes:
        if s not in _QUOTA_SCOPES:
            errs.append(field.invalid(Path("spec", "scopes"), scopes, "unsupported scope"))
    if {"BestEffort", "NotBestEffort"} <= set(scopes) or {"Terminating", "NotTerminating"} <= set(scopes):
        errs.append(field.invalid(Path("spec", "scopes"), scopes, "conflicting scopes"))
    return errs


STRATEGIES: dict[tuple[str, str], Strategy] = {
    ("", "pods"): PodStrategy(),
    ("", "nodes"): NodeStrategy(),
    ("", "namespaces"): NamespaceStrategy(),
    ("", "services"): ServiceStrategy(),
    ("", "endpoints"): EndpointsStrategy(),
    ("", "configmaps"): ConfigMapStrategy(),
    ("", "secrets"): SecretStrategy(),
    ("", "serviceaccounts"): ServiceAccountStrategy(),
    ("", "events"): EventStrategy(),
    ("", "persistentvolumeclaims"): PersistentVolumeClaimStrategy(),
    ("", "persistentvolumes"): PersistentVolumeStrategy(),
    ("", "limitranges"): LimitRangeStrategy(),
    ("", "resourcequotas"): ResourceQuotaStrategy(),
}

__all__ = [
    "FIELD_IMMUTABLE",
    "STRATEGIES",
    "UntrackedGenerationStrategy",
    "ConfigMapStrategy",
    "EndpointsStrategy",
    "EventStrategy",
    "LimitRangeStrategy",
    "NamespaceStrategy",
    "NodeStrategy",
    "PersistentVolumeClaimStrategy",
    "PersistentVolumeStrategy",
    "PodStrategy",
    "ResourceQuotaStrategy",
    "SecretStrategy",
    "ServiceAccountStrategy",
    "ServiceStrategy",
    "decode_base64",
    "is_config_map_key",
    "legacy_validate_event",
]
