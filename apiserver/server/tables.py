"""Server-side printing: ``meta.k8s.io/v1`` Tables for ``kubectl get`` (kubectl.md §3, §4).

kubectl asks for ``Accept: application/json;as=Table;v=v1;g=meta.k8s.io`` and prints the columns
the server chose; a plain list would print only ``NAME AGE`` for every type. So the columns and
the cell logic here follow kube's ``pkg/printers/internalversion`` printers: same column names,
types and priorities, same placeholders (``<none>``, ``<unset>``, ``<unknown>``), same pod STATUS
and RESTARTS algorithm, same ``HumanDuration`` ages. Like kube-apiserver, every printer always
produces the wide cells; kubectl hides ``priority >= 1`` columns unless ``-o wide``.

The scheduling.k8s.io kinds have no upstream printer in 1.37; their columns follow the last row
of decisions.md (PodGroup POLICY / MIN-COUNT / SCHEDULED, Workload CONTROLLER / TEMPLATES).

Everything here is pure: ``now`` is passed in, objects are read and never mutated.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs

from apiserver.api.table import (
    AGE,
    CREATION_TIMESTAMP_DESCRIPTION,
    NAME,
    NAME_DESCRIPTION,
    Cell,
    CellsFn,
    Column,
    Printer,
    aware,
    human_ns,
    parse_time,
    since,
    timedelta_ns,
)
from apiserver.api.types import Obj
from apiserver.errors import bad_request
from apiserver.server.negotiation import TABLE_GROUP

INCLUDE_METADATA = "Metadata"
INCLUDE_OBJECT = "Object"
INCLUDE_NONE = "None"
_INCLUDE_VALUES = (INCLUDE_METADATA, INCLUDE_OBJECT, INCLUDE_NONE)

# --------------------------------------------------------------------------------------------
# small formatting helpers shared by the printers


def _m(obj: Any, *path: str) -> Any:
    """Walk nested dicts; None as soon as a step is missing or not a dict."""
    cur = obj
    for p in path:
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(p)
    return cur


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def _int(value: Any, default: int = 0) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return default
    return default


def _name(obj: Obj) -> str:
    return _str(_m(obj, "metadata", "name"))


def _age(obj: Obj, now: datetime) -> str:
    return since(_m(obj, "metadata", "creationTimestamp"), now)


def _deleting(obj: Obj) -> bool:
    return bool(_m(obj, "metadata", "deletionTimestamp"))


def format_labels(labels: Any) -> str:
    """``labels.FormatLabels``: sorted ``k=v`` pairs, ``<none>`` when empty."""
    d = _dict(labels)
    if not d:
        return "<none>"
    return ",".join(f"{k}={_str(d[k])}" for k in sorted(d))


def label_selector_string(selector: Any) -> str:
    """``LabelSelectorAsSelector(sel).String()``: requirements sorted by key, ``""`` when empty."""
    sel = _dict(selector)
    reqs: list[tuple[str, str]] = []
    for k, v in _dict(sel.get("matchLabels")).items():
        reqs.append((k, f"{k}={_str(v)}"))
    for expr in _list(sel.get("matchExpressions")):
        key = _str(_m(expr, "key"))
        op = _str(_m(expr, "operator"))
        values = sorted(_str(v) for v in _list(_m(expr, "values")))
        if op == "In":
            reqs.append((key, f"{key} in ({','.join(values)})"))
        elif op == "NotIn":
            reqs.append((key, f"{key} notin ({','.join(values)})"))
        elif op == "Exists":
            reqs.append((key, key))
        elif op == "DoesNotExist":
            reqs.append((key, f"!{key}"))
    reqs.sort(key=lambda r: r[0])
    return ",".join(r[1] for r in reqs)


def format_label_selector(selector: Any) -> str:
    """``metav1.FormatLabelSelector``: the selector string, ``<none>`` when it selects everything."""
    return label_selector_string(selector) or "<none>"


def _containers_cells(pod_spec: Any) -> tuple[str, str]:
    """``layoutContainerCells``: container names and images, comma separated."""
    cs = _list(_m(pod_spec, "containers"))
    return ",".join(_str(_m(c, "name")) for c in cs), ",".join(_str(_m(c, "image")) for c in cs)


_ACCESS_MODES = (
    ("ReadWriteOnce", "RWO"),
    ("ReadOnlyMany", "ROX"),
    ("ReadWriteMany", "RWX"),
    ("ReadWriteOncePod", "RWOP"),
)


def access_modes_string(modes: Any) -> str:
    """``GetAccessModesAsString``: abbreviations in kube's fixed order, duplicates dropped."""
    present = set(_list(modes))
    return ",".join(short for full, short in _ACCESS_MODES if full in present)


def _quantity(value: Any) -> str:
    """A stored quantity as printed; ``0`` for a missing one (a zero ``resource.Quantity``)."""
    if value is None or value == "":
        return "0"
    return _str(value)


def _storage_class(obj: Obj) -> str:
    """``GetPersistentVolume(Claim)Class``: the beta annotation wins over ``spec.storageClassName``."""
    ann = _dict(_m(obj, "metadata", "annotations"))
    if "volume.beta.kubernetes.io/storage-class" in ann:
        return _str(ann["volume.beta.kubernetes.io/storage-class"])
    return _str(_m(obj, "spec", "storageClassName"))


def _condition(obj: Obj, cond_type: str) -> dict[str, Any] | None:
    for c in _list(_m(obj, "status", "conditions")):
        if isinstance(c, dict) and c.get("type") == cond_type:
            return c
    return None


# --------------------------------------------------------------------------------------------
# columns and printers


CONTAINERS = Column("Containers", priority=1, description="Names of each container in the template.")
IMAGES = Column("Images", priority=1, description="Images referenced by each container in the template.")


def _wide(name: str, description: str, type_: str = "string") -> Column:
    return Column(name, type=type_, description=description, priority=1)


def _default_cells(obj: Obj, now: datetime) -> list[Cell]:
    return [_name(obj), _age(obj, now)]


#: NAME AGE, what a resource without its own printer gets (the CRD-style default).
DEFAULT_PRINTER = Printer((NAME, AGE), _default_cells)


def _created_at_cells(obj: Obj, now: datetime) -> list[Cell]:
    t = parse_time(_m(obj, "metadata", "creationTimestamp"))
    return [_name(obj), t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if t else None]


#: kube-apiserver's own default convertor for a built-in kind without a printer (limitranges).
CREATED_AT_PRINTER = Printer(
    (NAME, Column("Created At", type="date", description=CREATION_TIMESTAMP_DESCRIPTION)), _created_at_cells
)


# ---- pods


def _restartable_init(container: Any) -> bool:
    return _m(container, "restartPolicy") == "Always"


def _later(a: datetime | None, b: datetime | None) -> datetime | None:
    if b is None:
        return a
    return b if a is None or a < b else a


def _terminated_at(cs: Any) -> datetime | None:
    return parse_time(_m(cs, "lastState", "terminated", "finishedAt"))


def _pod_condition_true(pod: Obj, cond_type: str) -> bool:
    c = _condition(pod, cond_type)
    return c is not None and c.get("status") == "True"


