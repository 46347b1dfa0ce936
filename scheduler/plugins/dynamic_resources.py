"""DynamicResources: pods with ResourceClaims get devices from ResourceSlices (kube's DRA plugin, with KEP-5729).

Extension points, as upstream:

* **PreFilter** resolves every ``spec.resourceClaims`` entry to its ResourceClaim
  (:func:`resourceclaims.claims.claim_name_for`): a template claim the claim controller has not
  generated yet, a missing claim or one being deleted make the pod
  UnschedulableAndUnresolvable; a pod claim already reserved for 256 consumers is "in use".
  With ``DRAWorkloadResourceClaims``, an entry that matches one of its PodGroup's claims exactly
  stands for the *group's* claim, reserved for the PodGroup (one ``reservedFor`` entry
  ``{apiGroup: scheduling.k8s.io, resource: podgroups, name, uid}``), never for the pod.
* **Filter** keeps nodes from which every allocated claim is usable (its ``nodeSelector``) and on
  which the unallocated ones can be allocated (:mod:`resourceclaims.allocator`); the reason
  names the claim and the request that failed.
* **Reserve** puts the chosen allocation *in flight*: its devices are taken for every later
  pod, and a group claim's allocation is the one every other member of the group uses.
* **PreBind** writes it: the ``resource.kubernetes.io/delete-protection`` finalizer, then
  ``status.allocation`` and the reservation in one status update. A group claim is written once,
  by the first member to bind; the others find it reserved for their PodGroup and write nothing.
* **Unreserve** drops an in-flight allocation that was not written.

The PodGroup cycle (gang) tries its members one after another on one snapshot without running
Reserve in between. A member's Filter records the allocation it would use per node; the next
member's PreFilter adopts the allocation of a member already assumed in the snapshot, so the
whole group shares one allocation, made once inside the group's cycle.

Written claims are kept in an assume cache until the informer catches up, as kube's plugin does.
"""

from __future__ import annotations

import asyncio
import copy
from dataclasses import dataclass, field
from typing import Any

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.interface import DEVICECLASSES, RESOURCECLAIMS, RESOURCESLICES
from featuregates import DRA_WORKLOAD_RESOURCE_CLAIMS
from resourceclaims import claims as rc
from resourceclaims.allocator import (
    AllocationError,
    Allocator,
    Inventory,
    allocated_devices,
    allocation_usable_on,
)
from scheduler.events import (
    DEVICECLASS,
    PODGROUP,
    RESOURCECLAIM,
    RESOURCESLICE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
)
from scheduler.framework import CycleState, Handle, PreFilterResult
from scheduler.nodeinfo import NodeInfo, PodInfo
from scheduler.status import Code, Status

NAME = "DynamicResources"
STATE_KEY = "PreFilter" + NAME

CLAIM_NOT_CREATED = "ResourceClaim not created yet"
IN_USE = "resourceclaim in use"
NOT_AVAILABLE = "resourceclaim not available on the node"
CANNOT_ALLOCATE = "cannot allocate all claims"


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def _rv(obj: Obj) -> int:
    rv = _meta(obj).get("resourceVersion") or "0"
    return int(rv) if rv.isdigit() else 0


def _generated_for(claim: Obj, pod: Obj) -> bool:
    """kube's ``IsForPod``, widened to the pod's PodGroup (a group claim used per pod, gate off here)."""
    group = rc.pod_group_name(pod)
    for ref in _meta(claim).get("ownerReferences") or []:
        if not ref.get("controller"):
            continue
        if ref.get("uid") == _meta(pod).get("uid"):
            return True
        if group and ref.get("kind") == "PodGroup" and ref.get("name") == group:
            return True
    return False


@dataclass
class _Claim:
    """One of the pod's claims as PreFilter found it."""

    key: str
    claim: Obj
    shared: bool
    allocation: Obj | None
    #: the allocation was adopted from a group member assumed in this snapshot
    tentative: bool = False


