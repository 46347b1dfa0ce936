"""The simulated cluster's machines: the embedded default fleet and the ``--cluster`` YAML format.

A *fleet* is a list of node groups. Each group expands into nodes by zone, by rack within the
zone, and by ``count`` within the rack; the well-known topology labels are set from that
expansion, so KEP-6277's zone- and rack-local gangs find real domains. The node agent
(:mod:`controllers.nodeagent`) creates the fleet's Node objects at start when they are absent and
then plays kubelet for them (and for any Node created through the API).

Format (every key but ``nodes`` and a group's ``name`` is optional)::

    apiVersion: gangplane.dev/v1alpha1      # optional
    kind: Fleet                             # optional
    deviceClasses:                          # DRA DeviceClasses created at start
    - name: shared-accelerator.example.com
      driver: shared-accelerator.example.com   # selector: device.driver == driver
    nodes:
    - name: "gpu-{rack}-{index}"            # template: {zone} {rack} {r} {index} {i}
      count: 4                              # nodes per rack (per zone / in total without them)
      zones: [zone-a, zone-b]               # topology.kubernetes.io/zone
      racksPerZone: 2                       # topology.kubernetes.io/rack = rackName
      rackName: "{zone}-rack-{r}"           # default shown
      region: region-1                      # topology.kubernetes.io/region
      instanceType: gpu-8x                  # node.kubernetes.io/instance-type
      arch: amd64                           # kubernetes.io/arch (os: linux -> kubernetes.io/os)
      capacity: {cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}
      allocatable: {}                       # defaults to capacity
      labels: {team: "ml-{zone}"}           # values are templates too
      annotations: {}
      taints: [{key: dedicated, value: ml, effect: NoSchedule}]
      devices:                              # DRA devices published in a ResourceSlice per node
      - driver: gpu.example.com
        count: 8
        name: "gpu-{d}"                     # {d}: device index on the node
        attributes: {model: "H100"}         # string / int / bool
        capacity: {memory: 80Gi}
      - driver: shared-accelerator.example.com
        scope: rack                         # one slice per rack, usable from all its nodes
        count: 1
        name: "accel-{d}"

``{index}`` counts nodes within a rack (or zone, or group), ``{i}`` within the whole group,
``{r}`` racks within a zone. ``nodes: []`` is an empty cluster. Any mistake raises
``ValueError`` naming the offending path (``nodes[1].capacity.cpu: …``); ``gangplane serve``
prints it after the file name and exits with code 2.
"""

from __future__ import annotations

import string
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from apiserver.api.types import Obj
from apiserver.quantity import parse_quantity
from apiserver.validation import names

API_VERSION = "gangplane.dev/v1alpha1"
KIND = "Fleet"

ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
RACK_LABEL = "topology.kubernetes.io/rack"
HOSTNAME_LABEL = "kubernetes.io/hostname"
OS_LABEL = "kubernetes.io/os"
ARCH_LABEL = "kubernetes.io/arch"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_GROUP_KEYS = frozenset(
    {
        "name",
        "count",
        "zones",
        "racksPerZone",
        "rackName",
        "region",
        "instanceType",
        "arch",
        "os",
        "capacity",
        "allocatable",
        "labels",
        "annotations",
        "taints",
        "devices",
    }
)
_TOP_KEYS = frozenset({"apiVersion", "kind", "nodes", "deviceClasses", "stages"})
_DEVICE_KEYS = frozenset({"driver", "count", "name", "attributes", "capacity", "scope"})
DEVICE_SCOPES = ("node", "rack")
_TEMPLATE_VARS = frozenset({"zone", "rack", "r", "index", "i", "d"})


# ============================================================================ model