def pod_status_summary(pod: Obj) -> tuple[str, int, int, int, datetime | None]:
    """kubectl's pod STATUS, ready and total container counts, restarts and the last restart time.

    Mirrors ``printPod``: the phase (or ``status.reason``), ``SchedulingGated``, the first
    unfinished init container (``Init:1/2``, ``Init:CrashLoopBackOff``, ``Init:ExitCode:1``), then
    the regular containers scanned from the last one (waiting reason, terminated reason,
    ``ExitCode:N``/``Signal:N``), ``Completed`` turned back into ``Running``/``NotReady`` while a
    container still runs, and ``Terminating``/``Unknown`` once deletion started.
    """
    spec = _dict(pod.get("spec"))
    status = _dict(pod.get("status"))
    init_specs = {_str(_m(c, "name")): c for c in _list(spec.get("initContainers"))}
    init_statuses = _list(status.get("initContainerStatuses"))
    n_init = len(_list(spec.get("initContainers")))

    total = len(_list(spec.get("containers"))) + sum(
        1 for c in _list(spec.get("initContainers")) if _restartable_init(c)
    )
    ready = 0
    restarts = 0
    sidecar_restarts = 0
    last_restart: datetime | None = None
    last_sidecar_restart: datetime | None = None

    phase = _str(status.get("phase"))
    reason = _str(status.get("reason")) or phase
    for c in _list(status.get("conditions")):
        if _m(c, "type") == "PodScheduled" and _m(c, "reason") == "SchedulingGated":
            reason = "SchedulingGated"

    initializing = False
    for i, cs in enumerate(init_statuses):
        restarts += _int(_m(cs, "restartCount"))
        last_restart = _later(last_restart, _terminated_at(cs))
        sidecar = _restartable_init(init_specs.get(_str(_m(cs, "name"))))
        if sidecar:
            sidecar_restarts += _int(_m(cs, "restartCount"))
            last_sidecar_restart = _later(last_sidecar_restart, _terminated_at(cs))
        terminated = _m(cs, "state", "terminated")
        waiting = _m(cs, "state", "waiting")
        if isinstance(terminated, dict) and _int(terminated.get("exitCode")) == 0:
            continue
        if sidecar and _m(cs, "started") is True:
            if _m(cs, "ready") is True:
                ready += 1
            continue
        if isinstance(terminated, dict):
            t_reason = _str(terminated.get("reason"))
            if t_reason:
                reason = "Init:" + t_reason
            elif _int(terminated.get("signal")) != 0:
                reason = f"Init:Signal:{_int(terminated.get('signal'))}"
            else:
                reason = f"Init:ExitCode:{_int(terminated.get('exitCode'))}"
        elif (
            isinstance(waiting, dict)
            and _str(waiting.get("reason"))
            and waiting.get("reason") != "PodInitializing"
        ):
            reason = "Init:" + _str(waiting.get("reason"))
        else:
            reason = f"Init:{i}/{n_init}"
        initializing = True
        break

    if not initializing or _pod_condition_true(pod, "Initialized"):
        restarts = sidecar_restarts
        last_restart = last_sidecar_restart
        has_running = False
        for cs in reversed(_list(status.get("containerStatuses"))):
            restarts += _int(_m(cs, "restartCount"))
            last_restart = _later(last_restart, _terminated_at(cs))
            waiting = _m(cs, "state", "waiting")
            terminated = _m(cs, "state", "terminated")
            if isinstance(waiting, dict) and _str(waiting.get("reason")):
                reason = _str(waiting.get("reason"))
            elif isinstance(terminated, dict) and _str(terminated.get("reason")):
                reason = _str(terminated.get("reason"))
            elif isinstance(terminated, dict):
                if _int(terminated.get("signal")) != 0:
                    reason = f"Signal:{_int(terminated.get('signal'))}"
                else:
                    reason = f"ExitCode:{_int(terminated.get('exitCode'))}"
            elif _m(cs, "ready") is True and isinstance(_m(cs, "state", "running"), dict):
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            reason = "Running" if _pod_condition_true(pod, "Ready") else "NotReady"

    if _deleting(pod) and status.get("reason") == "NodeLost":
        reason = "Unknown"
    elif _deleting(pod) and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"
    return reason, ready, total, restarts, last_restart


def _pod_cells(pod: Obj, now: datetime) -> list[Cell]:
    reason, ready, total, restarts, last_restart = pod_status_summary(pod)
    restarts_cell = str(restarts)
    if restarts != 0 and last_restart is not None:
        restarts_cell = f"{restarts} ({human_ns(timedelta_ns(aware(now) - last_restart))} ago)"
    spec = _dict(pod.get("spec"))
    status = _dict(pod.get("status"))
    pod_ips = _list(status.get("podIPs"))
    pod_ip = _str(_m(pod_ips[0], "ip")) if pod_ips else _str(status.get("podIP"))
    gates = _list(spec.get("readinessGates"))
    gates_cell = "<none>"
    if gates:
        true_count = sum(1 for g in gates if _pod_condition_true(pod, _str(_m(g, "conditionType"))))
        gates_cell = f"{true_count}/{len(gates)}"
    return [
        _name(pod),
        f"{ready}/{total}",
        reason,
        restarts_cell,
        _age(pod, now),
        pod_ip or "<none>",
        _str(spec.get("nodeName")) or "<none>",
        _str(status.get("nominatedNodeName")) or "<none>",
        gates_cell,
    ]


def _pod_conditions(pod: Obj) -> list[dict[str, str]]:
    """Row conditions kube attaches to finished pods (``Completed`` rows)."""
    phase = _m(pod, "status", "phase")
    if phase == "Succeeded":
        return [
            {
                "type": "Completed",
                "status": "True",
                "reason": "Succeeded",
                "message": "The pod has completed successfully.",
            }
        ]
    if phase == "Failed":
        return [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]
    return []


POD_PRINTER = Printer(
    (
        NAME,
        Column("Ready", description="The aggregate readiness state of this pod for accepting traffic."),
        Column("Status", description="The aggregate status of the containers in this pod."),
        Column(
            "Restarts",
            description="The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
        ),
        AGE,
        _wide("IP", "IP address allocated to the pod."),
        _wide("Node", "The node the pod is bound to."),
        _wide("Nominated Node", "The node the scheduler nominated for the pod while preempting."),
        _wide("Readiness Gates", "Readiness gates that are True out of those the pod declares."),
    ),
    _pod_cells,
    _pod_conditions,
)


# ---- nodes


def node_roles(node: Obj) -> list[str]:
    """``findNodeRoles``: ``node-role.kubernetes.io/<role>`` keys and ``kubernetes.io/role`` values."""
    roles: set[str] = set()
    for k, v in _dict(_m(node, "metadata", "labels")).items():
        if k.startswith("node-role.kubernetes.io/"):
            role = k[len("node-role.kubernetes.io/") :]
            if role:
                roles.add(role)
        elif k == "kubernetes.io/role" and v:
            roles.add(_str(v))
    return sorted(roles)


def _node_address(node: Obj, addr_type: str) -> str:
    for a in _list(_m(node, "status", "addresses")):
        if _m(a, "type") == addr_type:
            return _str(_m(a, "address"))
    return "<none>"


def _node_cells(node: Obj, now: datetime) -> list[Cell]:
    ready = _condition(node, "Ready")
    states: list[str] = []
    if ready is not None:
        states.append("Ready" if ready.get("status") == "True" else "NotReady")
    else:
        states.append("Unknown")
    if _m(node, "spec", "unschedulable") is True:
        states.append("SchedulingDisabled")
    info = _dict(_m(node, "status", "nodeInfo"))
    return [
        _name(node),
        ",".join(states),
        ",".join(node_roles(node)) or "<none>",
        _age(node, now),
        _str(info.get("kubeletVersion")),
        _node_address(node, "InternalIP"),
        _node_address(node, "ExternalIP"),
        _str(info.get("osImage")) or "<unknown>",
        _str(info.get("kernelVersion")) or "<unknown>",
        _str(info.get("containerRuntimeVersion")) or "<unknown>",
    ]


NODE_PRINTER = Printer(
    (
        NAME,
        Column("Status", description="The status of the node"),
        Column("Roles", description="The roles of the node"),
        AGE,
        Column("Version", description="Kubelet version reported by the node."),
        _wide("Internal-IP", "The node's first InternalIP address."),
        _wide("External-IP", "The node's first ExternalIP address."),
        _wide("OS-Image", "OS image reported by the node."),
        _wide("Kernel-Version", "Kernel version reported by the node."),
        _wide("Container-Runtime", "Container runtime version reported by the node."),
    ),
    _node_cells,
)


# ---- core/v1 namespaced odds and ends

NAMESPACE_PRINTER = Printer(
    (NAME, Column("Status", description="The status of the namespace"), AGE),
    lambda o, now: [_name(o), _str(_m(o, "status", "phase")), _age(o, now)],
)

CONFIGMAP_PRINTER = Printer(
    (NAME, Column("Data", description="Number of entries in data and binaryData."), AGE),
    lambda o, now: [_name(o), len(_dict(o.get("data"))) + len(_dict(o.get("binaryData"))), _age(o, now)],
)

SECRET_PRINTER = Printer(
    (
        NAME,
        Column("Type", description="Used to facilitate programmatic handling of secret data."),
        Column("Data", description="Number of entries in data."),
        AGE,
    ),
    lambda o, now: [_name(o), _str(o.get("type")), len(_dict(o.get("data"))), _age(o, now)],
)

SERVICEACCOUNT_PRINTER = Printer(
    (NAME, Column("Secrets", description="Number of secrets listed by the service account."), AGE),
    lambda o, now: [_name(o), len(_list(o.get("secrets"))), _age(o, now)],
)


def _lb_ingress(svc: Obj, wide: bool) -> str:
    """``loadBalancerStatusStringer``: sorted unique IPs/hostnames, clipped to 16 chars unless wide."""
    found: set[str] = set()
    for ing in _list(_m(svc, "status", "loadBalancer", "ingress")):
        ip, host = _str(_m(ing, "ip")), _str(_m(ing, "hostname"))
        if ip:
            found.add(ip)
        elif host:
            found.add(host)
    text = ",".join(sorted(found))
    if not wide and len(text) > 16:
        text = text[:13] + "..."
    return text


def service_external_ip(svc: Obj, wide: bool = True) -> str:
    spec = _dict(svc.get("spec"))
    svc_type = _str(spec.get("type")) or "ClusterIP"
    external = [_str(x) for x in _list(spec.get("externalIPs"))]
    if svc_type in ("ClusterIP", "NodePort"):
        return ",".join(external) if external else "<none>"
    if svc_type == "LoadBalancer":
        lb = _lb_ingress(svc, wide)
        if external:
            return ",".join([*(lb.split(",") if lb else []), *external])
        return lb or "<pending>"
    if svc_type == "ExternalName":
        return _str(spec.get("externalName"))
    return "<unknown>"


