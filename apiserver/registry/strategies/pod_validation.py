"""Pod spec validation shared by Pods and pod templates (kube's ``ValidatePodSpec`` and friends).

Every workload strategy validates its template exactly like a Pod; a few checks exist only for
real Pods (``validateContainersOnlyForPod``, selected by :class:`PodValidationOptions`). Errors
are field-error lists with kube's paths and messages. Pure functions over wire-format dicts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from apiserver import field
from apiserver.api.podresources import (
    HUGEPAGES_PREFIX,
    QOS_RESOURCES,
    is_supported_pod_level_resource,
    quantity_or_none,
)
from apiserver.api.types import Obj, as_dict, as_list
from apiserver.api.types import as_int as _int
from apiserver.api.types import as_str as _str
from apiserver.field import ErrorList, Path
from apiserver.quantity import (
    ERR_FORMAT_WRONG,
    format_quantity,
    parse_quantity_full,
    to_milli,
)
from apiserver.selectors import LabelSelector, label_selector_from_dict
from apiserver.validation import names
from apiserver.validation.meta import (
    validate_annotations,
    validate_label_name,
    validate_label_selector,
    validate_labels,
)

MAX_INT32 = 2**31 - 1
RESTART_POLICIES = ["Always", "OnFailure", "Never"]
DNS_POLICIES = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]
PULL_POLICIES = ["Always", "IfNotPresent", "Never"]  # sets.List order
TERMINATION_MESSAGE_POLICIES = ["File", "FallbackToLogsOnError"]
PORT_PROTOCOLS = ["SCTP", "TCP", "UDP"]  # sets.List order
TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
TOLERATION_OPERATORS = ["Equal", "Exists"]
PREEMPTION_POLICIES = ["PreemptLowerPriority", "Never"]
UNSATISFIABLE_ACTIONS = ["DoNotSchedule", "ScheduleAnyway"]
_STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
_STANDARD_RESOURCES = frozenset(
    {
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "storage",
        "requests.storage",
        "services.nodeports",
        "services.loadbalancers",
    }
)
_INTEGER_RESOURCES = frozenset(
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
    }
)
VOLUME_SOURCES = (
    "hostPath",
    "emptyDir",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "persistentVolumeClaim",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "downwardAPI",
    "fc",
    "azureFile",
    "configMap",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "projected",
    "portworxVolume",
    "scaleIO",
    "storageos",
    "csi",
    "ephemeral",
    "image",
)
MODE_SOURCES = ("secret", "configMap", "downwardAPI", "projected")
PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
_ENV_NAME_MSG = (
    "a valid environment variable name must consist only of printable ASCII characters other than '='"
)


def fmt_errors(value: str, path: Path, check: Callable[[str], list[str]]) -> ErrorList:
    """Wrap each message of an ``is_*`` check in an ``Invalid`` error, like kube's loops do."""
    return [field.invalid(path, value, msg) for msg in check(value)]


def label_selector_matches(selector: Any, labels: Any) -> bool:
    """``LabelSelectorAsSelector(sel).Matches(labels)``; nil matches nothing, ``{}`` everything.

    An unconvertible selector matches nothing (validation reports it separately).
    """
    try:
        return label_selector_from_dict(selector).matches(as_dict(labels))
    except (ValueError, TypeError):
        return False


def validate_selector(selector: Any, path: Path) -> ErrorList:
    """``ValidateLabelSelector`` for a possibly-absent selector (non-objects are schema errors)."""
    return validate_label_selector(selector, path) if isinstance(selector, dict) else []


def selector_is_empty(selector: Any) -> bool:
    sel = as_dict(selector)
    return not as_dict(sel.get("matchLabels")) and not as_list(sel.get("matchExpressions"))


def quantity_text(v: Any) -> str:
    """How kube prints a quantity in an error: its canonical ``String()`` when parseable."""
    try:
        p = parse_quantity_full(v)
    except (ValueError, TypeError):
        return v if isinstance(v, str) else str(v)
    return format_quantity(p.value, p.format)


