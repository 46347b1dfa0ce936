"""Structured-parameters device allocation, as a pure function of the published devices.

The scheduler's DynamicResources plugin asks one question per candidate node: *can these
claims get devices reachable from this node, and which?* (kube's
``k8s.io/dynamic-resource-allocation/structured`` allocator). The answer depends only on:

* the :class:`Inventory` — every device of every ResourceSlice, with where it can be used from
  (``spec.nodeName`` = that node only, ``spec.nodeSelector`` = nodes matching it, e.g. a rack,
  ``spec.allNodes``);
* the DeviceClasses (their selectors apply to every request naming them, their config is
  copied into the result with ``source: FromClass``);
* the devices already allocated (to other claims, or in flight in this scheduling cycle).

Each request is satisfied in order: ``exactly`` with ``ExactCount`` takes ``count`` matching
devices, ``All`` takes every matching device reachable from the node (at least one);
``firstAvailable`` tries its sub-requests in order. A device matches when it belongs to the
class's driver filter and every class and request CEL selector evaluates to true;
``constraints[].matchAttribute`` / ``distinctAttribute`` are honoured by backtracking. A CEL
runtime error makes the device not match and is reported if nothing matched.

The result is a ``status.allocation`` object: ``devices.results[]`` (``request``, ``driver``,
``pool``, ``device``), ``devices.config[]`` and a ``nodeSelector`` saying where the claim can be
used from: the node's name for node-local devices, the slice's selector for shared devices,
none for ``allNodes``. A failure names the claim and the request that could not be satisfied.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from apiserver.api.types import Obj
from apiserver.cel import CompileError, EvalError
from apiserver.cel.dra import attribute_value, compile_selector, device_activation

DeviceID = tuple[str, str, str]  # (driver, pool, device)


# -- node selection ----------------------------------------------------------------------------


def _requirement_matches(req: Obj, values_of: Mapping[str, str]) -> bool:
    key, op, values = req.get("key", ""), req.get("operator", ""), req.get("values") or []
    present = key in values_of
    if op == "In":
        return present and values_of[key] in values
    if op == "NotIn":
        return not present or values_of[key] not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt"):
        try:
            have, want = int(values_of[key]), int(values[0])
        except (KeyError, ValueError, IndexError):
            return False
        return have > want if op == "Gt" else have < want
    return False


def node_selector_matches(selector: Obj | None, node_name: str, labels: Mapping[str, str]) -> bool:
    """A ``v1.NodeSelector``: any term whose expressions and fields all match."""
    if selector is None:
        return True
    for term in selector.get("nodeSelectorTerms") or []:
        exprs, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
        if not exprs and not fields:
            continue
        if all(_requirement_matches(e, labels) for e in exprs) and all(
            _requirement_matches(f, {"metadata.name": node_name}) for f in fields
        ):
            return True
    return False


def node_name_selector(node_name: str) -> Obj:
    return {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
        ]
    }


# -- inventory ---------------------------------------------------------------------------------


@dataclass
class Device:
    """One published device and where it can be used from."""

    driver: str
    pool: str
    name: str
    spec: Obj
    node_name: str | None = None
    node_selector: Obj | None = None
    all_nodes: bool = False
    _activation: Obj | None = None

    @property
    def id(self) -> DeviceID:
        return (self.driver, self.pool, self.name)

    def reachable_from(self, node_name: str, labels: Mapping[str, str]) -> bool:
        if self.node_name is not None:
            return self.node_name == node_name
        if self.node_selector is not None:
            return node_selector_matches(self.node_selector, node_name, labels)
        return self.all_nodes

    def activation(self) -> Obj:
        if self._activation is None:
            self._activation = device_activation(self.driver, self.spec)
        return self._activation

    def attribute(self, qualified: str) -> Any:
        """A device attribute by fully qualified name (the driver's domain may be omitted on the device)."""
        attrs = self.spec.get("attributes") or {}
        domain, _, ident = qualified.partition("/")
        if qualified in attrs:
            return attribute_value(attrs[qualified])
        if domain == self.driver and ident in attrs:
            return attribute_value(attrs[ident])
        return None


@dataclass
class Inventory:
    """All devices of all ResourceSlices; selector results are cached per device and expression."""

    devices: list[Device] = field(default_factory=list)
    _matches: dict[tuple[DeviceID, str], tuple[bool, str]] = field(default_factory=dict)

    @classmethod
    def from_slices(cls, slices: Iterable[Obj]) -> Inventory:
        inv = cls()
        for sl in sorted(slices, key=lambda s: (s.get("metadata") or {}).get("name", "")):
            spec = sl.get("spec") or {}
            driver = spec.get("driver") or ""
            pool = (spec.get("pool") or {}).get("name") or ""
            per_device = spec.get("perDeviceNodeSelection") is True
            for d in spec.get("devices") or []:
                src = d if per_device else spec
                inv.devices.append(
                    Device(
                        driver,
                        pool,
                        d.get("name") or "",
                        d,
                        node_name=src.get("nodeName") or None,
                        node_selector=src.get("nodeSelector"),
                        all_nodes=src.get("allNodes") is True,
                    )
                )
        return inv

    def selector_matches(self, device: Device, expression: str) -> tuple[bool, str]:
        """``(matches, error)`` for one CEL selector; compile/runtime errors do not match."""
        key = (device.id, expression)
        hit = self._matches.get(key)
        if hit is None:
            try:
                hit = (compile_selector(expression).evaluate_bool(device.activation()), "")
            except CompileError as e:
                hit = (False, f"CEL compile error: {e.detail}")
            except EvalError as e:
                hit = (False, f"CEL runtime error: {e}")
            self._matches[key] = hit
        return hit


# -- allocation --------------------------------------------------------------------------------


class AllocationError(Exception):
    """A claim cannot be allocated on the node; the message names the claim and the request."""

    def __init__(self, claim: str, request: str, reason: str):
        super().__init__(f'claim "{claim}", request "{request}": {reason}')
        self.claim = claim
        self.request = request
        self.reason = reason


def _selectors(obj: Obj | None) -> list[str]:
    return [((s.get("cel") or {}).get("expression") or "") for s in (obj or {}).get("selectors") or []]


@dataclass
class _Slot:
    """One device to pick: for ``request`` (``req`` or ``req/sub``) from ``candidates``."""

    request: str
    top: str
    candidates: list[Device]


class _Search:
    def __init__(self, claim_name: str, constraints: list[Obj]):
        self.claim_name = claim_name
        self.constraints = constraints

    def _ok(self, picked: list[tuple[str, str, Device]]) -> bool:
        for c in self.constraints:
            reqs = set(c.get("requests") or [])
            applies = [d for (req, top, d) in picked if not reqs or req in reqs or top in reqs]
            if c.get("matchAttribute"):
                vals = [d.attribute(c["matchAttribute"]) for d in applies]
                if any(v is None for v in vals) or len({repr(v) for v in vals}) > 1:
                    return False
            elif c.get("distinctAttribute"):
                vals = [repr(d.attribute(c["distinctAttribute"])) for d in applies]
                if len(vals) != len(set(vals)):
                    return False
        return True

    def run(self, slots: list[_Slot], taken: set[DeviceID]) -> list[tuple[str, str, Device]] | None:
        picked: list[tuple[str, str, Device]] = []
        used: set[DeviceID] = set()

        def rec(i: int) -> bool:
            if i == len(slots):
                return True
            slot = slots[i]
            for d in slot.candidates:
                if d.id in taken or d.id in used:
                    continue
                picked.append((slot.request, slot.top, d))
                used.add(d.id)
                if self._ok(picked) and rec(i + 1):
                    return True
                picked.pop()
                used.discard(d.id)
            return False

        return picked if rec(0) else None


@dataclass(frozen=True)
class Allocator:
    """Allocates claims for one node from an :class:`Inventory` and the DeviceClasses."""

    inventory: Inventory
    classes: Mapping[str, Obj]

    def _matching(
        self, claim_name: str, request: str, exact: Obj, node_name: str, labels: Mapping[str, str]
    ) -> list[Device]:
        class_name = exact.get("deviceClassName") or ""
        dc = self.classes.get(class_name)
        if dc is None:
            raise AllocationError(claim_name, request, f'device class "{class_name}" does not exist')
        exprs = _selectors(dc.get("spec")) + _selectors(exact)
        out: list[Device] = []
        errors: list[str] = []
        for d in self.inventory.devices:
            if not d.reachable_from(node_name, labels):
                continue
            ok = True
            for e in exprs:
                m, err = self.inventory.selector_matches(d, e)
                if err:
                    errors.append(err)
                if not m:
                    ok = False
                    break
            if ok:
                out.append(d)
        if not out and errors:
            raise AllocationError(claim_name, request, errors[0])
        return out

    def _config(self, claim: Obj, requests_by_class: dict[str, list[str]]) -> list[Obj]:
        out: list[Obj] = []
        for class_name, reqs in sorted(requests_by_class.items()):
            for cfg in ((self.classes.get(class_name) or {}).get("spec") or {}).get("config") or []:
                out.append(
                    {
                        "source": "FromClass",
                        "requests": reqs,
                        **{k: v for k, v in cfg.items() if k != "requests"},
                    }
                )
        for cfg in ((claim.get("spec") or {}).get("devices") or {}).get("config") or []:
            out.append({"source": "FromClaim", **cfg})
        return out

    def allocate(self, claim: Obj, node_name: str, labels: Mapping[str, str], taken: set[DeviceID]) -> Obj:
        """The ``status.allocation`` for ``claim`` on ``node_name``, or raise :class:`AllocationError`.

        ``taken``: devices allocated elsewhere; they are not handed out twice.
        """
        name = (claim.get("metadata") or {}).get("name", "")
        devices = (claim.get("spec") or {}).get("devices") or {}
        search = _Search(name, list(devices.get("constraints") or []))
        slots: list[_Slot] = []
        by_class: dict[str, list[str]] = {}
        for req in devices.get("requests") or []:
            rname = req.get("name") or ""
            options: list[tuple[str, Obj]]
            if req.get("exactly") is not None:
                options = [(rname, req["exactly"])]
            else:
                options = [(f"{rname}/{s.get('name', '')}", s) for s in req.get("firstAvailable") or []]
            last_error: AllocationError | None = None
            for label, exact in options:
                try:
                    candidates = self._matching(name, label, exact, node_name, labels)
                except AllocationError as e:
                    last_error = e
                    continue
                free = [d for d in candidates if d.id not in taken]
                if exact.get("allocationMode") == "All":
                    if not candidates:
                        last_error = AllocationError(name, label, self._none_reason(exact))
                        continue
                    if len(free) != len(candidates):
                        last_error = AllocationError(
                            name, label, "allocation mode All: some matching devices are already allocated"
                        )
                        continue
                    want = len(candidates)
                else:
                    want = int(exact.get("count") or 1)
                    if len(free) < want:
                        last_error = AllocationError(
                            name,
                            label,
                            self._none_reason(exact)
                            if not candidates
                            else f"needs {want} device(s), {len(free)} of {len(candidates)} matching are free",
                        )
                        continue
                trial = slots + [_Slot(label, rname, free)] * want
                if search.run(trial, taken) is None:
                    last_error = AllocationError(
                        name, label, "no combination of devices satisfies the constraints"
                    )
                    continue
                slots = trial
                by_class.setdefault(exact.get("deviceClassName") or "", []).append(label)
                last_error = None
                break
            if last_error is not None:
                raise last_error
        picked = search.run(slots, taken) if slots else []
        if picked is None:
            raise AllocationError(
                name, slots[-1].request, "no combination of devices satisfies the constraints"
            )
        results = [
            {"request": req, "driver": d.driver, "pool": d.pool, "device": d.name} for req, _, d in picked
        ]
        allocation: Obj = {"devices": {"results": results}}
        config = self._config(claim, by_class)
        if config:
            allocation["devices"]["config"] = config
        selector = _combined_selector([d for _, _, d in picked], node_name)
        if selector is not None:
            allocation["nodeSelector"] = selector
        return allocation

    def _none_reason(self, exact: Obj) -> str:
        return f'no device of class "{exact.get("deviceClassName", "")}" matching the selectors is reachable from the node'


def _combined_selector(devices: list[Device], node_name: str) -> Obj | None:
    if any(d.node_name for d in devices):
        return node_name_selector(node_name)
    exprs: list[Obj] = []
    for d in devices:
        if d.node_selector is not None:
            terms = d.node_selector.get("nodeSelectorTerms") or []
            if terms:
                for e in terms[0].get("matchExpressions") or []:
                    if e not in exprs:
                        exprs.append(e)
    if exprs:
        return {"nodeSelectorTerms": [{"matchExpressions": exprs}]}
    return None


def allocated_devices(claims: Iterable[Obj]) -> set[DeviceID]:
    """Devices held by allocated claims (``status.allocation.devices.results``)."""
    out: set[DeviceID] = set()
    for c in claims:
        for r in (((c.get("status") or {}).get("allocation") or {}).get("devices") or {}).get(
            "results"
        ) or []:
            out.add((r.get("driver", ""), r.get("pool", ""), r.get("device", "")))
    return out


def allocation_usable_on(allocation: Obj, node_name: str, labels: Mapping[str, str]) -> bool:
    """Whether an existing allocation can be used from the node (its ``nodeSelector``)."""
    return node_selector_matches(allocation.get("nodeSelector"), node_name, labels)