def service_ports(svc: Obj) -> str:
    """``makePortString``: ``80/TCP`` or ``80:30080/TCP`` per port."""
    pieces = []
    for p in _list(_m(svc, "spec", "ports")):
        proto = _str(_m(p, "protocol")) or "TCP"
        node_port = _int(_m(p, "nodePort"))
        port = _int(_m(p, "port"))
        pieces.append(f"{port}:{node_port}/{proto}" if node_port > 0 else f"{port}/{proto}")
    return ",".join(pieces)


def _service_cells(svc: Obj, now: datetime) -> list[Cell]:
    spec = _dict(svc.get("spec"))
    cluster_ips = _list(spec.get("clusterIPs"))
    cluster_ip = _str(cluster_ips[0]) if cluster_ips else _str(spec.get("clusterIP"))
    # Server-side printing is always wide, so the EXTERNAL-IP is never clipped here.
    return [
        _name(svc),
        _str(spec.get("type")) or "ClusterIP",
        cluster_ip or "<none>",
        service_external_ip(svc, wide=True),
        service_ports(svc) or "<none>",
        _age(svc, now),
        format_labels(spec.get("selector")),
    ]


SERVICE_PRINTER = Printer(
    (
        NAME,
        Column("Type", description="How the service is exposed."),
        Column("Cluster-IP", description="The IP address of the service inside the cluster."),
        Column("External-IP", description="External IPs or load-balancer ingress of the service."),
        Column("Port(s)", description="The ports exposed by the service."),
        AGE,
        _wide("Selector", "Pod labels the service routes traffic to."),
    ),
    _service_cells,
)


def _join_host_port(host: str, port: int) -> str:
    try:
        is_v6 = isinstance(ipaddress.ip_address(host), ipaddress.IPv6Address)
    except ValueError:
        is_v6 = ":" in host
    return f"[{host}]:{port}" if is_v6 else f"{host}:{port}"


def format_endpoints(ep: Obj) -> str:
    """``formatEndpoints``: up to three ``ip:port`` entries then ``+ N more...``; ``<none>`` if no subsets."""
    subsets = _list(ep.get("subsets"))
    if not subsets:
        return "<none>"
    shown: list[str] = []
    limit, count, more = 3, 0, False
    for ss in subsets:
        addresses = _list(_m(ss, "addresses"))
        ports = _list(_m(ss, "ports"))
        if not ports:
            count += len(addresses)
            for a in addresses:
                if len(shown) == limit:
                    more = True
                    break
                shown.append(_str(_m(a, "ip")))
            continue
        for p in ports:
            count += len(addresses)
            for a in addresses:
                if len(shown) == limit:
                    more = True
                    break
                shown.append(_join_host_port(_str(_m(a, "ip")), _int(_m(p, "port"))))
    text = ",".join(shown)
    return f"{text} + {count - limit} more..." if more else text


ENDPOINTS_PRINTER = Printer(
    (NAME, Column("Endpoints", description="Addresses and ports of the endpoints."), AGE),
    lambda o, now: [_name(o), format_endpoints(o), _age(o, now)],
)


# ---- events (core/v1 and events.k8s.io/v1 share storage but not field names)


def _is_events_v1_shape(ev: Obj) -> bool:
    """events.k8s.io/v1 spells the core fields differently (``regarding``, ``note``, ``deprecated*``)."""
    if "involvedObject" in ev:
        return False
    return any(
        k in ev
        for k in ("regarding", "note", "deprecatedSource", "deprecatedFirstTimestamp", "deprecatedCount")
    )


def _event_view(ev: Obj) -> dict[str, Any]:
    """The fields the event printer reads, from either API shape of the shared event storage."""
    if _is_events_v1_shape(ev):
        regarding = _dict(ev.get("regarding"))
        source = _dict(ev.get("deprecatedSource"))
        return {
            "kind": _str(regarding.get("kind")),
            "name": _str(regarding.get("name")),
            "fieldPath": _str(regarding.get("fieldPath")),
            "message": _str(ev.get("note")),
            "first": ev.get("deprecatedFirstTimestamp"),
            "last": ev.get("deprecatedLastTimestamp"),
            "count": _int(ev.get("deprecatedCount")),
            "component": _str(source.get("component")),
            "host": _str(source.get("host")),
            "controller": _str(ev.get("reportingController")),
            "instance": _str(ev.get("reportingInstance")),
        }
    involved = _dict(ev.get("involvedObject"))
    source = _dict(ev.get("source"))
    return {
        "kind": _str(involved.get("kind")),
        "name": _str(involved.get("name")),
        "fieldPath": _str(involved.get("fieldPath")),
        "message": _str(ev.get("message")),
        "first": ev.get("firstTimestamp"),
        "last": ev.get("lastTimestamp"),
        "count": _int(ev.get("count")),
        "component": _str(source.get("component")),
        "host": _str(source.get("host")),
        "controller": _str(ev.get("reportingComponent")),
        "instance": _str(ev.get("reportingInstance")),
    }


def _event_cells(ev: Obj, now: datetime) -> list[Cell]:
    """``printEvent`` (wide): LAST SEEN falls back to FIRST SEEN, then to eventTime; series win."""
    v = _event_view(ev)
    first = since(v["first"], now) if parse_time(v["first"]) else since(ev.get("eventTime"), now)
    last = since(v["last"], now) if parse_time(v["last"]) else first
    count = v["count"]
    series = ev.get("series")
    if isinstance(series, dict):
        last = since(series.get("lastObservedTime"), now)
        count = _int(series.get("count"))
    elif count == 0:
        count = 1  # singleton events carry no count in the new API
    kind = v["kind"].lower()
    target = f"{kind}/{v['name']}" if v["name"] else kind
    component = v["component"] or v["controller"]
    instance = v["host"] or v["instance"]
    source = f"{component}, {instance}" if instance else component
    return [
        last,
        _str(ev.get("type")),
        _str(ev.get("reason")),
        target,
        v["fieldPath"],
        source,
        v["message"].strip(),
        first,
        count,
        _name(ev),
    ]


_EVENT_COLUMNS = (
    Column(
        "Last Seen", description="The time at which the most recent occurrence of this event was recorded."
    ),
    Column("Type", description="Type of this event (Normal, Warning)."),
    Column(
        "Reason", description="Short, machine understandable string that gives the reason for the transition."
    ),
    Column("Object", description="The object that this event is about."),
    _wide("Subobject", "The field path of the sub-object, such as a container, this event is about."),
    _wide("Source", "The component (and host) reporting this event."),
    Column("Message", description="A human-readable description of the status of this operation."),
    _wide("First Seen", "The time at which the event was first recorded."),
    _wide("Count", "The number of times this event has occurred."),
    Column("Name", format="name", priority=1, description=NAME_DESCRIPTION),
)
EVENT_PRINTER = Printer(_EVENT_COLUMNS, _event_cells)


# ---- storage


def _pvc_cells(pvc: Obj, now: datetime) -> list[Cell]:
    spec = _dict(pvc.get("spec"))
    phase = "Terminating" if _deleting(pvc) else _str(_m(pvc, "status", "phase"))
    capacity = access = ""
    if _str(spec.get("volumeName")):
        access = access_modes_string(_m(pvc, "status", "accessModes"))
        capacity = _quantity(_m(pvc, "status", "capacity", "storage"))
    return [
        _name(pvc),
        phase,
        _str(spec.get("volumeName")),
        capacity,
        access,
        _storage_class(pvc),
        _str(spec.get("volumeAttributesClassName")) or "<unset>",
        _age(pvc, now),
        _str(spec.get("volumeMode")) or "<unset>",
    ]


PVC_PRINTER = Printer(
    (
        NAME,
        Column("Status", description="The phase of the claim."),
        Column("Volume", description="The name of the bound PersistentVolume."),
        Column("Capacity", description="The actual capacity of the bound volume."),
        Column("Access Modes", description="The access modes the bound volume has."),
        Column("StorageClass", description="StorageClass of the pvc"),
        Column("VolumeAttributesClass", description="VolumeAttributesClass of the pvc"),
        AGE,
        _wide("VolumeMode", "Whether the volume is a filesystem or a raw block device."),
    ),
    _pvc_cells,
)


def _pv_cells(pv: Obj, now: datetime) -> list[Cell]:
    spec = _dict(pv.get("spec"))
    claim = _dict(spec.get("claimRef"))
    claim_cell = (
        f"{_str(claim.get('namespace'))}/{_str(claim.get('name'))}"
        if spec.get("claimRef") is not None
        else ""
    )
    phase = "Terminating" if _deleting(pv) else _str(_m(pv, "status", "phase"))
    return [
        _name(pv),
        _quantity(_m(spec, "capacity", "storage")),
        access_modes_string(spec.get("accessModes")),
        _str(spec.get("persistentVolumeReclaimPolicy")),
        phase,
        claim_cell,
        _storage_class(pv),
        _str(spec.get("volumeAttributesClassName")) or "<unset>",
        _str(_m(pv, "status", "reason")),
        _age(pv, now),
        _str(spec.get("volumeMode")) or "<unset>",
    ]