def is_native_resource(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def is_hugepage_resource(name: str) -> bool:
    return name.startswith(HUGEPAGES_PREFIX)


def is_extended_resource(name: str) -> bool:
    if is_native_resource(name) or name.startswith("requests."):
        return False
    return not names.is_qualified_name("requests." + name)


def is_overcommit_allowed(name: str) -> bool:
    return is_native_resource(name) and not is_hugepage_resource(name)


def is_standard_resource(name: str) -> bool:
    return (
        name in _STANDARD_RESOURCES
        or name.startswith(HUGEPAGES_PREFIX)
        or name.startswith("requests.hugepages-")
    )


def is_integer_resource(name: str) -> bool:
    return name in _INTEGER_RESOURCES or is_extended_resource(name)


def validate_resource_name(name: str, path: Path) -> ErrorList:
    """``validateResourceName``: qualified, and standard when unprefixed."""
    errs = fmt_errors(name, path, names.is_qualified_name)
    if errs:
        return errs
    if "/" not in name and not is_standard_resource(name):
        errs.append(field.invalid(path, name, "must be a standard resource type or fully qualified"))
    return errs


#: bounds of the tables of values already found valid (every pod of a workload repeats them)
_VALID_LIMIT = 4096
_VALID_CONTAINER_RESOURCE_NAMES: set[str] = set()
_VALID_QUANTITIES: dict[tuple[str, str], Fraction] = {}


def validate_container_resource_name(name: str, path: Path) -> ErrorList:
    """``validateContainerResourceName``: cpu/memory/ephemeral-storage/hugepages or extended.

    A name found valid once is remembered (errors depend on the name alone); an invalid one is
    checked, and worded, every time.
    """
    if type(name) is str and name in _VALID_CONTAINER_RESOURCE_NAMES:
        return []
    errs = _container_resource_name_errors(name, path)
    if not errs and type(name) is str:
        if len(_VALID_CONTAINER_RESOURCE_NAMES) >= _VALID_LIMIT:
            _VALID_CONTAINER_RESOURCE_NAMES.clear()
        _VALID_CONTAINER_RESOURCE_NAMES.add(name)
    return errs


def _container_resource_name_errors(name: str, path: Path) -> ErrorList:
    errs = validate_resource_name(name, path)
    if "/" not in name:
        if name not in _STANDARD_CONTAINER_RESOURCES and not is_hugepage_resource(name):
            errs.append(field.invalid(path, name, "must be a standard resource for containers"))
    elif not is_native_resource(name) and not is_extended_resource(name):
        errs.append(field.invalid(path, name, "doesn't follow extended resource name standard"))
    return errs


def validate_quantity_value(resource: str, raw: Any, path: Path) -> tuple[Fraction | None, ErrorList]:
    """Parse and check one quantity: parseable, non-negative, integral for integer resources.

    A valid ``(resource, text)`` pair is remembered with its (immutable) value; anything else is
    parsed and checked every time.
    """
    key = (resource, raw) if type(raw) is str and type(resource) is str else None
    if key is not None:
        known = _VALID_QUANTITIES.get(key)
        if known is not None:
            return known, []
    q, errs = _quantity_value(resource, raw, path)
    if key is not None and q is not None and not errs:
        if len(_VALID_QUANTITIES) >= _VALID_LIMIT:
            _VALID_QUANTITIES.clear()
        _VALID_QUANTITIES[key] = q
    return q, errs


def _quantity_value(resource: str, raw: Any, path: Path) -> tuple[Fraction | None, ErrorList]:
    q = quantity_or_none(raw)
    if q is None:
        return None, [field.invalid(path, raw if isinstance(raw, str) else str(raw), ERR_FORMAT_WRONG)]
    errs: ErrorList = []
    if q < 0:
        errs.append(field.invalid(path, quantity_text(raw), "must be greater than or equal to 0"))
    if is_integer_resource(resource) and to_milli(q) % 1000 != 0:
        errs.append(field.invalid(path, quantity_text(raw), "must be an integer"))
    return q, errs


def _hugepage_size(name: str) -> Fraction | None:
    return quantity_or_none(name[len(HUGEPAGES_PREFIX) :])


def validate_resource_requirements(res: Any, claim_names: set[str], path: Path) -> ErrorList:
    """``ValidateResourceRequirements``: names, quantities, requests <= limits, claims."""
    res = as_dict(res)
    errs: ErrorList = []
    lim_path, req_path = path.child("limits"), path.child("requests")
    limits = as_dict(res.get("limits"))
    requests = as_dict(res.get("requests"))
    lim_cpu_mem = req_cpu_mem = lim_huge = req_huge = False
    parsed_limits: dict[str, Fraction] = {}
    for name, raw in limits.items():
        p = lim_path.key(name)
        errs.extend(validate_container_resource_name(name, p))
        q, qerrs = validate_quantity_value(name, raw, p)
        errs.extend(qerrs)
        if q is not None:
            parsed_limits[name] = q
        if is_hugepage_resource(name):
            lim_huge = True
            errs.extend(_validate_hugepage_value(name, raw, q, p))
        if name in QOS_RESOURCES:
            lim_cpu_mem = True
    for name, raw in requests.items():
        p = req_path.key(name)
        errs.extend(validate_container_resource_name(name, p))
        q, qerrs = validate_quantity_value(name, raw, p)
        errs.extend(qerrs)
        if name in limits:
            lq = parsed_limits.get(name)
            if q is not None and lq is not None:
                if q != lq and not is_overcommit_allowed(name):
                    errs.append(
                        field.invalid(
                            req_path,
                            quantity_text(raw),
                            f"must be equal to {name} limit of {quantity_text(limits[name])}",
                        )
                    )
                elif q > lq:
                    errs.append(
                        field.invalid(
                            req_path,
                            quantity_text(raw),
                            f"must be less than or equal to {name} limit of {quantity_text(limits[name])}",
                        )
                    )
        elif not is_overcommit_allowed(name):
            errs.append(field.required(lim_path, "Limit must be set for non overcommitable resources"))
        if is_hugepage_resource(name):
            req_huge = True
            errs.extend(_validate_hugepage_value(name, raw, q, p))
        if name in QOS_RESOURCES:
            req_cpu_mem = True
    if not lim_cpu_mem and not req_cpu_mem and (req_huge or lim_huge):
        errs.append(field.forbidden(path, "HugePages require cpu or memory"))
    errs.extend(_validate_claim_refs(res.get("claims"), claim_names, path.child("claims")))
    return errs


def _validate_hugepage_value(name: str, raw: Any, q: Fraction | None, path: Path) -> ErrorList:
    size = _hugepage_size(name)
    if q is None or size is None or size <= 0:
        return []
    ratio = q / size
    if ratio.denominator != 1 or ratio <= 0:
        return [
            field.invalid(
                path, quantity_text(raw), f"{quantity_text(raw)} is not positive integer multiple of {name}"
            )
        ]
    return []


def _validate_claim_refs(claims: Any, pod_claims: set[str], path: Path) -> ErrorList:
    """``validateResourceClaimNames``: container claims must name an entry of ``spec.resourceClaims``."""
    errs: ErrorList = []
    seen: set[str] = set()
    for i, claim in enumerate(as_list(claims)):
        name = _str(as_dict(claim).get("name"))
        if not name:
            errs.append(field.required(path.index(i)))
            continue
        if name in seen:
            errs.append(field.duplicate(path.index(i), name))
        else:
            seen.add(name)
        if name not in pod_claims:
            detail = "must be one of the names in pod.spec.resourceClaims"
            detail += " which is empty" if not pod_claims else ": " + ", ".join(sorted(pod_claims))
            errs.append(field.FieldError(field.ErrorType.NOT_FOUND, str(path.index(i)), name, detail))
    return errs


def _validate_ports(ports: Any, path: Path) -> ErrorList:
    """``validateContainerPorts``."""
    errs: ErrorList = []
    seen: set[str] = set()
    for i, port in enumerate(as_list(ports)):
        port = as_dict(port)
        p = path.index(i)
        name = _str(port.get("name"))
        if name:
            msgs = names.is_valid_port_name(name)
            if msgs:
                errs.extend(field.invalid(p.child("name"), name, m) for m in msgs)
            elif name in seen:
                errs.append(field.duplicate(p.child("name"), name))
            else:
                seen.add(name)
        cp = _int(port.get("containerPort")) or 0
        if cp == 0:
            errs.append(field.required(p.child("containerPort")))
        else:
            errs.extend(field.invalid(p.child("containerPort"), cp, m) for m in names.is_valid_port_num(cp))
        hp = _int(port.get("hostPort")) or 0
        if hp:
            errs.extend(field.invalid(p.child("hostPort"), hp, m) for m in names.is_valid_port_num(hp))
        proto = _str(port.get("protocol"))
        if not proto:
            errs.append(field.required(p.child("protocol")))
        elif proto not in PORT_PROTOCOLS:
            errs.append(field.not_supported(p.child("protocol"), proto, PORT_PROTOCOLS))
    return errs


def _validate_env(env: Any, path: Path) -> ErrorList:
    """``ValidateEnv`` with the relaxed (GA) variable-name rule."""
    errs: ErrorList = []
    for i, ev in enumerate(as_list(env)):
        ev = as_dict(ev)
        p = path.index(i)
        name = _str(ev.get("name"))
        if not name:
            errs.append(field.required(p.child("name")))
        elif any(not (32 <= ord(ch) <= 126) or ch == "=" for ch in name):
            errs.append(field.invalid(p.child("name"), name, _ENV_NAME_MSG))
        vf = ev.get("valueFrom")
        if isinstance(vf, dict):
            n = sum(
                1
                for k in ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef", "fileKeyRef")
                if vf.get(k)
            )
            vp = p.child("valueFrom")
            if n == 0:
                errs.append(
                    field.invalid(
                        vp,
                        "",
                        "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
                    )
                )
            elif ev.get("value"):
                errs.append(field.invalid(vp, "", "may not be specified when `value` is not empty"))
            elif n > 1:
                errs.append(field.invalid(vp, "", "may not have more than one field specified at a time"))
    return errs


def _validate_volume_mounts(mounts: Any, volumes: dict[str, Obj], path: Path) -> ErrorList:
    errs: ErrorList = []
    seen: set[str] = set()
    for i, m in enumerate(as_list(mounts)):
        m = as_dict(m)
        p = path.index(i)
        name = _str(m.get("name"))
        if not name:
            errs.append(field.required(p.child("name")))
        if name not in volumes:
            errs.append(field.not_found(p.child("name"), name))
        mp = _str(m.get("mountPath"))
        if not mp:
            errs.append(field.required(p.child("mountPath")))
        if mp in seen:
            errs.append(field.invalid(p.child("mountPath"), mp, "must be unique"))
        seen.add(mp)
    return errs


def _validate_handler(handler: Obj, grace: int | None, path: Path) -> ErrorList:
    errs: ErrorList = []
    count = 0
    for key in ("exec", "httpGet", "tcpSocket", "grpc", "sleep"):
        h = handler.get(key)
        if h is None:
            continue
        if count:
            errs.append(field.forbidden(path.child(key), "may not specify more than 1 handler type"))
            continue
        count += 1
        h = as_dict(h)
        hp = path.child(key)
        if key == "exec" and not as_list(h.get("command")):
            errs.append(field.required(hp.child("command")))
        elif key == "httpGet":
            if not h.get("path"):
                errs.append(field.required(hp.child("path")))
            errs.extend(validate_port_num_or_name(h.get("port"), hp.child("port")))
            if h.get("scheme") not in ("HTTP", "HTTPS"):
                errs.append(field.not_supported(hp.child("scheme"), h.get("scheme") or "", ["HTTP", "HTTPS"]))
        elif key == "tcpSocket" or key == "grpc":
            errs.extend(validate_port_num_or_name(h.get("port"), hp.child("port")))
        elif key == "sleep":
            secs = _int(h.get("seconds")) or 0
            if grace is not None and (secs <= 0 or secs > grace):
                errs.append(
                    field.invalid(
                        hp.child("seconds"),
                        secs,
                        f"must be greater than 0 and less than terminationGracePeriodSeconds ({grace})",
                    )
                )
    if count == 0:
        errs.append(field.required(path, "must specify a handler type"))
    return errs


def validate_port_num_or_name(port: Any, path: Path) -> ErrorList:
    """``ValidatePortNumOrName`` for an IntOrString port (absent = 0)."""
    if port is None:
        port = 0
    if isinstance(port, int) and not isinstance(port, bool):
        return [field.invalid(path, port, m) for m in names.is_valid_port_num(port)]
    if isinstance(port, str):
        return [field.invalid(path, port, m) for m in names.is_valid_port_name(port)]
    return [field.internal(path, f"unknown type: {type(port).__name__}")]


def _validate_probe(probe: Any, grace: int | None, path: Path, must_be_one: bool) -> ErrorList:
    if not isinstance(probe, dict):
        return []
    errs = _validate_handler(probe, grace, path)
    for key in (
        "initialDelaySeconds",
        "timeoutSeconds",
        "periodSeconds",
        "successThreshold",
        "failureThreshold",
    ):
        v = _int(probe.get(key))
        if v is not None and v < 0:
            errs.append(field.invalid(path.child(key), v, "must be greater than or equal to 0"))
    st = _int(probe.get("successThreshold"))
    if must_be_one and st is not None and st != 1:
        errs.append(field.invalid(path.child("successThreshold"), st, "must be 1"))
    tgps = _int(probe.get("terminationGracePeriodSeconds"))
    if tgps is not None and tgps <= 0:
        errs.append(
            field.invalid(path.child("terminationGracePeriodSeconds"), tgps, "must be greater than 0")
        )
    return errs


def _validate_container_common(
    c: Obj, volumes: dict[str, Obj], claim_names: set[str], path: Path
) -> ErrorList:
    """``validateContainerCommon``: what every container kind must satisfy."""
    errs: ErrorList = []
    name = _str(c.get("name"))
    if not name:
        errs.append(field.required(path.child("name")))
    else:
        errs.extend(fmt_errors(name, path.child("name"), names.is_dns1123_label))
    if not _str(c.get("image")):
        errs.append(field.required(path.child("image")))
    tmp = _str(c.get("terminationMessagePolicy"))
    if not tmp:
        errs.append(field.required(path.child("terminationMessagePolicy")))
    elif tmp not in TERMINATION_MESSAGE_POLICIES:
        errs.append(
            field.not_supported(path.child("terminationMessagePolicy"), tmp, TERMINATION_MESSAGE_POLICIES)
        )
    errs.extend(_validate_ports(c.get("ports"), path.child("ports")))
    errs.extend(_validate_env(c.get("env"), path.child("env")))
    errs.extend(_validate_volume_mounts(c.get("volumeMounts"), volumes, path.child("volumeMounts")))
    ipp = _str(c.get("imagePullPolicy"))
    if not ipp:
        errs.append(field.required(path.child("imagePullPolicy")))
    elif ipp not in PULL_POLICIES:
        errs.append(field.not_supported(path.child("imagePullPolicy"), ipp, PULL_POLICIES))
    errs.extend(validate_resource_requirements(c.get("resources"), claim_names, path.child("resources")))
    return errs


def _validate_containers(spec: Obj, volumes: dict[str, Obj], claims: set[str], path: Path) -> ErrorList:
    """``validateContainers``: at least one, unique names, lifecycle/probes, no restartPolicy."""
    containers = as_list(spec.get("containers"))
    if not containers:
        return [field.required(path)]
    grace = _int(spec.get("terminationGracePeriodSeconds"))
    errs: ErrorList = []
    seen: set[str] = set()
    for i, c in enumerate(containers):
        c = as_dict(c)
        p = path.index(i)
        errs.extend(_validate_container_common(c, volumes, claims, p))
        name = _str(c.get("name"))
        if name in seen:
            errs.append(field.duplicate(p.child("name"), name))
        else:
            seen.add(name)
        if isinstance(c.get("lifecycle"), dict):
            lc = c["lifecycle"]
            for hook in ("postStart", "preStop"):
                if isinstance(lc.get(hook), dict):
                    errs.extend(_validate_handler(lc[hook], grace, p.child("lifecycle", hook)))
        for key in PROBES:
            errs.extend(_validate_probe(c.get(key), grace, p.child(key), key != "readinessProbe"))
        if c.get("restartPolicy") is not None:
            errs.append(field.forbidden(p.child("restartPolicy"), "may not be set for non-init containers"))
    errs.extend(_host_port_conflicts(containers, path))
    return errs


def _validate_init_containers(spec: Obj, volumes: dict[str, Obj], claims: set[str], path: Path) -> ErrorList:
    """``validateInitContainers``: sidecars may carry probes and lifecycle, plain ones may not."""
    errs: ErrorList = []
    grace = _int(spec.get("terminationGracePeriodSeconds"))
    seen = {_str(as_dict(c).get("name")) for c in as_list(spec.get("containers"))}
    for i, c in enumerate(as_list(spec.get("initContainers"))):
        c = as_dict(c)
        p = path.index(i)
        errs.extend(_validate_container_common(c, volumes, claims, p))
        rp = c.get("restartPolicy")
        if rp is not None and rp != "Always":
            errs.append(field.not_supported(p.child("restartPolicy"), rp, ["Always"]))
        name = _str(c.get("name"))
        if name in seen:
            errs.append(field.duplicate(p.child("name"), name))
        elif name:
            seen.add(name)
        errs.extend(_host_port_conflicts([c], path))
        if rp == "Always":
            if isinstance(c.get("lifecycle"), dict):
                for hook in ("postStart", "preStop"):
                    if isinstance(c["lifecycle"].get(hook), dict):
                        errs.extend(
                            _validate_handler(c["lifecycle"][hook], grace, p.child("lifecycle", hook))
                        )
            for key in PROBES:
                errs.extend(_validate_probe(c.get(key), grace, p.child(key), key != "readinessProbe"))
        else:
            for key in ("lifecycle", *PROBES):
                if c.get(key) is not None:
                    errs.append(
                        field.forbidden(
                            p.child(key), "may not be set for init containers without restartPolicy=Always"
                        )
                    )
    return errs


def _host_port_conflicts(containers: list[Any], path: Path) -> ErrorList:
    """``AccumulateUniqueHostPorts``: protocol/hostIP/hostPort must not repeat."""
    errs: ErrorList = []
    seen: set[str] = set()
    for ci, c in enumerate(containers):
        for pi, port in enumerate(as_list(as_dict(c).get("ports"))):
            port = as_dict(port)
            hp = _int(port.get("hostPort")) or 0
            if not hp:
                continue
            key = f"{port.get('protocol') or ''}/{port.get('hostIP') or ''}/{hp}"
            if key in seen:
                errs.append(field.duplicate(path.index(ci).child("ports").index(pi).child("hostPort"), key))
            seen.add(key)
    return errs


def _validate_volumes(spec: Obj, path: Path) -> tuple[dict[str, Obj], ErrorList]:
    """``ValidateVolumes``: unique DNS-label names and exactly one source each."""
    vols: dict[str, Obj] = {}
    errs: ErrorList = []
    for i, v in enumerate(as_list(spec.get("volumes"))):
        v = as_dict(v)
        p = path.index(i)
        el: ErrorList = []
        found = 0
        for key in VOLUME_SOURCES:
            if v.get(key) is None:
                continue
            if found:
                el.append(field.forbidden(p.child(key), "may not specify more than 1 volume type"))
            else:
                found += 1
                el.extend(_validate_volume_source(key, as_dict(v[key]), p.child(key)))
        if not found:
            el.append(field.required(p, "must specify a volume type"))
        name = _str(v.get("name"))
        if not name:
            el.append(field.required(p.child("name")))
        else:
            el.extend(fmt_errors(name, p.child("name"), names.is_dns1123_label))
        if name in vols:
            el.append(field.duplicate(p.child("name"), name))
        if el:
            errs.extend(el)
        else:
            vols[name] = v
    return vols, errs


def _validate_volume_source(kind: str, src: Obj, path: Path) -> ErrorList:
    errs: ErrorList = []
    if kind == "persistentVolumeClaim" and not _str(src.get("claimName")):
        errs.append(field.required(path.child("claimName")))
    elif kind == "configMap" and not _str(src.get("name")):
        errs.append(field.required(path.child("name")))
    elif kind == "secret" and not _str(src.get("secretName")):
        errs.append(field.required(path.child("secretName")))
    elif kind == "hostPath" and not _str(src.get("path")):
        errs.append(field.required(path.child("path")))
    if kind in MODE_SOURCES:
        mode = _int(src.get("defaultMode"))
        if mode is not None and not 0 <= mode <= 0o777:
            errs.append(
                field.invalid(
                    path.child("defaultMode"),
                    mode,
                    "must be a number between 0 and 0777 (octal), both inclusive",
                )
            )
    return errs


def validate_tolerations(tolerations: Any, path: Path) -> ErrorList:
    """``ValidateTolerations``: key/operator/value/effect rules, in kube's order and paths."""
    errs: ErrorList = []
    for i, t in enumerate(as_list(tolerations)):
        t = as_dict(t)
        p = path.index(i)
        key, op, value, effect = (
            _str(t.get("key")),
            _str(t.get("operator")),
            _str(t.get("value")),
            _str(t.get("effect")),
        )
        if key:
            errs.extend(validate_label_name(key, p.child("key")))
        if not key and op != "Exists":
            errs.append(
                field.invalid(
                    p.child("operator"),
                    op,
                    'operator must be Exists when `key` is empty, which means "match all values and all keys"',
                )
            )
        if t.get("tolerationSeconds") is not None and effect != "NoExecute":
            errs.append(
                field.invalid(
                    p.child("effect"), effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"
                )
            )
        if op in ("Equal", ""):
            msgs = names.is_valid_label_value(value)
            if msgs:
                errs.append(field.invalid(p.child("operator"), value, ";".join(msgs)))
        elif op == "Exists":
            if value:
                errs.append(
                    field.invalid(p.child("operator"), t, "value must be empty when `operator` is 'Exists'")
                )
        else:
            errs.append(field.not_supported(p.child("operator"), op, TOLERATION_OPERATORS))
        if effect:
            errs.extend(validate_taint_effect(effect, True, p.child("effect")))
    return errs


def validate_taint_effect(effect: str, allow_empty: bool, path: Path) -> ErrorList:
    if not allow_empty and not effect:
        return [field.required(path)]
    if effect not in TAINT_EFFECTS:
        return [field.not_supported(path, effect, TAINT_EFFECTS)]
    return []


def _validate_node_selector_term(term: Obj, path: Path) -> ErrorList:
    errs: ErrorList = []
    for j, req in enumerate(as_list(term.get("matchExpressions"))):
        req = as_dict(req)
        p = path.child("matchExpressions").index(j)
        op, values = req.get("operator"), as_list(req.get("values"))
        if op in ("In", "NotIn"):
            if not values:
                errs.append(
                    field.required(p.child("values"), "must be specified when `operator` is 'In' or 'NotIn'")
                )
        elif op in ("Exists", "DoesNotExist"):
            if values:
                errs.append(
                    field.forbidden(
                        p.child("values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    )
                )
        elif op in ("Gt", "Lt"):
            if len(values) != 1:
                errs.append(
                    field.required(
                        p.child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"
                    )
                )
        else:
            errs.append(
                field.invalid(
                    p.child("operator"), op if op is not None else "", "not a valid selector operator"
                )
            )
        errs.extend(validate_label_name(_str(req.get("key")), p.child("key")))
    for j, req in enumerate(as_list(term.get("matchFields"))):
        req = as_dict(req)
        p = path.child("matchFields").index(j)
        op, values = req.get("operator"), as_list(req.get("values"))
        if op in ("In", "NotIn"):
            if len(values) != 1:
                errs.append(
                    field.required(
                        p.child("values"),
                        "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                    )
                )
        else:
            errs.append(
                field.invalid(
                    p.child("operator"), op if op is not None else "", "not a valid selector operator"
                )
            )
        if req.get("key") != "metadata.name":
            errs.append(field.invalid(p.child("key"), req.get("key") or "", "not a valid field selector key"))
        else:
            for k, v in enumerate(values):
                errs.extend(
                    fmt_errors(
                        _str(v), p.child("values").index(k), lambda s: names.name_is_dns_subdomain(s, False)
                    )
                )
    return errs


def _validate_pod_affinity_term(term: Obj, path: Path) -> ErrorList:
    errs = validate_selector(term.get("labelSelector"), path.child("labelSelector"))
    errs.extend(validate_selector(term.get("namespaceSelector"), path.child("namespaceSelector")))
    for ns in as_list(term.get("namespaces")):
        errs.extend(fmt_errors(_str(ns), path.child("namespace"), names.is_dns1123_label))
    if not _str(term.get("topologyKey")):
        errs.append(field.required(path.child("topologyKey"), "can not be empty"))
    errs.extend(validate_label_name(_str(term.get("topologyKey")), path.child("topologyKey")))
    return errs


def validate_affinity(affinity: Any, path: Path) -> ErrorList:
    """``validateAffinity``: node selector terms, weights 1-100, pod affinity terms."""
    aff = as_dict(affinity)
    errs: ErrorList = []
    na = as_dict(aff.get("nodeAffinity"))
    if na:
        np = path.child("nodeAffinity")
        req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
        if isinstance(req, dict):
            rp = np.child("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
            terms = as_list(req.get("nodeSelectorTerms"))
            if not terms:
                errs.append(field.required(rp, "must have at least one node selector term"))
            for i, term in enumerate(terms):
                errs.extend(_validate_node_selector_term(as_dict(term), rp.index(i)))
        for i, pref in enumerate(as_list(na.get("preferredDuringSchedulingIgnoredDuringExecution"))):
            pref = as_dict(pref)
            pp = np.child("preferredDuringSchedulingIgnoredDuringExecution").index(i)
            w = _int(pref.get("weight")) or 0
            if w <= 0 or w > 100:
                errs.append(field.invalid(pp.child("weight"), w, "must be in the range 1-100"))
            errs.extend(_validate_node_selector_term(as_dict(pref.get("preference")), pp.child("preference")))
    for kind in ("podAffinity", "podAntiAffinity"):
        pa = as_dict(aff.get(kind))
        if not pa:
            continue
        kp = path.child(kind)
        for i, term in enumerate(as_list(pa.get("requiredDuringSchedulingIgnoredDuringExecution"))):
            errs.extend(
                _validate_pod_affinity_term(
                    as_dict(term), kp.child("requiredDuringSchedulingIgnoredDuringExecution").index(i)
                )
            )
        for i, wt in enumerate(as_list(pa.get("preferredDuringSchedulingIgnoredDuringExecution"))):
            wt = as_dict(wt)
            wp = kp.child("preferredDuringSchedulingIgnoredDuringExecution").index(i)
            w = _int(wt.get("weight")) or 0
            if w <= 0 or w > 100:
                errs.append(field.invalid(wp.child("weight"), w, "must be in the range 1-100"))
            errs.extend(
                _validate_pod_affinity_term(as_dict(wt.get("podAffinityTerm")), wp.child("podAffinityTerm"))
            )
    return errs


def _validate_topology_spread(constraints: Any, path: Path) -> ErrorList:
    errs: ErrorList = []
    seen: set[tuple[str, str]] = set()
    for i, c in enumerate(as_list(constraints)):
        c = as_dict(c)
        p = path.index(i)
        skew = _int(c.get("maxSkew")) or 0
        if skew <= 0:
            errs.append(field.invalid(p.child("maxSkew"), skew, "must be greater than zero"))
        key = _str(c.get("topologyKey"))
        if not key:
            errs.append(field.required(p.child("topologyKey"), "can not be empty"))
        else:
            errs.extend(validate_label_name(key, p.child("topologyKey")))
        action = _str(c.get("whenUnsatisfiable"))
        if action not in UNSATISFIABLE_ACTIONS:
            errs.append(field.not_supported(p.child("whenUnsatisfiable"), action, UNSATISFIABLE_ACTIONS))
        if (key, action) in seen:
            errs.append(field.duplicate(p, f"{{{key}, {action}}}"))
        seen.add((key, action))
        errs.extend(validate_selector(c.get("labelSelector"), p.child("labelSelector")))
        md = c.get("minDomains")
        if md is not None:
            mdi = _int(md) or 0
            if mdi <= 0:
                errs.append(field.invalid(p.child("minDomains"), mdi, "must be greater than 0"))
            elif action != "DoNotSchedule":
                errs.append(
                    field.invalid(
                        p.child("minDomains"),
                        mdi,
                        "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
                    )
                )
    return errs


def validate_scheduling_group(sg: Any, path: Path) -> ErrorList:
    """``spec.schedulingGroup``: a one-member union; ``podGroupName`` is a DNS subdomain."""
    if sg is None:
        return []
    sg = as_dict(sg)
    name = sg.get("podGroupName")
    if not isinstance(name, str) or not name:
        return [field.required(path.child("podGroupName"))]
    return fmt_errors(name, path.child("podGroupName"), names.is_dns1123_subdomain)


def validate_pod_resource_claims(claims: Any, path: Path) -> tuple[set[str], ErrorList]:
    """``validatePodResourceClaims``: DNS-label names, exactly one of claim name / template name."""
    errs: ErrorList = []
    seen: set[str] = set()
    for i, claim in enumerate(as_list(claims)):
        claim = as_dict(claim)
        p = path.index(i)
        name = _str(claim.get("name"))
        if not name:
            errs.append(field.required(p.child("name")))
        elif name in seen:
            errs.append(field.duplicate(p.child("name"), name))
        else:
            errs.extend(fmt_errors(name, p.child("name"), names.is_dns1123_label))
            seen.add(name)
        rcn, rctn = claim.get("resourceClaimName"), claim.get("resourceClaimTemplateName")
        if rcn is not None and rctn is not None:
            errs.append(
                field.invalid(
                    p,
                    claim,
                    "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified",
                )
            )
        if rcn is None and rctn is None:
            errs.append(
                field.invalid(
                    p, claim, "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"
                )
            )
        for key, value in (("resourceClaimName", rcn), ("resourceClaimTemplateName", rctn)):
            if value is not None:
                errs.extend(
                    fmt_errors(_str(value), p.child(key), lambda s: names.name_is_dns_subdomain(s, False))
                )
    return seen, errs


def _validate_scheduling_gates(gates: Any, path: Path) -> ErrorList:
    errs: ErrorList = []
    seen: set[str] = set()
    for i, g in enumerate(as_list(gates)):
        name = _str(as_dict(g).get("name"))
        errs.extend(fmt_errors(name, path.index(i), names.is_qualified_name))
        if name in seen:
            errs.append(field.duplicate(path.index(i), name))
        seen.add(name)
    return errs


@dataclass(frozen=True)
class PodValidationOptions:
    """The subset of kube's ``PodValidationOptions`` that changes outcomes here."""

    resource_is_pod: bool = False


def validate_pod_spec(
    spec: Any, path: Path, opts: PodValidationOptions = PodValidationOptions()
) -> ErrorList:
    """``ValidatePodSpec``: the checks shared by Pods and pod templates, in kube's order."""
    spec = as_dict(spec)
    errs: ErrorList = []
    if spec.get("terminationGracePeriodSeconds") is None:
        errs.append(field.required(path.child("terminationGracePeriodSeconds")))
    vols, verrs = _validate_volumes(spec, path.child("volumes"))
    errs.extend(verrs)
    claim_names, cerrs = validate_pod_resource_claims(
        spec.get("resourceClaims"), path.child("resourceClaims")
    )
    errs.extend(cerrs)
    errs.extend(_validate_containers(spec, vols, claim_names, path.child("containers")))
    errs.extend(_validate_init_containers(spec, vols, claim_names, path.child("initContainers")))
    if spec.get("hostNetwork"):
        for i, c in enumerate(as_list(spec.get("containers"))):
            for j, port in enumerate(as_list(as_dict(c).get("ports"))):
                port = as_dict(port)
                hp, cp = _int(port.get("hostPort")) or 0, _int(port.get("containerPort")) or 0
                if (opts.resource_is_pod or hp != 0) and hp != cp:
                    errs.append(
                        field.invalid(
                            path.child("containers").index(i).child("ports").index(j).child("hostPort"),
                            hp,
                            "must match `containerPort` when `hostNetwork` is true",
                        )
                    )
    rp = _str(spec.get("restartPolicy"))
    if not rp:
        errs.append(field.required(path.child("restartPolicy")))
    elif rp not in RESTART_POLICIES:
        errs.append(field.not_supported(path.child("restartPolicy"), rp, RESTART_POLICIES))
    dp = _str(spec.get("dnsPolicy"))
    if not dp:
        errs.append(field.required(path.child("dnsPolicy")))
    elif dp not in DNS_POLICIES:
        errs.append(field.not_supported(path.child("dnsPolicy"), dp, DNS_POLICIES))
    errs.extend(validate_labels(spec.get("nodeSelector"), path.child("nodeSelector")))
    errs.extend(validate_affinity(spec.get("affinity"), path.child("affinity")))
    if dp == "None":
        dns = spec.get("dnsConfig")
        if not isinstance(dns, dict):
            errs.append(
                field.required(path.child("dnsConfig"), "must provide `dnsConfig` when `dnsPolicy` is None")
            )
        elif not as_list(dns.get("nameservers")):
            errs.append(
                field.required(
                    path.child("dnsConfig", "nameservers"),
                    "must provide at least one DNS nameserver when `dnsPolicy` is None",
                )
            )
    for i, g in enumerate(as_list(spec.get("readinessGates"))):
        ct = _str(as_dict(g).get("conditionType"))
        errs.extend(
            fmt_errors(
                ct, path.child("readinessGates").index(i).child("conditionType"), names.is_qualified_name
            )
        )
    errs.extend(_validate_scheduling_gates(spec.get("schedulingGates"), path.child("schedulingGates")))
    errs.extend(
        _validate_topology_spread(
            spec.get("topologySpreadConstraints"), path.child("topologySpreadConstraints")
        )
    )
    for key in ("serviceAccountName", "nodeName"):
        value = _str(spec.get(key))
        if value:
            errs.extend(fmt_errors(value, path.child(key), lambda s: names.name_is_dns_subdomain(s, False)))
    ads = spec.get("activeDeadlineSeconds")
    if ads is not None:
        v = _int(ads)
        if v is None or v < 1 or v > MAX_INT32:
            errs.append(
                field.invalid(
                    path.child("activeDeadlineSeconds"), ads, names.inclusive_range_error(1, MAX_INT32)
                )
            )
    for key in ("hostname", "subdomain"):
        value = _str(spec.get(key))
        if value:
            errs.extend(fmt_errors(value, path.child(key), names.is_dns1123_label))
    errs.extend(validate_tolerations(spec.get("tolerations"), path.child("tolerations")))
    pcn = _str(spec.get("priorityClassName"))
    if pcn:
        errs.extend(
            fmt_errors(pcn, path.child("priorityClassName"), lambda s: names.name_is_dns_subdomain(s, False))
        )
    pp = spec.get("preemptionPolicy")
    if pp is not None:
        if pp == "":
            errs.append(field.required(path.child("preemptionPolicy")))
        elif pp not in PREEMPTION_POLICIES:
            errs.append(field.not_supported(path.child("preemptionPolicy"), pp, PREEMPTION_POLICIES))
    if spec.get("overhead") is not None:
        errs.extend(
            validate_resource_requirements(
                {"limits": spec.get("overhead")}, claim_names, path.child("overhead")
            )
        )
    if spec.get("resources") is not None:
        errs.extend(_validate_pod_level_resources(spec.get("resources"), path.child("resources")))
    errs.extend(validate_scheduling_group(spec.get("schedulingGroup"), path.child("schedulingGroup")))
    return errs


def _validate_pod_level_resources(res: Any, path: Path) -> ErrorList:
    """Pod-level ``spec.resources``: only cpu, memory and hugepages; requests <= limits."""
    errs: ErrorList = []
    res = as_dict(res)
    for kind in ("limits", "requests"):
        for name in as_dict(res.get(kind)):
            if not is_supported_pod_level_resource(name):
                errs.append(
                    field.not_supported(path.child(kind).key(name), name, ["cpu", "memory", "hugepages-"])
                )
    errs.extend(validate_resource_requirements(res, set(), path))
    return errs


def validate_pod_template_spec(template: Any, path: Path) -> ErrorList:
    """``ValidatePodTemplateSpec``: template labels plus the full pod spec."""
    template = as_dict(template)
    md = as_dict(template.get("metadata"))
    errs = validate_labels(md.get("labels"), path.child("labels"))
    errs.extend(validate_annotations(md.get("annotations"), path.child("annotations")))
    errs.extend(validate_pod_spec(template.get("spec"), path.child("spec")))
    if as_list(as_dict(template.get("spec")).get("ephemeralContainers")):
        errs.append(
            field.forbidden(
                path.child("spec", "ephemeralContainers"), "ephemeral containers not allowed in pod template"
            )
        )
    return errs


def convert_selector(selector: Any) -> LabelSelector | None:
    """``metav1.LabelSelectorAsSelector``: nil -> Nothing, ``{}`` -> Everything, None on error."""
    if selector is not None and not isinstance(selector, dict):
        return None
    try:
        return label_selector_from_dict(selector)
    except (ValueError, TypeError):
        return None


def template_labels_errors(sel: LabelSelector, template: Any, path: Path) -> ErrorList:
    """The controller rule that the selector must match the template labels.

    A nil selector converts to ``labels.Nothing()``, which is not "empty" and matches nothing,
    so a missing selector also reports the mismatch, as kube does.
    """
    labels = as_dict(as_dict(template).get("metadata")).get("labels")
    if sel.empty or sel.matches(as_dict(labels)):
        return []
    return [
        field.invalid(path.child("metadata", "labels"), labels, "`selector` does not match template `labels`")
    ]


def controller_template_spec_errors(template: Any, path: Path, kind: str) -> ErrorList:
    """Workload pods restart ``Always`` and have no ``activeDeadlineSeconds``."""
    spec = as_dict(as_dict(template).get("spec"))
    errs: ErrorList = []
    rp = spec.get("restartPolicy") or ""
    if rp != "Always":
        errs.append(field.not_supported(path.child("spec", "restartPolicy"), rp, ["Always"]))
    if spec.get("activeDeadlineSeconds") is not None:
        errs.append(
            field.forbidden(
                path.child("spec", "activeDeadlineSeconds"),
                f"activeDeadlineSeconds in {kind} is not Supported",
            )
        )
    return errs