@dataclass(frozen=True)
class DeviceSpec:
    """DRA devices of one driver on one node (published as one ResourceSlice)."""

    driver: str
    names: tuple[str, ...]
    attributes: Mapping[str, Any] = field(default_factory=dict)
    capacity: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RackDeviceSpec:
    """DRA devices of one driver shared by every node of a rack (``scope: rack``).

    Published as one ResourceSlice per rack and driver whose ``spec.nodeSelector`` selects the
    rack's nodes, the way a network-attached device's driver publishes it: a claim allocated from
    it can be used from any node of the rack.
    """

    rack: str
    driver: str
    names: tuple[str, ...]
    attributes: Mapping[str, Any] = field(default_factory=dict)
    capacity: Mapping[str, str] = field(default_factory=dict)

    def slice_object(self) -> Obj:
        devices: list[Obj] = []
        for n in self.names:
            d: Obj = {"name": n}
            if self.attributes:
                d["attributes"] = dict(self.attributes)
            if self.capacity:
                d["capacity"] = {k: {"value": v} for k, v in self.capacity.items()}
            devices.append(d)
        return {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{self.rack}-{self.driver}"},
            "spec": {
                "driver": self.driver,
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": RACK_LABEL, "operator": "In", "values": [self.rack]}]}
                    ]
                },
                "pool": {"name": self.rack, "generation": 1, "resourceSliceCount": 1},
                "devices": devices,
            },
        }


@dataclass(frozen=True)
class DeviceClassSpec:
    """A DeviceClass the fleet file asks for: its name and the driver its devices come from."""

    name: str
    driver: str


@dataclass(frozen=True)
class NodeSpec:
    """One machine: everything the agent needs to register it."""

    name: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    taints: tuple[Mapping[str, str], ...]
    capacity: Mapping[str, str]
    allocatable: Mapping[str, str]
    devices: tuple[DeviceSpec, ...] = ()

    def node_object(self) -> Obj:
        """The Node as kubelet registers it (status carries capacity; conditions come later)."""
        md: Obj = {"name": self.name, "labels": dict(self.labels)}
        if self.annotations:
            md["annotations"] = dict(self.annotations)
        spec: Obj = {}
        if self.taints:
            spec["taints"] = [dict(t) for t in self.taints]
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": md,
            "spec": spec,
            "status": {"capacity": dict(self.capacity), "allocatable": dict(self.allocatable)},
        }


@dataclass(frozen=True)
class Fleet:
    """An ordered set of nodes (order fixes each node's ordinal, hence its IP and pod CIDR)."""

    nodes: tuple[NodeSpec, ...] = ()
    device_classes: tuple[DeviceClassSpec, ...] = ()
    source: str = "<memory>"
    rack_devices: tuple[RackDeviceSpec, ...] = ()
    #: the node agent's user stages, as written (``controllers.nodeagent.userstages`` reads them)
    stages: tuple[Any, ...] = ()

    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self) -> Iterator[NodeSpec]:
        return iter(self.nodes)

    def node_objects(self) -> list[Obj]:
        """Node dicts in fleet order; the agent creates the absent ones at start."""
        return [n.node_object() for n in self.nodes]

    def names(self) -> list[str]:
        return [n.name for n in self.nodes]

    def get(self, name: str) -> NodeSpec | None:
        for n in self.nodes:
            if n.name == name:
                return n
        return None

    def rack_slice_objects(self) -> list[Obj]:
        """The ResourceSlices of rack-scoped devices (the agent creates the absent ones at start)."""
        return [r.slice_object() for r in self.rack_devices]

    def device_class_objects(self) -> list[Obj]:
        return [
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceClass",
                "metadata": {"name": dc.name},
                "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{dc.driver}"'}}]},
            }
            for dc in self.device_classes
        ]

    def summary(self) -> str:
        """One line per distinct shape, e.g. ``16 × gpu-8x (cpu=96, memory=768Gi, nvidia.com/gpu=8)``."""
        shapes: dict[tuple[str, tuple[tuple[str, str], ...]], int] = {}
        for n in self.nodes:
            key = (n.labels.get(INSTANCE_TYPE_LABEL, "node"), tuple(sorted(n.capacity.items())))
            shapes[key] = shapes.get(key, 0) + 1
        lines = []
        for (itype, cap), count in shapes.items():
            res = ", ".join(f"{k}={v}" for k, v in cap if k != "pods")
            lines.append(f"{count} × {itype} ({res})")
        return "; ".join(lines) if lines else "no nodes"

    @classmethod
    def empty(cls) -> Fleet:
        return cls((), (), "<empty>")


# ============================================================================ parsing


class _Path:
    """A tiny field path for messages: ``nodes[1].capacity.cpu``."""

    def __init__(self, text: str = "") -> None:
        self.text = text

    def child(self, name: str) -> _Path:
        return _Path(f"{self.text}.{name}" if self.text else name)

    def index(self, i: int) -> _Path:
        return _Path(f"{self.text}[{i}]")

    def key(self, k: str) -> _Path:
        return _Path(f"{self.text}[{k}]")

    def __str__(self) -> str:
        return self.text or "<top>"