PV_PRINTER = Printer(
    (
        NAME,
        Column("Capacity", description="The storage capacity of the volume."),
        Column("Access Modes", description="The ways the volume can be mounted."),
        Column("Reclaim Policy", description="What happens to the volume when released from its claim."),
        Column("Status", description="The phase of the volume."),
        Column("Claim", description="The claim bound to the volume."),
        Column("StorageClass", description="StorageClass of the pv"),
        Column("VolumeAttributesClass", description="VolumeAttributesClass of the pv"),
        Column("Reason", description="Why the volume is in its phase."),
        AGE,
        _wide("VolumeMode", "Whether the volume is a filesystem or a raw block device."),
    ),
    _pv_cells,
)


def _quota_cells(rq: Obj, now: datetime) -> list[Cell]:
    hard = _dict(_m(rq, "status", "hard"))
    used = _dict(_m(rq, "status", "used"))
    requests: list[str] = []
    limits: list[str] = []
    for res in sorted(hard):
        parts = res.split(".")
        target = limits if len(parts) > 1 and parts[0] == "limits" else requests
        target.append(f"{res}: {_quantity(used.get(res))}/{_quantity(hard[res])}")
    return [_name(rq), ", ".join(requests), ", ".join(limits), _age(rq, now)]


RESOURCEQUOTA_PRINTER = Printer(
    (
        NAME,
        Column(
            "Request",
            description="Request represents a minimum amount of cpu/memory that a container may consume.",
        ),
        Column(
            "Limit",
            description="Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.",
        ),
        AGE,
    ),
    _quota_cells,
)


# ---- apps


def _replicas(obj: Obj) -> int:
    """``spec.replicas`` with the API default of 1 when unset."""
    value = _m(obj, "spec", "replicas")
    return 1 if value is None else _int(value)


def _statefulset_cells(sts: Obj, now: datetime) -> list[Cell]:
    names, images = _containers_cells(_m(sts, "spec", "template", "spec"))
    return [
        _name(sts),
        f"{_int(_m(sts, 'status', 'readyReplicas'))}/{_replicas(sts)}",
        _age(sts, now),
        names,
        images,
    ]


STATEFULSET_PRINTER = Printer(
    (NAME, Column("Ready", description="Number of the pod with ready state"), AGE, CONTAINERS, IMAGES),
    _statefulset_cells,
)


def _deployment_cells(d: Obj, now: datetime) -> list[Cell]:
    names, images = _containers_cells(_m(d, "spec", "template", "spec"))
    return [
        _name(d),
        f"{_int(_m(d, 'status', 'readyReplicas'))}/{_replicas(d)}",
        _int(_m(d, "status", "updatedReplicas")),
        _int(_m(d, "status", "availableReplicas")),
        _age(d, now),
        names,
        images,
        label_selector_string(_m(d, "spec", "selector")),
    ]


DEPLOYMENT_PRINTER = Printer(
    (
        NAME,
        Column("Ready", description="Number of the pod with ready state"),
        Column(
            "Up-to-date",
            description="Total number of non-terminated pods targeted by this deployment that have the desired template spec.",
        ),
        Column(
            "Available",
            description="Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.",
        ),
        AGE,
        CONTAINERS,
        IMAGES,
        _wide("Selector", "Label query over pods that should match the replica count."),
    ),
    _deployment_cells,
)


def _replicaset_cells(rs: Obj, now: datetime) -> list[Cell]:
    names, images = _containers_cells(_m(rs, "spec", "template", "spec"))
    return [
        _name(rs),
        _replicas(rs),
        _int(_m(rs, "status", "replicas")),
        _int(_m(rs, "status", "readyReplicas")),
        _age(rs, now),
        names,
        images,
        format_label_selector(_m(rs, "spec", "selector")),
    ]


REPLICASET_PRINTER = Printer(
    (
        NAME,
        Column("Desired", type="integer", description="Number of desired pods."),
        Column("Current", type="integer", description="The most recently observed number of replicas."),
        Column("Ready", type="integer", description="The number of ready replicas."),
        AGE,
        CONTAINERS,
        IMAGES,
        _wide("Selector", "Label query over pods that should match the replica count."),
    ),
    _replicaset_cells,
)


def _daemonset_cells(ds: Obj, now: datetime) -> list[Cell]:
    names, images = _containers_cells(_m(ds, "spec", "template", "spec"))
    st = _dict(ds.get("status"))
    return [
        _name(ds),
        _int(st.get("desiredNumberScheduled")),
        _int(st.get("currentNumberScheduled")),
        _int(st.get("numberReady")),
        _int(st.get("updatedNumberScheduled")),
        _int(st.get("numberAvailable")),
        format_labels(_m(ds, "spec", "template", "spec", "nodeSelector")),
        _age(ds, now),
        names,
        images,
        format_label_selector(_m(ds, "spec", "selector")),
    ]


DAEMONSET_PRINTER = Printer(
    (
        NAME,
        Column(
            "Desired",
            type="integer",
            description="The total number of nodes that should be running the daemon pod.",
        ),
        Column(
            "Current",
            type="integer",
            description="The number of nodes running at least one daemon pod that should.",
        ),
        Column("Ready", type="integer", description="The number of nodes whose daemon pod is ready."),
        Column(
            "Up-to-date", type="integer", description="The number of nodes running the updated daemon pod."
        ),
        Column("Available", type="integer", description="The number of nodes whose daemon pod is available."),
        Column("Node Selector", description="Node labels the daemon pods are restricted to."),
        AGE,
        CONTAINERS,
        IMAGES,
        _wide("Selector", "Label query over pods that are managed by the daemon set."),
    ),
    _daemonset_cells,
)


def _controller_of(obj: Obj) -> dict[str, Any] | None:
    for ref in _list(_m(obj, "metadata", "ownerReferences")):
        if isinstance(ref, dict) and ref.get("controller") is True:
            return ref
    return None


def _controllerrevision_cells(cr: Obj, now: datetime) -> list[Cell]:
    ref = _controller_of(cr)
    controller = "<none>"
    if ref is not None:
        group = _str(ref.get("apiVersion")).rpartition("/")[0]
        kind = _str(ref.get("kind"))
        group_kind = f"{kind}.{group}" if group else kind
        controller = f"{group_kind.lower()}/{_str(ref.get('name'))}" if kind else _str(ref.get("name"))
    return [_name(cr), controller, _int(cr.get("revision")), _age(cr, now)]


CONTROLLERREVISION_PRINTER = Printer(
    (
        NAME,
        Column("Controller", description="Controller of the object"),
        Column("Revision", description="Revision indicates the revision of the state represented by Data."),
        AGE,
    ),
    _controllerrevision_cells,
)


# ---- batch


def _job_condition_true(job: Obj, cond_type: str) -> bool:
    c = _condition(job, cond_type)
    return c is not None and c.get("status") == "True"


def job_status(job: Obj) -> str:
    """``printJob`` STATUS: Complete, Failed, Terminating, Suspended, FailureTarget or Running."""
    if _job_condition_true(job, "Complete"):
        return "Complete"
    if _job_condition_true(job, "Failed"):
        return "Failed"
    if _deleting(job):
        return "Terminating"
    if _job_condition_true(job, "Suspended"):
        return "Suspended"
    if _job_condition_true(job, "FailureTarget"):
        return "FailureTarget"
    return "Running"


def _job_cells(job: Obj, now: datetime) -> list[Cell]:
    spec = _dict(job.get("spec"))
    succeeded = _int(_m(job, "status", "succeeded"))
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{_int(spec.get('completions'))}"
    elif _int(spec.get("parallelism")) > 1:
        completions = f"{succeeded}/1 of {_int(spec.get('parallelism'))}"
    else:
        completions = f"{succeeded}/1"
    start = parse_time(_m(job, "status", "startTime"))
    done = parse_time(_m(job, "status", "completionTime"))
    duration = ""
    if start is not None:
        duration = human_ns(timedelta_ns((done or aware(now)) - start))
    names, images = _containers_cells(_m(job, "spec", "template", "spec"))
    return [
        _name(job),
        job_status(job),
        completions,
        duration,
        _age(job, now),
        names,
        images,
        format_label_selector(spec.get("selector")),
    ]


JOB_PRINTER = Printer(
    (
        NAME,
        Column("Status", description="Status of the job."),
        Column("Completions", description="The number of pods which reached phase Succeeded."),
        Column("Duration", description="Time required to complete the job."),
        AGE,
        CONTAINERS,
        IMAGES,
        _wide("Selector", "A label query over pods that should match the pod count."),
    ),
    _job_cells,
)


def _cronjob_cells(cj: Obj, now: datetime) -> list[Cell]:
    spec = _dict(cj.get("spec"))
    last = _m(cj, "status", "lastScheduleTime")
    suspend = spec.get("suspend")
    names, images = _containers_cells(_m(spec, "jobTemplate", "spec", "template", "spec"))
    return [
        _name(cj),
        _str(spec.get("schedule")),
        _str(spec.get("timeZone")) or "<none>",
        "<unset>" if suspend is None else ("True" if suspend is True else "False"),
        len(_list(_m(cj, "status", "active"))),
        since(last, now) if last else "<none>",
        _age(cj, now),
        names,
        images,
        format_label_selector(_m(spec, "jobTemplate", "spec", "selector")),
    ]