@dataclass
class _State:
    pod_uid: str
    consumer_pod: Obj
    consumer_group: Obj | None
    claims: list[_Claim]
    taken: set[tuple[str, str, str]]
    #: node -> allocations of the unallocated claims (same order as ``pending()``)
    per_node: dict[str, list[Obj]] = field(default_factory=dict)
    #: claim keys this pod put in flight at Reserve
    reserved: list[str] = field(default_factory=list)
    #: (claim key, consumer uid) reservations this pod's PreBind wrote
    written: list[tuple[str, str]] = field(default_factory=list)
    #: DeviceClasses by name, read once per cycle
    classes: dict[str, Obj] = field(default_factory=dict)

    def pending(self) -> list[_Claim]:
        return [c for c in self.claims if c.allocation is None]

    def clone(self) -> _State:
        return self


class DynamicResources:
    name = NAME

    def __init__(self, args: dict[str, Any] | None, handle: Handle) -> None:
        self.handle = handle
        factory = handle.informer_factory
        #: without the scheduler's informers (bare frameworks in tests) pods with claims cannot be placed
        self.enabled = factory is not None
        self._inventory: Inventory | None = None
        if factory is not None:
            self.claims = factory.informer(RESOURCECLAIMS)
            self.slices = factory.informer(RESOURCESLICES)
            self.classes = factory.informer(DEVICECLASSES)
            self.slices.add_event_handler(
                self._slices_changed, lambda o, n: self._slices_changed(n), self._slices_changed
            )
            self.claims.add_event_handler(None, None, self._claim_deleted)
        #: claim key -> the claim as last written by this plugin (newer than the informer's, for a while)
        self._assumed: dict[str, Obj] = {}
        #: claim key -> allocation reserved but not written yet
        self._in_flight: dict[str, Obj] = {}
        #: claim uid -> pod uid -> node -> allocation a group member's Filter found
        self._tentative: dict[str, dict[str, dict[str, Obj]]] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def _group_claims_enabled(self) -> bool:
        gates = self.handle.gates
        return gates is None or gates.enabled(DRA_WORKLOAD_RESOURCE_CLAIMS)

    def _slices_changed(self, _obj: Obj) -> None:
        self._inventory = None

    def inventory(self) -> Inventory:
        if self._inventory is None:
            self._inventory = Inventory.from_slices(self.slices.list())
        return self._inventory

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(RESOURCECLAIM, ActionType.ADD | ActionType.UPDATE_OTHER)),
            ClusterEventWithHint(ClusterEvent(RESOURCESLICE, ActionType.ADD | ActionType.UPDATE_OTHER)),
            ClusterEventWithHint(ClusterEvent(DEVICECLASS, ActionType.ADD | ActionType.UPDATE_OTHER)),
            ClusterEventWithHint(ClusterEvent(PODGROUP, ActionType.ADD | ActionType.UPDATE)),
        ]

    # ------------------------------------------------------------------ claim views
    def claim(self, namespace: str, name: str) -> Obj | None:
        """The newest of the informer's copy and the one this plugin wrote."""
        key = f"{namespace}/{name}"
        cached = self.claims.get(key)
        assumed = self._assumed.get(key)
        if assumed is None:
            return cached
        if cached is not None and _rv(cached) >= _rv(assumed):
            del self._assumed[key]
            return cached
        return assumed

    def _claim_deleted(self, claim: Obj) -> None:
        key = f"{_meta(claim).get('namespace', '')}/{_meta(claim).get('name', '')}"
        self._assumed.pop(key, None)
        self._in_flight.pop(key, None)
        self._tentative.pop(_meta(claim).get("uid", ""), None)

    def _allocation_of(self, key: str, claim: Obj) -> Obj | None:
        alloc = (claim.get("status") or {}).get("allocation")
        return alloc if alloc is not None else self._in_flight.get(key)

    def _taken(self) -> set[tuple[str, str, str]]:
        claims = {
            _meta(c).get("namespace", "") + "/" + _meta(c).get("name", ""): c for c in self.claims.list()
        }
        claims.update(self._assumed)
        taken = allocated_devices(claims.values())
        taken |= allocated_devices({"status": {"allocation": a}} for a in self._in_flight.values())
        return taken

    def _assumed_here(self, pod_uid: str, node: str) -> bool:
        snapshot = self.handle.snapshot
        ni = snapshot.get(node) if snapshot is not None else None
        return ni is not None and any(p.uid == pod_uid for p in ni.pods)

    def _tentative_allocation(self, claim_uid: str, exclude_pod: str) -> Obj | None:
        """The allocation a group member already assumed in this snapshot would use for the claim."""
        for pod_uid, per_node in (self._tentative.get(claim_uid) or {}).items():
            if pod_uid == exclude_pod:
                continue
            for node, alloc in per_node.items():
                if self._assumed_here(pod_uid, node):
                    return alloc
        return None

    def _tentatively_taken(self, exclude_pod: str, mine: set[str]) -> set[tuple[str, str, str]]:
        """Devices the pods assumed in this snapshot (a PodGroup cycle) would take, except for ``mine`` claims."""
        out: set[tuple[str, str, str]] = set()
        for claim_uid, by_pod in self._tentative.items():
            if claim_uid in mine:
                continue
            for pod_uid, per_node in by_pod.items():
                if pod_uid == exclude_pod:
                    continue
                for node, alloc in per_node.items():
                    if self._assumed_here(pod_uid, node):
                        out |= allocated_devices([{"status": {"allocation": alloc}}])
                        break
        return out

    def _drop_tentative_of(self, pod_uid: str) -> None:
        for claim_uid in [
            u for u, by_pod in self._tentative.items() if by_pod.pop(pod_uid, None) is not None and not by_pod
        ]:
            del self._tentative[claim_uid]

    # ------------------------------------------------------------------ PreFilter
    def pre_filter(
        self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        pod = pod_info.pod
        entries = (pod.get("spec") or {}).get("resourceClaims") or []
        if not entries:
            return None, Status(Code.SKIP)
        if not self.enabled:
            return None, Status(Code.ERROR, "DynamicResources has no ResourceClaim informer")
        md = _meta(pod)
        ns = md.get("namespace", "")
        self._drop_tentative_of(md.get("uid", ""))
        group_name = rc.pod_group_name(pod)
        pg = None
        if group_name and self.handle.get_pod_group is not None:
            pg = self.handle.get_pod_group(ns, group_name)
        group_enabled = self._group_claims_enabled() and pg is not None
        found: list[_Claim] = []
        for entry in entries:
            ref = rc.claim_name_for(pod, entry, pg, group_enabled)
            if not ref.known:
                return None, Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    f'pod "{ns}/{md.get("name", "")}": {CLAIM_NOT_CREATED}',
                )
            if not ref.needed:
                continue
            claim = self.claim(ns, ref.name)
            if claim is None:
                return None, Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f'resourceclaim "{ref.name}" not found'
                )
            if _meta(claim).get("deletionTimestamp"):
                return None, Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f'resourceclaim "{ref.name}" is being deleted'
                )
            if entry.get("resourceClaimTemplateName") and not ref.shared and not _generated_for(claim, pod):
                return None, Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    f'resourceclaim "{ref.name}" was not created for pod "{md.get("name", "")}" (pod is not owner)',
                )
            key = f"{ns}/{ref.name}"
            alloc = self._allocation_of(key, claim)
            if ref.shared:
                consumer_uid = _meta(pg or {}).get("uid", "")
            else:
                consumer_uid = md.get("uid", "")
            if (
                alloc is not None
                and not rc.is_reserved_for(claim, consumer_uid)
                and not rc.can_be_reserved(claim)
            ):
                return None, Status(Code.UNSCHEDULABLE, IN_USE)
            item = _Claim(key, claim, ref.shared, alloc)
            if alloc is None:
                # a claim another pod of this PodGroup cycle (assumed in the snapshot) already got
                tentative = self._tentative_allocation(_meta(claim).get("uid", ""), md.get("uid", ""))
                if tentative is not None:
                    item.allocation, item.tentative = tentative, True
            found.append(item)
        if not found:
            return None, Status(Code.SKIP)
        taken: set[tuple[str, str, str]] = set()
        if any(c.allocation is None for c in found):
            mine = {_meta(c.claim).get("uid", "") for c in found}
            taken = self._taken() | self._tentatively_taken(md.get("uid", ""), mine)
        st = _State(
            md.get("uid", ""),
            rc.pod_consumer(pod),
            rc.pod_group_consumer(pg) if pg is not None else None,
            found,
            taken,
        )
        if taken or any(c.allocation is None for c in found):
            st.classes = self._class_map()
        state.write(STATE_KEY, st)
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    # ------------------------------------------------------------------ Filter
    def filter(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> Status | None:
        st: _State | None = state.get(STATE_KEY)
        if st is None:
            return None
        node = node_info.node or {}
        name = node_info.name
        labels = _meta(node).get("labels") or {}
        for c in st.claims:
            if c.allocation is not None and not allocation_usable_on(c.allocation, name, labels):
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NOT_AVAILABLE)
        pending = st.pending()
        if not pending:
            return None
        allocator = Allocator(self.inventory(), st.classes)
        taken = set(st.taken)
        out: list[Obj] = []
        for c in pending:
            try:
                alloc = allocator.allocate(c.claim, name, labels, taken)
            except AllocationError as e:
                return Status(Code.UNSCHEDULABLE, f"{CANNOT_ALLOCATE}: {e}")
            taken |= allocated_devices([{"status": {"allocation": alloc}}])
            out.append(alloc)
        st.per_node[name] = out
        for c, alloc in zip(pending, out, strict=True):
            uid = _meta(c.claim).get("uid", "")
            self._tentative.setdefault(uid, {}).setdefault(st.pod_uid, {})[name] = alloc
        return None

    def _class_map(self) -> dict[str, Obj]:
        return {_meta(dc).get("name", ""): dc for dc in self.classes.list()}

    # ------------------------------------------------------------------ Reserve / Unreserve
    def reserve(self, state: CycleState, pod_info: PodInfo, node_name: str) -> Status | None:
        st: _State | None = state.get(STATE_KEY)
        if st is None:
            return None
        allocs = iter(st.per_node.get(node_name, []))
        for c in st.claims:
            if c.allocation is not None and not c.tentative:
                continue
            if c.tentative:
                alloc = c.allocation
            else:
                alloc = next(allocs, None)
            if alloc is None:
                return Status(Code.ERROR, f"no allocation computed for claim {c.key} on node {node_name}")
            current = self._in_flight.get(c.key)
            if current is None and self._conflicts(c.key, alloc):
                return Status(
                    Code.UNSCHEDULABLE, f"{CANNOT_ALLOCATE}: devices of claim {c.key} were taken meanwhile"
                )
            if current is None:
                self._in_flight[c.key] = alloc
                st.reserved.append(c.key)
            elif current != alloc:
                return Status(
                    Code.UNSCHEDULABLE, f"{CANNOT_ALLOCATE}: claim {c.key} is being allocated differently"
                )
            c.allocation = alloc
        return None

    def _conflicts(self, key: str, alloc: Obj) -> bool:
        mine = allocated_devices([{"status": {"allocation": alloc}}])
        others = {k: a for k, a in self._in_flight.items() if k != key}
        held = allocated_devices({"status": {"allocation": a}} for a in others.values())
        for c in list(self.claims.list()) + list(self._assumed.values()):
            if f"{_meta(c).get('namespace', '')}/{_meta(c).get('name', '')}" != key:
                held |= allocated_devices([c])
        return bool(mine & held)

    def unreserve(self, state: CycleState, pod_info: PodInfo, node_name: str) -> None:
        st: _State | None = state.get(STATE_KEY)
        if st is None:
            return
        for key in st.reserved:
            claim = self.claim(*key.split("/", 1))
            if claim is None or (claim.get("status") or {}).get("allocation") is None:
                self._in_flight.pop(key, None)
        st.reserved.clear()
        self._drop_tentative_of(st.pod_uid)
        # Binding failed after PreBind wrote a reservation: take it back (a group's only while
        # no member of the group is scheduled), as kube's Unreserve does.
        for key, uid in st.written:
            if (
                st.consumer_group is not None
                and uid == st.consumer_group["uid"]
                and self._group_has_members(pod_info)
            ):
                continue
            task = asyncio.get_running_loop().create_task(self._take_back(key, uid))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        st.written.clear()

    def _group_has_members(self, pod_info: PodInfo) -> bool:
        getter = self.handle.pod_group_state
        group = rc.pod_group_name(pod_info.pod)
        if getter is None or not group:
            return False
        state = getter(_meta(pod_info.pod).get("namespace", ""), group)
        return state is not None and state.scheduled_count() > 0

    async def _take_back(self, key: str, uid: str) -> None:
        """Remove reservation ``uid``; a claim left reserved for nobody is deallocated too."""
        ns, name = key.split("/", 1)
        for _ in range(5):
            try:
                claim = await self.handle.client.get(RESOURCECLAIMS, name, ns)
                status = claim.get("status") or {}
                keep = [r for r in status.get("reservedFor") or [] if r.get("uid") != uid]
                if len(keep) == len(status.get("reservedFor") or []):
                    return
                new = copy.deepcopy(claim)
                new["status"] = {
                    k: v for k, v in status.items() if k not in ("reservedFor", "allocation", "devices")
                }
                if keep:
                    new["status"].update({k: v for k, v in status.items() if k in ("allocation", "devices")})
                    new["status"]["reservedFor"] = keep
                self._assumed[key] = await self.handle.client.update_status(RESOURCECLAIMS, new, ns)
                return
            except errors.StatusError as e:
                if e.code != 409:
                    return

    # ------------------------------------------------------------------ PreBind
    def pre_bind_needed(self, state: CycleState) -> bool:
        """Whether :meth:`pre_bind` has anything to do: not for a pod whose PreFilter kept no
        state (no claims), where it answers None at once (``Framework.pre_bind_has_work``)."""
        return state.get(STATE_KEY) is not None

    async def pre_bind(self, state: CycleState, pod_info: PodInfo, node_name: str) -> Status | None:
        st: _State | None = state.get(STATE_KEY)
        if st is None:
            return None
        for c in st.claims:
            lock = self._locks.setdefault(c.key, asyncio.Lock())
            async with lock:
                s = await self._write(st, c)
            if s is not None:
                return s
        self._drop_tentative_of(st.pod_uid)
        return None

    async def _write(self, st: _State, c: _Claim) -> Status | None:
        ns, name = c.key.split("/", 1)
        claim = self.claim(ns, name)
        if claim is None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f'resourceclaim "{name}" not found')
        consumer = st.consumer_group if c.shared and st.consumer_group is not None else st.consumer_pod
        status = claim.get("status") or {}
        allocated = status.get("allocation") is not None
        if allocated and rc.is_reserved_for(claim, consumer["uid"]):
            self._in_flight.pop(c.key, None)
            return None
        if not allocated and c.allocation is None:
            return Status(Code.ERROR, f"claim {c.key} has no allocation to write")
        if allocated and not rc.can_be_reserved(claim):
            return Status(Code.UNSCHEDULABLE, IN_USE)
        try:
            if not allocated:
                fins = _meta(claim).get("finalizers") or []
                if rc.DELETE_PROTECTION_FINALIZER not in fins:
                    claim = await self.handle.client.patch(
                        RESOURCECLAIMS,
                        name,
                        {
                            "metadata": {
                                "finalizers": [*fins, rc.DELETE_PROTECTION_FINALIZER],
                                "resourceVersion": _meta(claim).get("resourceVersion", ""),
                            }
                        },
                        ns,
                    )
            new = copy.deepcopy(claim)
            new_status = new.setdefault("status", {})
            if not allocated:
                new_status["allocation"] = c.allocation
            new_status["reservedFor"] = [*(new_status.get("reservedFor") or []), consumer]
            out = await self.handle.client.update_status(RESOURCECLAIMS, new, ns)
        except errors.StatusError as e:
            self._in_flight.pop(c.key, None)
            return Status(Code.ERROR, f"update ResourceClaim {c.key}: {e.message}")
        self._assumed[c.key] = out
        self._in_flight.pop(c.key, None)
        st.written.append((c.key, consumer["uid"]))
        return None


def new(args: dict[str, Any], handle: Handle) -> DynamicResources:
    return DynamicResources(args, handle)