def _fail(path: _Path, msg: str) -> ValueError:
    return ValueError(f"{path}: {msg}")


def _mapping(v: Any, path: _Path) -> dict[str, Any]:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise _fail(path, f"must be a mapping, got {type(v).__name__}")
    for k in v:
        if not isinstance(k, str):
            raise _fail(path, f"keys must be strings, got {k!r}")
    return v


def _list(v: Any, path: _Path) -> list[Any]:
    if v is None:
        return []
    if not isinstance(v, list):
        raise _fail(path, f"must be a list, got {type(v).__name__}")
    return v


def _str(v: Any, path: _Path) -> str:
    if isinstance(v, bool) or not isinstance(v, str | int | float):
        raise _fail(path, f"must be a string, got {type(v).__name__}")
    return str(v)


def _int(v: Any, path: _Path, minimum: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise _fail(path, f"must be an integer, got {v!r}")
    if v < minimum:
        raise _fail(path, f"must be >= {minimum}, got {v}")
    return v


def _unknown(d: Mapping[str, Any], allowed: frozenset[str], path: _Path) -> None:
    extra = sorted(set(d) - allowed)
    if extra:
        raise _fail(path, f"unknown field(s) {', '.join(extra)}; allowed: {', '.join(sorted(allowed))}")


def _template(text: str, values: Mapping[str, Any], path: _Path) -> str:
    """Python ``str.format`` with only the documented variables (no attribute/index access)."""
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(text) if f is not None]
    except ValueError as e:
        raise _fail(path, f"bad template {text!r}: {e}") from e
    for f in fields:
        if f not in _TEMPLATE_VARS:
            raise _fail(
                path,
                f"unknown template variable {{{f}}} in {text!r}; use {', '.join('{' + v + '}' for v in sorted(_TEMPLATE_VARS))}",
            )
        if f not in values:
            raise _fail(path, f"template variable {{{f}}} is not available here")
    return text.format(**values)


def _check(msgs: list[str], path: _Path, value: str) -> None:
    if msgs:
        raise _fail(path, f"invalid value {value!r}: {'; '.join(msgs)}")