CRONJOB_PRINTER = Printer(
    (
        NAME,
        Column("Schedule", description="The schedule in Cron format."),
        Column("Timezone", description="The time zone name for the given schedule."),
        Column("Suspend", type="boolean", description="Whether subsequent executions are suspended."),
        Column("Active", type="integer", description="Number of currently running jobs."),
        Column("Last Schedule", description="When the job was last successfully scheduled."),
        AGE,
        CONTAINERS,
        IMAGES,
        _wide("Selector", "A label query over pods that should match the pod count."),
    ),
    _cronjob_cells,
)


# ---- coordination, policy, scheduling

LEASE_PRINTER = Printer(
    (NAME, Column("Holder", description="The identity of the current lease holder."), AGE),
    lambda o, now: [_name(o), _str(_m(o, "spec", "holderIdentity")), _age(o, now)],
)


def _pdb_cells(pdb: Obj, now: datetime) -> list[Cell]:
    spec = _dict(pdb.get("spec"))
    min_available = _str(spec["minAvailable"]) if spec.get("minAvailable") is not None else "N/A"
    max_unavailable = _str(spec["maxUnavailable"]) if spec.get("maxUnavailable") is not None else "N/A"
    return [
        _name(pdb),
        min_available,
        max_unavailable,
        _int(_m(pdb, "status", "disruptionsAllowed")),
        _age(pdb, now),
    ]


PDB_PRINTER = Printer(
    (
        NAME,
        Column("Min Available", description="The minimum number of pods that must be available."),
        Column("Max Unavailable", description="The maximum number of pods that may be unavailable."),
        Column(
            "Allowed Disruptions",
            type="integer",
            description="Calculated number of pods that may be disrupted at this time.",
        ),
        AGE,
    ),
    _pdb_cells,
)

PRIORITYCLASS_PRINTER = Printer(
    (
        NAME,
        Column("Value", type="integer", description="The integer value of this priority class."),
        Column(
            "Global-Default",
            type="boolean",
            description="Whether this is the priority for pods without a priorityClassName.",
        ),
        AGE,
        Column("PreemptionPolicy", description="The policy for preempting pods with lower priority."),
    ),
    lambda o, now: [
        _name(o),
        _int(o.get("value")),
        o.get("globalDefault") is True,
        _age(o, now),
        _str(o.get("preemptionPolicy")),
    ],
)


def _workload_cells(wl: Obj, now: datetime) -> list[Cell]:
    spec = _dict(wl.get("spec"))
    ref = spec.get("controllerRef")
    controller = "<none>"
    if isinstance(ref, dict) and (ref.get("kind") or ref.get("name")):
        controller = f"{_str(ref.get('kind'))}/{_str(ref.get('name'))}"
    names = [_str(_m(t, "name")) for t in _list(spec.get("podGroupTemplates"))]
    names += [_str(_m(t, "name")) for t in _list(spec.get("compositePodGroupTemplates"))]
    return [_name(wl), controller, ",".join(names) or "<none>", _age(wl, now)]


WORKLOAD_PRINTER = Printer(
    (
        NAME,
        Column(
            "Controller",
            description="The object that manages this workload (spec.controllerRef), as Kind/name.",
        ),
        Column("Templates", description="Names of the pod group templates of this workload."),
        AGE,
    ),
    _workload_cells,
)


def _policy(spec: Mapping[str, Any]) -> tuple[str, Any]:
    policy = _dict(spec.get("schedulingPolicy"))
    if "gang" in policy:
        return "Gang", _dict(policy.get("gang"))
    if "basic" in policy:
        return "Basic", None
    return "<none>", None


def _condition_status(obj: Obj, cond_type: str) -> str:
    c = _condition(obj, cond_type)
    if c is None:
        return "<none>"
    return _str(c.get("status")) or "Unknown"


def _disruption(spec: Mapping[str, Any]) -> str:
    mode = _dict(spec.get("disruptionMode"))
    if "all" in mode:
        return "All"
    if "single" in mode:
        return "Single"
    return "<none>"


def _topology(spec: Mapping[str, Any]) -> str:
    keys = [_str(_m(t, "key")) for t in _list(_m(spec, "schedulingConstraints", "topology"))]
    return ",".join(keys) or "<none>"


def _podgroup_cells(pg: Obj, now: datetime) -> list[Cell]:
    spec = _dict(pg.get("spec"))
    policy, gang = _policy(spec)
    min_count: Cell = "<none>"
    if gang is not None and gang.get("minCount") is not None:
        min_count = _int(gang.get("minCount"))
    ref = _dict(spec.get("workloadRef"))
    return [
        _name(pg),
        policy,
        min_count,
        _condition_status(pg, "PodGroupInitiallyScheduled"),
        _age(pg, now),
        _str(ref.get("workloadName")) or "<none>",
        _str(ref.get("templateName")) or "<none>",
        _topology(spec),
        _disruption(spec),
    ]


PODGROUP_PRINTER = Printer(
    (
        NAME,
        Column("Policy", description="The scheduling policy of the group: Gang or Basic."),
        Column(
            "Min-Count", description="Minimum number of pods that must be schedulable together (gang policy)."
        ),
        Column("Scheduled", description="Status of the PodGroupInitiallyScheduled condition."),
        AGE,
        _wide("Workload", "The Workload this group was created from (spec.workloadRef.workloadName)."),
        _wide("Template", "The Workload template this group instantiates (spec.workloadRef.templateName)."),
        _wide("Topology", "Topology keys the group must be placed within."),
        _wide("Disruption", "How the group may be disrupted: Single or All."),
    ),
    _podgroup_cells,
)


def _compositepodgroup_cells(cpg: Obj, now: datetime) -> list[Cell]:
    spec = _dict(cpg.get("spec"))
    policy, gang = _policy(spec)
    min_groups: Cell = "<none>"
    if gang is not None and gang.get("minGroupCount") is not None:
        min_groups = _int(gang.get("minGroupCount"))
    ref = _dict(spec.get("workloadRef"))
    return [
        _name(cpg),
        policy,
        min_groups,
        _condition_status(cpg, "CompositePodGroupInitiallyScheduled"),
        _age(cpg, now),
        _str(ref.get("workloadName")) or "<none>",
        _str(ref.get("templateName")) or "<none>",
        _str(spec.get("parentCompositePodGroupName")) or "<none>",
        _topology(spec),
        _disruption(spec),
    ]


COMPOSITEPODGROUP_PRINTER = Printer(
    (
        NAME,
        Column("Policy", description="The scheduling policy of the composite group: Gang or Basic."),
        Column(
            "Min-Group-Count",
            description="Minimum number of child groups that must be schedulable together (gang policy).",
        ),
        Column("Scheduled", description="Status of the CompositePodGroupInitiallyScheduled condition."),
        AGE,
        _wide("Workload", "The Workload this group was created from (spec.workloadRef.workloadName)."),
        _wide("Template", "The Workload template this group instantiates (spec.workloadRef.templateName)."),
        _wide("Parent", "The parent CompositePodGroup, if any."),
        _wide("Topology", "Topology keys the group must be placed within."),
        _wide("Disruption", "How the group may be disrupted: Single or All."),
    ),
    _compositepodgroup_cells,
)


# ---- resource.k8s.io


def resource_claim_state(claim: Obj) -> str:
    """``resourceClaimState``: ``deleted``, ``pending``, ``allocated``, ``reserved``, comma joined."""
    states: list[str] = []
    deleting = _deleting(claim)
    if deleting:
        states.append("deleted")
    if _m(claim, "status", "allocation") is None:
        if not deleting:
            states.append("pending")
    else:
        states.append("allocated")
        if _list(_m(claim, "status", "reservedFor")):
            states.append("reserved")
    return ",".join(states)


RESOURCECLAIM_PRINTER = Printer(
    (
        NAME,
        Column("State", description="A summary of the current state (allocated, pending, reserved, etc.)."),
        AGE,
    ),
    lambda o, now: [_name(o), resource_claim_state(o), _age(o, now)],
)

RESOURCESLICE_PRINTER = Printer(
    (
        NAME,
        Column("Node", description="The node that provides the devices of this slice."),
        Column("Driver", description="The DRA driver that provides the devices."),
        Column("Pool", description="The pool the slice belongs to."),
        AGE,
    ),
    lambda o, now: [
        _name(o),
        _str(_m(o, "spec", "nodeName")),
        _str(_m(o, "spec", "driver")),
        _str(_m(o, "spec", "pool", "name")),
        _age(o, now),
    ],
)


def _list_with_more(items: list[str], more: bool, count: int, limit: int) -> str:
    """``listWithMoreString``."""
    text = ",".join(items)
    if more:
        return f"{text} + {count - limit} more..."
    return text or "<unset>"


def format_discovery_ports(ports: Any) -> str:
    """``formatDiscoveryPorts``: up to three port numbers (a name, or ``*`` without either)."""
    shown: list[str] = []
    more, count = False, 0
    for p in _list(ports):
        if len(shown) < 3:
            num = _m(p, "port")
            shown.append(
                str(num) if num is not None else (_str(_m(p, "name")) if _m(p, "name") is not None else "*")
            )
        elif len(shown) == 3:
            more = True
        count += 1
    return _list_with_more(shown, more, count, 3)


