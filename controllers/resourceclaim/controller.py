"""The ResourceClaim controller (kube-controller-manager's ``resource-claim-controller``, with KEP-5729).

Three kinds of keys, one sync each:

* ``pod/<ns>/<name>`` — once the PodGroup the pod names (if any) is known, for every
  ``spec.resourceClaims`` entry with a ``resourceClaimTemplateName`` that is *not* shared with
  the pod's PodGroup, make sure one
  ResourceClaim generated from the template exists, owned by the pod (controller reference),
  annotated ``resource.kubernetes.io/pod-claim-name``, named ``<pod>-<claim>-<random>``; record
  every template claim in ``pod.status.resourceClaimStatuses`` — for a shared entry that is the
  PodGroup's claim. Nothing is created for a pod that is terminal or being deleted.
* ``podgroup/<ns>/<name>`` (``DRAWorkloadResourceClaims``) — exactly one claim per template
  entry of ``spec.resourceClaims`` per PodGroup, owned by the PodGroup, recorded in
  ``podgroup.status.resourceClaimStatuses``; then the group's pods are synced, so their status
  points at the shared claim. A claim named by ``resourceClaimName`` is used, never created.
* ``claim/<ns>/<name>`` — drop ``status.reservedFor`` entries whose consumer is gone (a pod
  deleted, replaced or terminal; a PodGroup deleted); once nothing is reserved, deallocate
  (clear ``status.allocation`` and ``status.devices``) and remove the scheduler's
  ``resource.kubernetes.io/delete-protection`` finalizer. A claim generated for a pod that is done
  is then deleted; PodGroup claims and pre-existing claims stay (the garbage collector removes
  generated ones with their owner; a claim referenced by name is never deleted).

gangplane's ``StatefulSetWorkloadClaimRelease`` (KEP-6277's open Beta question on the
scale-to-zero lifecycle of PodGroup-backed claims, docs/kep-6277-beta.md): off, the KEP's Alpha
behaviour — a StatefulSet's PodGroup keeps its reservation, and so its devices, while it has no
pods. On, the reservation of a PodGroup the StatefulSet controller manages counts as gone once no
member pod is left that is not done (scaled to zero): the claim is deallocated as above, the claim
object and the PodGroup stay (same names, same UIDs), and the next scale-up allocates afresh
through the scheduler. Other PodGroups (a Job's, a user's) are never released this way.

With the gate off here, PodGroups are ignored and every pod claim is pod-scoped; PodGroup entries
already in ``reservedFor`` are left alone, so running pods keep their devices (KEP-6277
Upgrade/Downgrade).

A claim this controller created is found by the next sync even before the claim informer has
delivered it (kube's ``claimCache``, a ``MutationCache`` over the informer): a sync may run again
before the claim's watch event arrives and must not generate a second claim; the informer's view
supersedes the remembered claim once it has reached the claim's resourceVersion.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.api.wellknown import STATEFULSET_CONTROLLER_MANAGER, WORKLOAD_MANAGED_BY_ANNOTATION
from apiserver.client.informer import InformerFactory, index_reads
from apiserver.client.interface import PODGROUPS, PODS, RESOURCECLAIMS, RESOURCECLAIMTEMPLATES, Client
from apiserver.meta import Clock, is_being_deleted, split_key
from controllers.base import Controller, SyncFailed
from controllers.metrics import ControllerMetrics
from resourceclaims import claims as rc

log = logging.getLogger("gangplane.resourceclaims")


NAME = "resource-claim-controller"
CLAIMS_BY_OWNER = "owner-uid"
PODS_BY_GROUP = (
    "resourceclaim-pod-group"  # not "pod-group": the shared pod informer has that one (podgroupprotection)
)
PODS_BY_CLAIM = "claim-name"
POD_GROUP_API_VERSION = "scheduling.k8s.io/v1beta1"


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def _ns_name(obj: Obj) -> str:
    md = _meta(obj)
    return f"{md.get('namespace', '')}/{md.get('name', '')}"


def is_done(pod: Obj) -> bool:
    """Terminal, or deleted before it ever ran (kube's ``podutil.IsPodTerminal`` + not-yet-scheduled deletes)."""
    phase = (pod.get("status") or {}).get("phase")
    if phase in ("Succeeded", "Failed"):
        return True
    return is_being_deleted(pod) and not (pod.get("spec") or {}).get("nodeName")


def _owner_uids(claim: Obj) -> list[str]:
    return [r.get("uid", "") for r in _meta(claim).get("ownerReferences") or [] if r.get("controller")]


@index_reads("spec.schedulingGroup")
def _pod_group_key(pod: Obj) -> list[str]:
    group = rc.pod_group_name(pod)
    return [f"{_meta(pod).get('namespace', '')}/{group}"] if group else []


class ResourceClaimController(Controller):
    """See the module docstring."""

    name = NAME
    workers = 4

    def __init__(
        self,
        client: Client,
        *,
        group_claims: bool,
        release_idle_groups: bool = False,
        informers: InformerFactory | None = None,
        clock: Clock | None = None,
        metrics: ControllerMetrics | None = None,
    ) -> None:
        """``group_claims``: ``DRAWorkloadResourceClaims`` is on for this component and PodGroups are served."""
        self.group_claims = group_claims
        #: gangplane's StatefulSetWorkloadClaimRelease (module docstring)
        self.release_idle_groups = release_idle_groups
        #: claims this controller created, by ``ns/name``, until the claim informer reaches their
        #: resourceVersion (module docstring; :meth:`_forget_delivered`)
        self._created: dict[str, Obj] = {}
        super().__init__(client, informers=informers, clock=clock, metrics=metrics)

    def setup(self) -> None:
        self.pods = self.informers.informer(PODS)
        self.claims = self.informers.informer(RESOURCECLAIMS)
        self.templates = self.informers.informer(RESOURCECLAIMTEMPLATES)
        self.claims.add_indexer(CLAIMS_BY_OWNER, _owner_uids)
        self.pods.add_indexer(PODS_BY_GROUP, _pod_group_key)
        self.pods.add_indexer(PODS_BY_CLAIM, rc.pod_claim_keys)
        self.pods.add_event_handler(self._on_pod, lambda old, new: self._on_pod(new), self._on_pod_deleted)
        self.claims.add_event_handler(
            self._on_claim, lambda old, new: self._on_claim(new), self._on_claim_deleted
        )
        self.templates.add_event_handler(self._on_template, None, None)
        self.pod_groups = None
        if self.group_claims:
            self.pod_groups = self.informers.informer(PODGROUPS)
            self.pod_groups.add_event_handler(
                self._on_group, lambda old, new: self._on_group(new), self._on_group_deleted
            )

    # ------------------------------------------------------------------ handlers (enqueue only)
    def _on_pod(self, pod: Obj) -> None:
        if (pod.get("spec") or {}).get("resourceClaims"):
            self.enqueue(("pod", _ns_name(pod)))
        for key in rc.pod_claim_keys(pod):
            self.enqueue(("claim", key))

    def _on_pod_deleted(self, pod: Obj) -> None:
        for key in rc.pod_claim_keys(pod):
            self.enqueue(("claim", key))
        for claim in self.claims.by_index(CLAIMS_BY_OWNER, _meta(pod).get("uid", "")):
            self.enqueue(("claim", _ns_name(claim)))

    def _on_claim(self, claim: Obj) -> None:
        self.enqueue(("claim", _ns_name(claim)))

    def _on_claim_deleted(self, claim: Obj) -> None:
        # an owner may have to generate it again
        for uid in _owner_uids(claim):
            for pod in self.pods.list(_meta(claim).get("namespace", "")):
                if _meta(pod).get("uid") == uid:
                    self.enqueue(("pod", _ns_name(pod)))
            if self.pod_groups is not None:
                for pg in self.pod_groups.list(_meta(claim).get("namespace", "")):
                    if _meta(pg).get("uid") == uid:
                        self.enqueue(("podgroup", _ns_name(pg)))

    def _on_template(self, tpl: Obj) -> None:
        ns = _meta(tpl).get("namespace", "")
        name = _meta(tpl).get("name", "")
        for pod in self.pods.list(ns):
            if any(
                e.get("resourceClaimTemplateName") == name
                for e in (pod.get("spec") or {}).get("resourceClaims") or []
            ):
                self.enqueue(("pod", _ns_name(pod)))
        if self.pod_groups is not None:
            for pg in self.pod_groups.list(ns):
                self.enqueue(("podgroup", _ns_name(pg)))

    def _on_group(self, pg: Obj) -> None:
        self.enqueue(("podgroup", _ns_name(pg)))
        for claim in self.claims.by_index(CLAIMS_BY_OWNER, _meta(pg).get("uid", "")):
            self.enqueue(("claim", _ns_name(claim)))

    def _on_group_deleted(self, pg: Obj) -> None:
        ns = _meta(pg).get("namespace", "")
        for claim in self.claims.list(ns):
            if rc.is_reserved_for(claim, _meta(pg).get("uid", "")):
                self.enqueue(("claim", _ns_name(claim)))

    async def on_synced(self) -> None:
        for pod in self.pods.list():
            self._on_pod(pod)
        for claim in self.claims.list():
            self._on_claim(claim)
        if self.pod_groups is not None:
            for pg in self.pod_groups.list():
                self._on_group(pg)

    # ------------------------------------------------------------------ sync
    async def sync(self, key: tuple[str, str]) -> None:
        kind, ns_name = key
        if kind == "pod":
            await self._sync_pod(ns_name)
        elif kind == "podgroup":
            await self._sync_pod_group(ns_name)
        else:
            await self._sync_claim(ns_name)

    def _owned_claim(self, owner_uid: str, pod_claim: str) -> Obj | None:
        if self._created:
            self._forget_delivered()
        for claim in self.claims.by_index(CLAIMS_BY_OWNER, owner_uid):
            if (_meta(claim).get("annotations") or {}).get(rc.POD_CLAIM_NAME_ANNOTATION) == pod_claim:
                return claim
        for claim in self._created.values():  # created here, not delivered yet
            if (
                owner_uid in _owner_uids(claim)
                and (_meta(claim).get("annotations") or {}).get(rc.POD_CLAIM_NAME_ANNOTATION) == pod_claim
            ):
                return claim
        return None

    def _forget_delivered(self) -> None:
        """Drop the claims created here that the claim informer has reached.

        Once the informer's resourceVersion is at or past a claim's, every event up to the
        claim's creation is in its cache: the cache holds the claim (or a newer state of it), or
        the claim is already gone — deleted before the informer saw it, say, when a re-list
        skipped it. Either way the informer's view supersedes the remembered claim (kube's
        ``MutationCache`` with integer resourceVersions). Done on every lookup while the map is
        not empty, so it holds only claims still in flight.
        """
        reached = int(self.claims.resource_version or 0)
        for key in [
            k for k, c in self._created.items() if int(_meta(c).get("resourceVersion") or 0) <= reached
        ]:
            del self._created[key]

    async def _generate(self, owner: Obj, api_version: str, kind: str, entry: Obj) -> Obj:
        """Create the claim for ``entry`` from its template, owned by ``owner``."""
        md = _meta(owner)
        ns = md.get("namespace", "")
        tpl_name = entry.get("resourceClaimTemplateName") or ""
        tpl = self.templates.get_by_name(ns, tpl_name)
        if tpl is None:
            try:
                tpl = await self.client.get(RESOURCECLAIMTEMPLATES, tpl_name, ns)
            except errors.StatusError as e:
                if e.code == 404:
                    raise SyncFailed(f"resource claim template {tpl_name!r}: {e.message}") from e
                raise
        tspec = tpl.get("spec") or {}
        tmeta = tspec.get("metadata") or {}
        annotations = {
            **(tmeta.get("annotations") or {}),
            rc.POD_CLAIM_NAME_ANNOTATION: entry.get("name", ""),
        }
        claim: Obj = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {
                "generateName": rc.generate_name(md.get("name", ""), entry.get("name", "")),
                "namespace": ns,
                "annotations": annotations,
                "ownerReferences": [
                    {
                        "apiVersion": api_version,
                        "kind": kind,
                        "name": md.get("name", ""),
                        "uid": md.get("uid", ""),
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "spec": copy.deepcopy(tspec.get("spec") or {}),
        }
        if tmeta.get("labels"):
            claim["metadata"]["labels"] = dict(tmeta["labels"])
        created = await self.client.create(RESOURCECLAIMS, claim, ns)
        self._created[_ns_name(created)] = created
        return created

    def _pod_group_of(self, pod: Obj) -> Obj | None:
        group = rc.pod_group_name(pod)
        if not group or self.pod_groups is None:
            return None
        return self.pod_groups.get_by_name(_meta(pod).get("namespace", ""), group)

    async def _sync_pod(self, key: str) -> None:
        pod = self.pods.get(key)
        if pod is None or is_done(pod) or is_being_deleted(pod):
            return
        ns, name = split_key(key)
        group = self._pod_group_of(pod)
        if group is None and self.group_claims and rc.pod_group_name(pod):
            # Whether an entry is the group's or the pod's depends on a PodGroup not seen yet: its
            # add event syncs this pod again (the scheduler does not place the pod before it either).
            return
        statuses: list[Obj] = []
        for entry in (pod.get("spec") or {}).get("resourceClaims") or []:
            if not entry.get("resourceClaimTemplateName"):
                continue
            pod_claim = entry.get("name", "")
            if self.group_claims and rc.group_claim_entry(entry, group) is not None:
                found, claim_name = rc.status_claim_name(
                    ((group or {}).get("status") or {}).get("resourceClaimStatuses"), pod_claim
                )
                if not found:
                    continue  # the PodGroup's sync will record it, then requeue this pod
                statuses.append(
                    {"name": pod_claim, "resourceClaimName": claim_name}
                    if claim_name
                    else {"name": pod_claim}
                )
                continue
            claim = self._owned_claim(_meta(pod).get("uid", ""), pod_claim)
            if claim is None:
                found, claim_name = rc.status_claim_name(
                    (pod.get("status") or {}).get("resourceClaimStatuses"), pod_claim
                )
                if found and claim_name:
                    # recorded but not in our cache yet (or deleted): trust a fresh read
                    try:
                        claim = await self.client.get(RESOURCECLAIMS, claim_name, ns)
                    except errors.StatusError as e:
                        if e.code != 404:
                            raise
                if claim is None or not rc.owned_by(claim, _meta(pod).get("uid", "")):
                    claim = await self._generate(pod, "v1", "Pod", entry)
            statuses.append({"name": pod_claim, "resourceClaimName": _meta(claim)["name"]})
        current = (pod.get("status") or {}).get("resourceClaimStatuses") or []
        if _merge_statuses(current, statuses) != current:
            await self._patch_status(PODS, name, ns, _merge_statuses(current, statuses))

    async def _patch_status(self, gvr: Any, name: str, ns: str, statuses: list[Obj]) -> None:
        try:
            await self.client.patch(
                gvr, name, {"status": {"resourceClaimStatuses": statuses}}, ns, subresource="status"
            )
        except errors.StatusError as e:
            if e.code != 404:
                raise

    async def _sync_pod_group(self, key: str) -> None:
        if self.pod_groups is None:
            return
        pg = self.pod_groups.get(key)
        if pg is None or is_being_deleted(pg):
            return
        ns, name = split_key(key)
        statuses: list[Obj] = []
        uid = _meta(pg).get("uid", "")
        for entry in (pg.get("spec") or {}).get("resourceClaims") or []:
            if not entry.get("resourceClaimTemplateName"):
                continue
            claim = self._owned_claim(uid, entry.get("name", ""))
            if claim is None:
                claim = await self._generate(pg, POD_GROUP_API_VERSION, "PodGroup", entry)
            statuses.append({"name": entry.get("name", ""), "resourceClaimName": _meta(claim)["name"]})
        current = (pg.get("status") or {}).get("resourceClaimStatuses") or []
        if _merge_statuses(current, statuses) != current:
            await self._patch_status(PODGROUPS, name, ns, _merge_statuses(current, statuses))
        for pod in self.pods.by_index(PODS_BY_GROUP, key):
            self.enqueue(("pod", _ns_name(pod)))

    def _consumer_alive(self, ns: str, ref: Obj) -> bool:
        resource = ref.get("resource")
        if resource == "pods" and not ref.get("apiGroup"):
            pod = self.pods.get_by_name(ns, ref.get("name", ""))
            return pod is not None and _meta(pod).get("uid") == ref.get("uid") and not is_done(pod)
        if resource == rc.PODGROUPS_RESOURCE and ref.get("apiGroup") == rc.SCHEDULING_GROUP:
            if self.pod_groups is None:
                return True  # not ours to judge with the gate off (KEP-6277 Upgrade/Downgrade)
            pg = self.pod_groups.get_by_name(ns, ref.get("name", ""))
            if pg is None or _meta(pg).get("uid") != ref.get("uid"):
                return False
            return not (self.release_idle_groups and self._idle_statefulset_group(pg))
        return True  # an unknown consumer kind: leave it to whoever reserved it

    def _idle_statefulset_group(self, pg: Obj) -> bool:
        """A StatefulSet-managed PodGroup with no member pod left that is not done."""
        annotations = _meta(pg).get("annotations") or {}
        if annotations.get(WORKLOAD_MANAGED_BY_ANNOTATION) != STATEFULSET_CONTROLLER_MANAGER:
            return False
        return all(is_done(p) for p in self.pods.by_index(PODS_BY_GROUP, _ns_name(pg)))

    async def _sync_claim(self, key: str) -> None:
        claim = self.claims.get(key)
        if claim is None:
            return
        ns, name = split_key(key)
        status = claim.get("status") or {}
        reserved = status.get("reservedFor") or []
        keep = [r for r in reserved if self._consumer_alive(ns, r)]
        deallocated = False
        if keep != reserved or (not keep and status.get("allocation") is not None):
            new = copy.deepcopy(claim)
            new_status = new.setdefault("status", {})
            new_status["reservedFor"] = keep or None
            if not keep:
                new_status.pop("allocation", None)
                new_status.pop("devices", None)
                deallocated = status.get("allocation") is not None
            new["status"] = {k: v for k, v in new_status.items() if v is not None}
            try:
                claim = await self.client.update_status(RESOURCECLAIMS, new, ns)
            except errors.StatusError as e:
                if e.code == 404:
                    return
                raise
        if keep or (claim.get("status") or {}).get("allocation") is not None:
            return
        # The scheduler adds the finalizer just before it writes the allocation: only a claim this
        # sync deallocated, or one being deleted, may lose it (else that write would race us).
        fins = _meta(claim).get("finalizers") or []
        if rc.DELETE_PROTECTION_FINALIZER in fins and (deallocated or is_being_deleted(claim)):
            patch = {
                "metadata": {
                    "finalizers": [f for f in fins if f != rc.DELETE_PROTECTION_FINALIZER] or None,
                    "resourceVersion": _meta(claim).get("resourceVersion", ""),
                }
            }
            try:
                claim = await self.client.patch(RESOURCECLAIMS, name, patch, ns)
            except errors.StatusError as e:
                if e.code == 404:
                    return
                raise
        await self._delete_if_owner_done(claim, ns, name)

    async def _delete_if_owner_done(self, claim: Obj, ns: str, name: str) -> None:
        """A claim generated for a pod goes once the pod is done (kube deletes it then, not at pod GC)."""
        if is_being_deleted(claim):
            return
        for ref in _meta(claim).get("ownerReferences") or []:
            if not ref.get("controller") or ref.get("kind") != "Pod" or ref.get("apiVersion") != "v1":
                continue
            pod = self.pods.get_by_name(ns, ref.get("name", ""))
            if pod is not None and _meta(pod).get("uid") == ref.get("uid") and not is_done(pod):
                return
            try:
                await self.client.delete(
                    RESOURCECLAIMS, name, ns, preconditions={"uid": _meta(claim).get("uid", "")}
                )
            except errors.StatusError as e:
                if e.code not in (404, 409):
                    raise
            return


def _merge_statuses(current: list[Obj], wanted: list[Obj]) -> list[Obj]:
    """``wanted`` entries replace same-named ones; other entries (e.g. set by others) are kept."""
    names = {w["name"] for w in wanted}
    return [c for c in current if c.get("name") not in names] + wanted