def _resources(v: Any, path: _Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, raw in _mapping(v, path).items():
        p = path.child(k)
        _check(names.is_qualified_name(k), p, k)
        text = _str(raw, p)
        try:
            q = parse_quantity(text)
        except ValueError as e:
            raise _fail(p, f"invalid quantity {text!r}: {e}") from e
        if q < 0:
            raise _fail(p, f"must be non-negative, got {text!r}")
        if k == "pods" and q.denominator != 1:
            raise _fail(p, f"must be a whole number, got {text!r}")
        out[k] = text
    return out


def _taints(v: Any, path: _Path) -> tuple[dict[str, str], ...]:
    out: list[dict[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for i, t in enumerate(_list(v, path)):
        p = path.index(i)
        t = _mapping(t, p)
        _unknown(t, frozenset({"key", "value", "effect"}), p)
        key = _str(t.get("key", ""), p.child("key"))
        _check(names.is_qualified_name(key), p.child("key"), key)
        value = _str(t.get("value", ""), p.child("value"))
        _check(names.is_valid_label_value(value), p.child("value"), value)
        effect = _str(t.get("effect", ""), p.child("effect"))
        if effect not in TAINT_EFFECTS:
            raise _fail(p.child("effect"), f"must be one of {', '.join(TAINT_EFFECTS)}, got {effect!r}")
        if (key, effect) in seen:
            raise _fail(p, f"duplicate taint {key}:{effect}")
        seen.add((key, effect))
        taint = {"key": key, "effect": effect}
        if value:
            taint["value"] = value
        out.append(taint)
    return tuple(out)


def _attribute(v: Any, path: _Path) -> Obj:
    if isinstance(v, bool):
        return {"bool": v}
    if isinstance(v, int):
        return {"int": v}
    if isinstance(v, str):
        return {"string": v}
    raise _fail(path, f"must be a string, integer or boolean, got {type(v).__name__}")


def _devices(v: Any, path: _Path) -> list[tuple[str, int, str, dict[str, Any], dict[str, str], str]]:
    out = []
    drivers: set[str] = set()
    for i, d in enumerate(_list(v, path)):
        p = path.index(i)
        d = _mapping(d, p)
        _unknown(d, _DEVICE_KEYS, p)
        if "driver" not in d:
            raise _fail(p.child("driver"), "required")
        driver = _str(d["driver"], p.child("driver"))
        _check(names.is_dns1123_subdomain(driver), p.child("driver"), driver)
        if driver in drivers:
            raise _fail(
                p.child("driver"), f"driver {driver!r} listed twice; put all its devices in one entry"
            )
        drivers.add(driver)
        count = _int(d.get("count", 1), p.child("count"), 1)
        tmpl = _str(d.get("name", "dev-{d}"), p.child("name"))
        attrs = {
            k: _attribute(a, p.child("attributes").child(k))
            for k, a in _mapping(d.get("attributes"), p.child("attributes")).items()
        }
        cap = _resources(d.get("capacity"), p.child("capacity"))
        scope = _str(d.get("scope", "node"), p.child("scope"))
        if scope not in DEVICE_SCOPES:
            raise _fail(p.child("scope"), f"must be one of {', '.join(DEVICE_SCOPES)}, got {scope!r}")
        out.append((driver, count, tmpl, attrs, cap, scope))
    return out


def _expand_group(g: dict[str, Any], path: _Path) -> tuple[list[NodeSpec], list[RackDeviceSpec]]:
    _unknown(g, _GROUP_KEYS, path)
    if "name" not in g:
        raise _fail(path.child("name"), 'required (a template such as "cpu-{index}")')
    name_tmpl = _str(g["name"], path.child("name"))
    count = _int(g.get("count", 1), path.child("count"), 0)
    zones = [
        _str(z, path.child("zones").index(i))
        for i, z in enumerate(_list(g.get("zones"), path.child("zones")))
    ]
    for i, z in enumerate(zones):
        _check(names.is_valid_label_value(z), path.child("zones").index(i), z)
    if len(set(zones)) != len(zones):
        raise _fail(path.child("zones"), "zones must be unique")
    racks = _int(g["racksPerZone"], path.child("racksPerZone"), 1) if "racksPerZone" in g else 0
    rack_tmpl = _str(g.get("rackName", "{zone}-rack-{r}" if zones else "rack-{r}"), path.child("rackName"))
    if "rackName" in g and not racks:
        raise _fail(path.child("rackName"), "needs racksPerZone")
    region = _str(g["region"], path.child("region")) if "region" in g else ""
    itype = _str(g["instanceType"], path.child("instanceType")) if "instanceType" in g else ""
    arch = _str(g.get("arch", "amd64"), path.child("arch"))
    os_name = _str(g.get("os", "linux"), path.child("os"))
    for key, val in (("region", region), ("instanceType", itype), ("arch", arch), ("os", os_name)):
        _check(names.is_valid_label_value(val), path.child(key), val)
    capacity = _resources(g.get("capacity"), path.child("capacity"))
    allocatable = _resources(g.get("allocatable"), path.child("allocatable"))
    for k in allocatable:
        if k not in capacity:
            raise _fail(path.child("allocatable").child(k), "not in capacity")
        if parse_quantity(allocatable[k]) > parse_quantity(capacity[k]):
            raise _fail(path.child("allocatable").child(k), f"exceeds capacity {capacity[k]}")
    alloc = {**capacity, **allocatable}
    label_tmpls = {
        k: _str(v, path.child("labels").key(k))
        for k, v in _mapping(g.get("labels"), path.child("labels")).items()
    }
    for k in label_tmpls:
        _check(names.is_qualified_name(k), path.child("labels").key(k), k)
    annotations = {
        k: _str(v, path.child("annotations").key(k))
        for k, v in _mapping(g.get("annotations"), path.child("annotations")).items()
    }
    for k in annotations:
        _check(names.is_qualified_name(k), path.child("annotations").key(k), k)
    taints = _taints(g.get("taints"), path.child("taints"))
    devices = _devices(g.get("devices"), path.child("devices"))
    for j, dev in enumerate(devices):
        if dev[5] == "rack" and not racks:
            raise _fail(path.child("devices").index(j).child("scope"), "rack needs racksPerZone")

    cells: list[tuple[str, str, int]] = []  # (zone, rack, r)
    for z in zones or [""]:
        if racks:
            for r in range(racks):
                values = {"zone": z, "r": r}
                cells.append((z, _template(rack_tmpl, values, path.child("rackName")), r))
        else:
            cells.append((z, "", 0))
    out: list[NodeSpec] = []
    rack_devs: list[RackDeviceSpec] = []
    for zone, rack, r in cells:
        for j, (driver, dcount, dtmpl, attrs, dcap, scope) in enumerate(devices):
            if scope != "rack" or not rack:
                continue
            dp = path.child("devices").index(j).child("name")
            values = {"zone": zone, "rack": rack, "r": r} if zone else {"rack": rack, "r": r}
            dnames = tuple(_template(dtmpl, {**values, "d": d}, dp) for d in range(dcount))
            for dn in dnames:
                _check(names.is_dns1123_label(dn), dp, dn)
            if len(set(dnames)) != len(dnames):
                raise _fail(dp, f"device names repeat in rack {rack}; use {{d}} in {dtmpl!r}")
            rack_devs.append(RackDeviceSpec(rack, driver, dnames, attrs, dcap))
    i = 0
    for zone, rack, r in cells:
        for index in range(count):
            values: dict[str, Any] = {"zone": zone, "rack": rack, "r": r, "index": index, "i": i}
            if not zone:
                values.pop("zone")
            if not rack:
                values.pop("rack")
                values.pop("r")
            name = _template(name_tmpl, values, path.child("name"))
            _check(names.is_dns1123_subdomain(name), path.child("name"), name)
            labels = {
                ARCH_LABEL: arch,
                HOSTNAME_LABEL: name,
                OS_LABEL: os_name,
            }
            if itype:
                labels[INSTANCE_TYPE_LABEL] = itype
            if region:
                labels[REGION_LABEL] = region
            if zone:
                labels[ZONE_LABEL] = zone
            if rack:
                _check(names.is_valid_label_value(rack), path.child("rackName"), rack)
                labels[RACK_LABEL] = rack
            for k, tmpl in label_tmpls.items():
                v = _template(tmpl, values, path.child("labels").key(k))
                _check(names.is_valid_label_value(v), path.child("labels").key(k), v)
                labels[k] = v
            devs = []
            for j, (driver, dcount, dtmpl, attrs, dcap, scope) in enumerate(devices):
                if scope != "node":
                    continue
                dp = path.child("devices").index(j).child("name")
                dnames = tuple(_template(dtmpl, {**values, "d": d}, dp) for d in range(dcount))
                for dn in dnames:
                    _check(names.is_dns1123_label(dn), dp, dn)
                if len(set(dnames)) != len(dnames):
                    raise _fail(dp, f"device names repeat on node {name}; use {{d}} in {dtmpl!r}")
                devs.append(DeviceSpec(driver, dnames, attrs, dcap))
            out.append(
                NodeSpec(
                    name=name,
                    labels=dict(sorted(labels.items())),
                    annotations=dict(annotations),
                    taints=taints,
                    capacity=dict(capacity),
                    allocatable=dict(alloc),
                    devices=tuple(devs),
                )
            )
            i += 1
    return out, rack_devs


def parse_fleet(data: Any, source: str = "<memory>") -> Fleet:
    """Validate and expand a fleet document (already YAML-decoded)."""
    top = _Path()
    if not isinstance(data, dict):
        raise ValueError(f"a fleet must be a mapping with a 'nodes' list, got {type(data).__name__}")
    _unknown(data, _TOP_KEYS, top)
    if "apiVersion" in data and data["apiVersion"] != API_VERSION:
        raise _fail(top.child("apiVersion"), f"must be {API_VERSION!r}, got {data['apiVersion']!r}")
    if "kind" in data and data["kind"] != KIND:
        raise _fail(top.child("kind"), f"must be {KIND!r}, got {data['kind']!r}")
    if "nodes" not in data:
        raise _fail(top.child("nodes"), "required (use 'nodes: []' for an empty cluster)")
    nodes: list[NodeSpec] = []
    rack_devices: list[RackDeviceSpec] = []
    seen: dict[str, str] = {}
    groups = _list(data["nodes"], top.child("nodes"))
    for gi, g in enumerate(groups):
        p = top.child("nodes").index(gi)
        group_nodes, group_racks = _expand_group(_mapping(g, p), p)
        for rd in group_racks:
            if any(x.rack == rd.rack and x.driver == rd.driver for x in rack_devices):
                raise _fail(
                    p.child("devices"), f"rack {rd.rack!r} already has devices of driver {rd.driver!r}"
                )
            rack_devices.append(rd)
        for n in group_nodes:
            if n.name in seen:
                raise _fail(p.child("name"), f"node name {n.name!r} already used by {seen[n.name]}")
            seen[n.name] = str(p)
            nodes.append(n)
    classes: list[DeviceClassSpec] = []
    for ci, dc in enumerate(_list(data.get("deviceClasses"), top.child("deviceClasses"))):
        p = top.child("deviceClasses").index(ci)
        dc = _mapping(dc, p)
        _unknown(dc, frozenset({"name", "driver"}), p)
        name = _str(dc.get("name", ""), p.child("name"))
        _check(names.is_dns1123_subdomain(name), p.child("name"), name)
        driver = _str(dc.get("driver", name), p.child("driver"))
        _check(names.is_dns1123_subdomain(driver), p.child("driver"), driver)
        if any(c.name == name for c in classes):
            raise _fail(p.child("name"), f"duplicate device class {name!r}")
        classes.append(DeviceClassSpec(name, driver))
    stages = data.get("stages") or []
    if not isinstance(stages, list):
        raise _fail(top.child("stages"), "must be a list of stages")
    return Fleet(tuple(nodes), tuple(classes), source, tuple(rack_devices), tuple(stages))


def load_fleet(path: str | Path) -> Fleet:
    """Read a fleet YAML file; ``OSError`` if unreadable, ``ValueError`` if malformed.

    The message names the field (``nodes[0].count: …``), not the file: the caller (the CLI's
    ``invalid --cluster file X: …``) already says which file it read.
    """
    p = Path(path)
    text = p.read_text()
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ValueError(f"invalid YAML: {e}") from e
    return parse_fleet(data, str(p))


# ============================================================================ the default fleet

DEFAULT_FLEET_YAML = """\
apiVersion: gangplane.dev/v1alpha1
kind: Fleet
deviceClasses:
- name: gpu.example.com
  driver: gpu.example.com
- name: shared-accelerator.example.com
  driver: shared-accelerator.example.com
nodes:
# 2 zones x 2 racks x 4 hosts, 8 GPUs each: rack-local 8-GPU gangs (KEP stories 2 and 3). Each host
# publishes its 8 GPUs as DRA devices (driver gpu.example.com); each rack has one shared
# accelerator reachable from its 4 hosts (driver shared-accelerator.example.com, story 4).
- name: "gpu-{rack}-{index}"
  zones: [zone-a, zone-b]
  racksPerZone: 2
  count: 4
  region: region-1
  instanceType: gpu-8x
  capacity: {cpu: "96", memory: 768Gi, pods: "110", ephemeral-storage: 2Ti, nvidia.com/gpu: "8"}
  labels:
    nvidia.com/gpu.present: "true"
    nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
  devices:
  - driver: gpu.example.com
    count: 8
    name: "gpu-{d}"
    attributes: {model: H100, productName: NVIDIA-H100-80GB-HBM3, driverVersion: "550.54.15"}
    capacity: {memory: 80Gi}
  - driver: shared-accelerator.example.com
    scope: rack
    count: 1
    name: "accel-{d}"
    attributes: {model: pooled-x1}
    capacity: {memory: 512Gi}
# 3 CPU hosts per zone: the 5 x (4 cpu, 8Gi) database gang (story 1) and zone-local gangs
- name: "cpu-{zone}-{index}"
  zones: [zone-a, zone-b]
  count: 3
  region: region-1
  instanceType: cpu-16x
  capacity: {cpu: "16", memory: 64Gi, pods: "110", ephemeral-storage: 500Gi}
"""


def default_fleet() -> Fleet:
    """The fleet ``gangplane serve`` runs without ``--cluster`` (see ``docs/cluster.md``)."""
    # the embedded text is ours and plain YAML: libyaml's parser (when PyYAML has it) reads it
    # in under a millisecond where the pure-Python one takes ~8 ms of every start
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    fleet = parse_fleet(yaml.load(DEFAULT_FLEET_YAML, Loader=loader), "<default>")
    return fleet