def format_discovery_endpoints(endpoints: Any) -> str:
    """``formatDiscoveryEndpoints``: up to three addresses, then ``+ N more...``."""
    shown: list[str] = []
    more, count = False, 0
    for ep in _list(endpoints):
        for a in _list(_m(ep, "addresses")):
            if len(shown) < 3:
                shown.append(_str(a))
            elif len(shown) == 3:
                more = True
            count += 1
    return _list_with_more(shown, more, count, 3)


ENDPOINTSLICE_PRINTER = Printer(
    (
        NAME,
        Column("AddressType", description="Type of address contained in this endpoint slice."),
        Column("Ports", description="Ports contained in this endpoint slice."),
        Column("Endpoints", description="Endpoints contained in this endpoint slice."),
        AGE,
    ),
    lambda o, now: [
        _name(o),
        _str(_m(o, "addressType")),
        format_discovery_ports(_m(o, "ports")),
        format_discovery_endpoints(_m(o, "endpoints")),
        _age(o, now),
    ],
)


# ---- core/v1 ReplicationController, PodTemplate


def _rc_cells(rc: Obj, now: datetime) -> list[Cell]:
    names, images = _containers_cells(_m(rc, "spec", "template", "spec"))
    selector = _dict(_m(rc, "spec", "selector"))
    return [
        _name(rc),
        _int(_m(rc, "spec", "replicas")),
        _int(_m(rc, "status", "replicas")),
        _int(_m(rc, "status", "readyReplicas")),
        _age(rc, now),
        names,
        images,
        ",".join(f"{k}={selector[k]}" for k in sorted(selector)) or "<none>",
    ]


REPLICATIONCONTROLLER_PRINTER = Printer(
    (
        NAME,
        Column(
            "Desired",
            type="integer",
            description="Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller",
        ),
        Column(
            "Current",
            type="integer",
            description="Replicas is the most recently observed number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller",
        ),
        Column(
            "Ready",
            type="integer",
            description="The number of ready replicas for this replication controller.",
        ),
        AGE,
        CONTAINERS,
        IMAGES,
        _wide(
            "Selector",
            "Selector is a label query over pods that should match the Replicas count. If Selector is empty, it is defaulted to the labels present on the Pod template. Label keys and values that must match in order to be controlled by this replication controller, if empty defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
        ),
    ),
    _rc_cells,
)


def _podtemplate_cells(pt: Obj, now: datetime) -> list[Cell]:
    names, images = _containers_cells(_m(pt, "template", "spec"))
    return [_name(pt), names, images, format_labels(_m(pt, "template", "metadata", "labels"))]


PODTEMPLATE_PRINTER = Printer(
    (
        NAME,
        Column("Containers", description="Names of each container in the template."),
        Column("Images", description="Images referenced by each container in the template."),
        Column("Pod Labels", description="The labels for the pod template."),
    ),
    _podtemplate_cells,
)


# ---- rbac.authorization.k8s.io


def _subjects(obj: Obj) -> tuple[str, str, str]:
    """``SubjectsStrings``: users, groups and ``namespace:name`` service accounts, ", " joined."""
    users: list[str] = []
    groups: list[str] = []
    sas: list[str] = []
    for s in _list(obj.get("subjects")):
        kind, name = _str(_m(s, "kind")), _str(_m(s, "name"))
        if kind == "User":
            users.append(name)
        elif kind == "Group":
            groups.append(name)
        elif kind == "ServiceAccount":
            ns = _str(_m(s, "namespace"))
            sas.append(f"{ns}:{name}" if ns else name)
    return ", ".join(users), ", ".join(groups), ", ".join(sas)


def _binding_printer(kind: str) -> Printer:
    def cells(b: Obj, now: datetime) -> list[Cell]:
        users, groups, sas = _subjects(b)
        ref = f"{_str(_m(b, 'roleRef', 'kind'))}/{_str(_m(b, 'roleRef', 'name'))}"
        return [_name(b), ref, _age(b, now), users, groups, sas]

    return Printer(
        (
            NAME,
            Column("Role", description=f"Role of the {kind}."),
            AGE,
            _wide("Users", f"Users in the {kind}."),
            _wide("Groups", f"Groups in the {kind}."),
            _wide("ServiceAccounts", f"ServiceAccounts in the {kind}."),
        ),
        cells,
    )


ROLEBINDING_PRINTER = _binding_printer("roleBinding")
CLUSTERROLEBINDING_PRINTER = _binding_printer("clusterRoleBinding")


# ---- storage.k8s.io


def _storageclass_cells(sc: Obj, now: datetime) -> list[Cell]:
    name = _name(sc)
    ann = _dict(_m(sc, "metadata", "annotations"))
    if "true" in (
        ann.get("storageclass.kubernetes.io/is-default-class"),
        ann.get("storageclass.beta.kubernetes.io/is-default-class"),
    ):
        name += " (default)"
    expand = sc.get("allowVolumeExpansion")
    return [
        name,
        _str(sc.get("provisioner")),
        _str(sc.get("reclaimPolicy")) or "Delete",
        _str(sc.get("volumeBindingMode")) or "Immediate",
        "true" if expand is True else "false",
        _age(sc, now),
    ]


STORAGECLASS_PRINTER = Printer(
    (
        NAME,
        Column("Provisioner", description="provisioner indicates the type of the provisioner."),
        Column(
            "ReclaimPolicy",
            description="reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class. Defaults to Delete.",
        ),
        Column(
            "VolumeBindingMode",
            description="volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.  When unset, VolumeBindingImmediate is used. This field is only honored by servers that enable the VolumeScheduling feature.",
        ),
        Column(
            "AllowVolumeExpansion",
            description="allowVolumeExpansion shows whether the storage class allow volume expand.",
        ),
        AGE,
    ),
    _storageclass_cells,
)


def _csidriver_cells(d: Obj, now: datetime) -> list[Cell]:
    spec = _dict(d.get("spec"))
    tokens = spec.get("tokenRequests")
    token_text = "<unset>" if tokens is None else ",".join(_str(_m(t, "audience")) for t in _list(tokens))
    modes = ",".join(_str(m) for m in _list(spec.get("volumeLifecycleModes"))) or "<none>"
    return [
        _name(d),
        spec.get("attachRequired") is not False,
        spec.get("podInfoOnMount") is True,
        spec.get("storageCapacity") is True,
        token_text,
        spec.get("requiresRepublish") is True,
        modes,
        _age(d, now),
    ]


CSIDRIVER_PRINTER = Printer(
    (
        NAME,
        Column(
            "AttachRequired",
            type="boolean",
            description="attachRequired indicates this CSI volume driver requires an attach operation (because it implements the CSI ControllerPublishVolume() method), and that the Kubernetes attach detach controller should call the attach volume interface which checks the volumeattachment status and waits until the volume is attached before proceeding to mounting.",
        ),
        Column(
            "PodInfoOnMount",
            type="boolean",
            description="podInfoOnMount indicates this CSI volume driver requires additional pod information (like podName, podUID, etc.) during mount operations, if set to true.",
        ),
        Column(
            "StorageCapacity",
            type="boolean",
            description="storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity that the driver deployment will report by creating CSIStorageCapacity objects with capacity information, if set to true.",
        ),
        Column(
            "TokenRequests",
            description="tokenRequests indicates the CSI driver needs pods' service account tokens it is mounting volume for to do necessary authentication.",
        ),
        Column(
            "RequiresRepublish",
            type="boolean",
            description="requiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically called to reflect any possible change in the mounted volume.",
        ),
        Column(
            "Modes",
            description="volumeLifecycleModes defines what kind of volumes this CSI volume driver supports.",
        ),
        AGE,
    ),
    _csidriver_cells,
)


# ---- networking.k8s.io


def _ingress_hosts(ing: Obj) -> str:
    """``formatHosts``: up to three hosts, then ``+ N more...``; ``*`` when no rule names one."""
    hosts = [_str(_m(r, "host")) for r in _list(_m(ing, "spec", "rules")) if _str(_m(r, "host"))]
    if not hosts:
        return "*"
    if len(hosts) > 3:
        return ",".join(hosts[:3]) + f" + {len(hosts) - 3} more..."
    return ",".join(hosts)


def _ingress_cells(ing: Obj, now: datetime) -> list[Cell]:
    ports = "80, 443" if _list(_m(ing, "spec", "tls")) else "80"
    return [
        _name(ing),
        _str(_m(ing, "spec", "ingressClassName")) or "<none>",
        _ingress_hosts(ing),
        _lb_ingress(ing, True),
        ports,
        _age(ing, now),
    ]


INGRESS_PRINTER = Printer(
    (
        NAME,
        Column("Class", description="ingressClassName is the name of an IngressClass cluster resource."),
        Column("Hosts", description="Hosts that incoming requests are mapped to."),
        Column("Address", description="Address is a list containing ingress points for the load-balancer."),
        Column("Ports", description="Ports of TLS configurations that open."),
        AGE,
    ),
    _ingress_cells,
)


def _ingressclass_cells(ic: Obj, now: datetime) -> list[Cell]:
    params = _m(ic, "spec", "parameters")
    text = "<none>"
    if isinstance(params, dict):
        text = _str(params.get("kind"))
        if params.get("apiGroup") is not None:
            text += "." + _str(params.get("apiGroup"))
        text += "/" + _str(params.get("name"))
    return [_name(ic), _str(_m(ic, "spec", "controller")), text, _age(ic, now)]


INGRESSCLASS_PRINTER = Printer(
    (
        NAME,
        Column("Controller", description="Controller that is responsible for handling this class."),
        Column("Parameters", description="A reference to a resource with additional parameters."),
        AGE,
    ),
    _ingressclass_cells,
)

NETWORKPOLICY_PRINTER = Printer(
    (
        NAME,
        Column(
            "Pod-Selector",
            description="podSelector selects the pods to which this NetworkPolicy object applies. The array of rules is applied to any pods selected by this field. An empty selector matches all pods in the policy's namespace. Multiple network policies can select the same set of pods. In this case, the ingress rules for each are combined additively. This field is optional. If it is not specified, it defaults to an empty selector.",
        ),
        AGE,
    ),
    lambda o, now: [_name(o), format_label_selector(_m(o, "spec", "podSelector")), _age(o, now)],
)


# ---- autoscaling/v2


def _hpa_metric_text(spec_metric: Any, status_metrics: list[Any]) -> str:
    """One entry of ``formatHPAMetrics``: ``<current>/<target>`` (resource metrics name the resource)."""
    mtype = _str(_m(spec_metric, "type"))
    current = next(
        (s for s in status_metrics if _str(_m(s, "type")) == mtype and _same_metric(spec_metric, s)), None
    )
    key = {
        "Resource": "resource",
        "ContainerResource": "containerResource",
        "Pods": "pods",
        "Object": "object",
        "External": "external",
    }.get(mtype, "")
    src = _dict(_m(spec_metric, key))
    target = _dict(src.get("target"))
    cur = _dict(_m(current, key, "current")) if current is not None else {}
    if target.get("averageUtilization") is not None:
        now_text = (
            f"{cur['averageUtilization']}%" if cur.get("averageUtilization") is not None else "<unknown>"
        )
        text = f"{now_text}/{target['averageUtilization']}%"
    elif target.get("averageValue") is not None:
        text = f"{_str(cur.get('averageValue')) or '<unknown>'}/{_str(target['averageValue'])}"
    else:
        text = f"{_str(cur.get('value')) or '<unknown>'}/{_str(target.get('value'))}"
    if mtype == "Resource":
        return f"{_str(src.get('name'))}: {text}"
    if mtype == "ContainerResource":
        return f"{_str(src.get('name'))}/{_str(src.get('container'))}: {text}"
    if mtype == "External" and target.get("averageValue") is not None:
        return f"{text} (avg)"
    return text


def _same_metric(spec_metric: Any, status_metric: Any) -> bool:
    mtype = _str(_m(spec_metric, "type"))
    if mtype in ("Resource", "ContainerResource"):
        key = "resource" if mtype == "Resource" else "containerResource"
        return _m(spec_metric, key, "name") == _m(status_metric, key, "name")
    return True


def _hpa_targets(hpa: Obj) -> str:
    metrics = _list(_m(hpa, "spec", "metrics"))
    if not metrics:
        return "<none>"
    status_metrics = _list(_m(hpa, "status", "currentMetrics"))
    texts = [_hpa_metric_text(m, status_metrics) for m in metrics]
    if len(texts) > 2:
        return ", ".join(texts[:2]) + f" + {len(texts) - 2} more..."
    return ", ".join(texts)


def _hpa_cells(hpa: Obj, now: datetime) -> list[Cell]:
    if hpa.get("apiVersion") == "autoscaling/v1":
        from apiserver.registry.strategies.autoscaling_v1 import hpa_v1_to_v2

        hpa = hpa_v1_to_v2(hpa)
    ref = _dict(_m(hpa, "spec", "scaleTargetRef"))
    min_pods = _m(hpa, "spec", "minReplicas")
    return [
        _name(hpa),
        f"{_str(ref.get('kind'))}/{_str(ref.get('name'))}",
        _hpa_targets(hpa),
        "<unset>" if min_pods is None else str(_int(min_pods)),
        _int(_m(hpa, "spec", "maxReplicas")),
        _int(_m(hpa, "status", "currentReplicas")),
        _age(hpa, now),
    ]


HPA_PRINTER = Printer(
    (
        NAME,
        Column(
            "Reference",
            description="scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count.",
        ),
        Column(
            "Targets",
            description="metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).  The desired replica count is calculated multiplying the ratio between the target value and the current value by the current number of pods.  Ergo, metrics used must decrease as the pod count is increased, and vice-versa.  See the individual metric source types for more information about how each type of metric must respond. If not set, the default metric will be set to 80% average CPU utilization.",
        ),
        Column(
            "MinPods",
            description="minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha feature gate HPAScaleToZero is enabled and at least one Object or External metric is configured.  Scaling is active as long as at least one metric value is available.",
        ),
        Column(
            "MaxPods",
            type="integer",
            description="maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas.",
        ),
        Column(
            "Replicas",
            type="integer",
            description="currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler.",
        ),
        AGE,
    ),
    _hpa_cells,
)


# ---- apiregistration.k8s.io


def _apiservice_cells(svc: Obj, now: datetime) -> list[Cell]:
    ref = _m(svc, "spec", "service")
    service = (
        "Local" if not isinstance(ref, dict) else f"{_str(ref.get('namespace'))}/{_str(ref.get('name'))}"
    )
    status = "Unknown"
    cond = _condition(svc, "Available")
    if cond is not None:
        cs = _str(cond.get("status"))
        status = cs if cs == "True" or not cond.get("reason") else f"{cs} ({_str(cond.get('reason'))})"
    return [_name(svc), service, status, _age(svc, now)]


APISERVICE_PRINTER = Printer(
    (
        NAME,
        Column("Service", description="The reference to the service that hosts this API endpoint."),
        Column("Available", description="Whether this service is available."),
        AGE,
    ),
    _apiservice_cells,
)


# ---- admissionregistration.k8s.io


def _webhooks_cells(obj: Obj, now: datetime) -> list[Cell]:
    hooks = obj.get("webhooks")
    return [_name(obj), len(hooks) if isinstance(hooks, list) else 0, _age(obj, now)]


WEBHOOKCONFIGURATION_PRINTER = Printer(
    (
        NAME,
        Column(
            "Webhooks",
            type="integer",
            description="Webhooks indicates the number of webhooks registered in this configuration",
        ),
        AGE,
    ),
    _webhooks_cells,
)


def _param_kind(obj: Obj) -> str:
    pk = _m(obj, "spec", "paramKind")
    if not isinstance(pk, dict):
        return "<unset>"
    return f"{_str(pk.get('apiVersion'))}/{_str(pk.get('kind'))}"


def _policy_cells(key: str) -> CellsFn:
    def cells(obj: Obj, now: datetime) -> list[Cell]:
        items = _m(obj, "spec", key)
        return [_name(obj), len(items) if isinstance(items, list) else 0, _param_kind(obj), _age(obj, now)]

    return cells


_PARAMKIND_COLUMN = Column(
    "ParamKind", description="ParamKind specifies the kind of resources used to parameterize this policy"
)
VALIDATINGADMISSIONPOLICY_PRINTER = Printer(
    (
        NAME,
        Column(
            "Validations",
            type="integer",
            description="Validations indicates the number of validation rules defined in this configuration",
        ),
        _PARAMKIND_COLUMN,
        AGE,
    ),
    _policy_cells("validations"),
)
MUTATINGADMISSIONPOLICY_PRINTER = Printer(
    (
        NAME,
        Column(
            "Mutations",
            type="integer",
            description="Mutations indicates the number of mutations rules defined in this configuration",
        ),
        _PARAMKIND_COLUMN,
        AGE,
    ),
    _policy_cells("mutations"),
)


def _selector_text(sel: Any) -> str:
    sel = sel if isinstance(sel, dict) else {}
    parts = [f"{k}={v}" for k, v in sorted((sel.get("matchLabels") or {}).items())]
    for e in sel.get("matchExpressions") or []:
        if not isinstance(e, dict):
            continue
        op, key, values = _str(e.get("operator")), _str(e.get("key")), e.get("values") or []
        if op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append("!" + key)
        else:
            parts.append(f"{key} {op.lower()} ({','.join(sorted(map(str, values)))})")
    return ",".join(parts)


def _binding_cells(obj: Obj, now: datetime) -> list[Cell]:
    param = "<unset>"
    ref = _m(obj, "spec", "paramRef")
    if isinstance(ref, dict):
        if ref.get("name"):
            param = f"{_str(ref.get('namespace')) or '*'}/{_str(ref.get('name'))}"
        elif ref.get("selector") is not None:
            param = _selector_text(ref.get("selector"))
    return [_name(obj), _str(_m(obj, "spec", "policyName")), param, _age(obj, now)]


POLICYBINDING_PRINTER = Printer(
    (
        NAME,
        Column(
            "PolicyName",
            description="PolicyName indicates the policy definition which the policy binding binded to",
        ),
        Column(
            "ParamRef", description="ParamRef indicates the param resource which sets the configration param"
        ),
        AGE,
    ),
    _binding_cells,
)


#: (group, plural) -> printer. Unlisted resources print NAME AGE.
def _record_cells(rec: Obj, now: datetime) -> list[Cell]:
    """gangplane's SchedulingRecord: subject, attempts, and the last attempt's outcome and place."""
    subject = _dict(rec.get("subject"))
    attempts = rec.get("attempts") if isinstance(rec.get("attempts"), list) else []
    last = _dict(attempts[-1]) if attempts else {}
    where = last.get("selectedNode") or last.get("selectedPlacement") or last.get("nominatedNode") or "<none>"
    return [
        _name(rec),
        f"{_str(subject.get('kind'))}/{_str(subject.get('name'))}",
        _str(rec.get("totalAttempts", len(attempts))),
        _str(last.get("result", "")) or "<none>",
        _str(where),
        _age(rec, now),
    ]


#: gangplane's own ``scheduling.gangplane.dev`` SchedulingRecord (not a Kubernetes kind)
SCHEDULING_RECORD_PRINTER = Printer(
    (
        NAME,
        Column("Subject", description="The pod or PodGroup the record is about."),
        Column("Attempts", "integer", "Scheduling attempts so far (the newest are kept)."),
        Column("Result", description="The last attempt's outcome."),
        Column("Node", description="The last attempt's node, placement or nominated node."),
        AGE,
    ),
    _record_cells,
)


PRINTERS: dict[tuple[str, str], Printer] = {
    ("", "pods"): POD_PRINTER,
    ("", "nodes"): NODE_PRINTER,
    ("", "namespaces"): NAMESPACE_PRINTER,
    ("", "services"): SERVICE_PRINTER,
    ("", "endpoints"): ENDPOINTS_PRINTER,
    ("discovery.k8s.io", "endpointslices"): ENDPOINTSLICE_PRINTER,
    ("", "configmaps"): CONFIGMAP_PRINTER,
    ("", "secrets"): SECRET_PRINTER,
    ("", "serviceaccounts"): SERVICEACCOUNT_PRINTER,
    ("", "events"): EVENT_PRINTER,
    ("events.k8s.io", "events"): EVENT_PRINTER,
    ("", "persistentvolumeclaims"): PVC_PRINTER,
    ("", "persistentvolumes"): PV_PRINTER,
    ("", "limitranges"): CREATED_AT_PRINTER,
    ("", "resourcequotas"): RESOURCEQUOTA_PRINTER,
    ("apps", "statefulsets"): STATEFULSET_PRINTER,
    ("apps", "controllerrevisions"): CONTROLLERREVISION_PRINTER,
    ("apps", "deployments"): DEPLOYMENT_PRINTER,
    ("apps", "replicasets"): REPLICASET_PRINTER,
    ("apps", "daemonsets"): DAEMONSET_PRINTER,
    ("batch", "jobs"): JOB_PRINTER,
    ("batch", "cronjobs"): CRONJOB_PRINTER,
    ("coordination.k8s.io", "leases"): LEASE_PRINTER,
    ("policy", "poddisruptionbudgets"): PDB_PRINTER,
    ("scheduling.k8s.io", "priorityclasses"): PRIORITYCLASS_PRINTER,
    ("scheduling.k8s.io", "workloads"): WORKLOAD_PRINTER,
    ("scheduling.k8s.io", "podgroups"): PODGROUP_PRINTER,
    ("scheduling.k8s.io", "compositepodgroups"): COMPOSITEPODGROUP_PRINTER,
    ("resource.k8s.io", "resourceclaims"): RESOURCECLAIM_PRINTER,
    ("resource.k8s.io", "resourceclaimtemplates"): DEFAULT_PRINTER,
    ("resource.k8s.io", "deviceclasses"): DEFAULT_PRINTER,
    ("resource.k8s.io", "resourceslices"): RESOURCESLICE_PRINTER,
    ("", "replicationcontrollers"): REPLICATIONCONTROLLER_PRINTER,
    ("", "podtemplates"): PODTEMPLATE_PRINTER,
    ("rbac.authorization.k8s.io", "roles"): CREATED_AT_PRINTER,
    ("rbac.authorization.k8s.io", "clusterroles"): CREATED_AT_PRINTER,
    ("apiextensions.k8s.io", "customresourcedefinitions"): CREATED_AT_PRINTER,
    ("rbac.authorization.k8s.io", "rolebindings"): ROLEBINDING_PRINTER,
    ("rbac.authorization.k8s.io", "clusterrolebindings"): CLUSTERROLEBINDING_PRINTER,
    ("storage.k8s.io", "storageclasses"): STORAGECLASS_PRINTER,
    ("storage.k8s.io", "csidrivers"): CSIDRIVER_PRINTER,
    ("networking.k8s.io", "ingresses"): INGRESS_PRINTER,
    ("networking.k8s.io", "ingressclasses"): INGRESSCLASS_PRINTER,
    ("networking.k8s.io", "networkpolicies"): NETWORKPOLICY_PRINTER,
    ("autoscaling", "horizontalpodautoscalers"): HPA_PRINTER,
    ("apiregistration.k8s.io", "apiservices"): APISERVICE_PRINTER,
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"): WEBHOOKCONFIGURATION_PRINTER,
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"): WEBHOOKCONFIGURATION_PRINTER,
    ("admissionregistration.k8s.io", "validatingadmissionpolicies"): VALIDATINGADMISSIONPOLICY_PRINTER,
    ("admissionregistration.k8s.io", "validatingadmissionpolicybindings"): POLICYBINDING_PRINTER,
    ("admissionregistration.k8s.io", "mutatingadmissionpolicies"): MUTATINGADMISSIONPOLICY_PRINTER,
    ("admissionregistration.k8s.io", "mutatingadmissionpolicybindings"): POLICYBINDING_PRINTER,
    ("scheduling.gangplane.dev", "schedulingrecords"): SCHEDULING_RECORD_PRINTER,
}


def printer_for(group: str, plural: str) -> Printer:
    return PRINTERS.get((group, plural), DEFAULT_PRINTER)


# --------------------------------------------------------------------------------------------
# the Table


def _row_object(obj: Obj, include_object: str, table_version: str) -> Obj | None:
    if include_object == INCLUDE_OBJECT:
        return obj
    if include_object == INCLUDE_NONE:
        return None
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": f"{TABLE_GROUP}/{table_version}",
        "metadata": _dict(obj.get("metadata")),
    }


def to_table(
    rd_group: str,
    plural: str,
    objects: Sequence[Obj],
    now: datetime,
    list_rv: str,
    continue_token: str = "",
    include_object: str = INCLUDE_METADATA,
    table_version: str = "v1",
    printer: Printer | None = None,
) -> dict[str, Any]:
    """A ``meta.k8s.io`` Table of ``objects`` (one row each) for the resource ``rd_group``/``plural``.

    Column definitions are always sent: watch events need them on the first event and repeating
    them is harmless (kubectl.md §4). ``include_object`` is ``Metadata`` (the default kubectl
    relies on for ``-A`` NAMESPACE and ``--show-labels``), ``Object`` or ``None`` (rows without
    an ``object``); any other value is a 400, as in kube. ``table_version`` follows the Accept
    header (``v1`` or ``v1beta1``). ``printer`` replaces the resource's built-in printer (a custom
    resource's ``additionalPrinterColumns``).
    """
    if include_object not in _INCLUDE_VALUES:
        raise bad_request(f'unrecognized includeObject value: "{include_object}"')
    printer = printer or printer_for(rd_group, plural)
    rows: list[dict[str, Any]] = []
    for obj in objects:
        cells = printer.cells(obj, now)
        row: dict[str, Any] = {"cells": cells}
        if printer.conditions is not None:
            conditions = printer.conditions(obj)
            if conditions:
                row["conditions"] = conditions
        row_obj = _row_object(obj, include_object, table_version)
        if row_obj is not None:
            row["object"] = row_obj
        rows.append(row)
    metadata: dict[str, Any] = {"resourceVersion": list_rv}
    if continue_token:
        metadata["continue"] = continue_token
    return {
        "kind": "Table",
        "apiVersion": f"{TABLE_GROUP}/{table_version}",
        "metadata": metadata,
        "columnDefinitions": [c.definition() for c in printer.columns],
        "rows": rows,
    }


def include_object_param(query: Mapping[str, Any] | str) -> str:
    """The ``includeObject`` query parameter, ``Metadata`` when absent; 400 for an unknown value.

    ``query`` is a raw query string or a mapping whose values are strings or lists of strings
    (the first one counts, as Go's ``url.Values.Get``).
    """
    values: Any = (
        parse_qs(query.lstrip("?"), keep_blank_values=True).get("includeObject")
        if isinstance(query, str)
        else query.get("includeObject")
    )
    if isinstance(values, (list, tuple)):
        values = values[0] if values else None
    value = _str(values)
    if not value:
        return INCLUDE_METADATA
    if value not in _INCLUDE_VALUES:
        raise bad_request(f'unrecognized includeObject value: "{value}"')
    return value
