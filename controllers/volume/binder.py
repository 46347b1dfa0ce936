"""A minimal PersistentVolume binder (the binding half of kube's ``persistentvolume-binder-controller``).

gangplane has no storage, so the choice made here is: **bind to a real PersistentVolume
object**, provisioning one when none fits, rather than marking claims Bound with a name that
points nowhere. That keeps ``kubectl get pv``, ``spec.volumeName`` and the PV's ``claimRef``
consistent, the way a dynamically provisioned cluster looks:

* a Pending claim binds to the smallest Available PV that fits (same storage class and volume
  mode, every requested access mode, enough capacity, no claimRef); else a PV named
  ``pvc-<claim uid>`` is created with the claim's size, modes and class, reclaim policy
  ``Delete`` and a ``hostPath`` under ``/var/lib/gangplane/volumes`` (nothing is mounted);
* binding writes the PV's ``claimRef`` and ``Bound`` phase first, then the claim's
  ``spec.volumeName``, the ``pv.kubernetes.io/bind-completed`` / ``bound-by-controller``
  annotations and its ``Bound`` status (with capacity and access modes), like kube;
* when a bound claim is gone, its PV is deleted (reclaim policy ``Delete``) or marked ``Released``.
"""

from __future__ import annotations

import logging

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.informer import Informer
from apiserver.client.interface import PVCS, PVS
from apiserver.meta import get_path, is_being_deleted, key_of, name_of, namespace_of, split_key, uid_of
from apiserver.quantity import parse_quantity
from controllers.base import Controller

log = logging.getLogger("gangplane.pvbinder")

NAME = "persistentvolume-binder-controller"
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
PROVISIONER = "gangplane.io/simulated"
VOLUME_ROOT = "/var/lib/gangplane/volumes"


def requested_storage(claim: Obj) -> int:
    raw = get_path(claim, "spec.resources.requests.storage")
    return int(parse_quantity(raw)) if raw is not None else 0


def volume_fits(pv: Obj, claim: Obj) -> bool:
    """An Available, unclaimed PV with the claim's class and mode, its access modes and enough room."""
    spec = pv.get("spec") or {}
    if spec.get("claimRef") or is_being_deleted(pv):
        return False
    if (pv.get("status") or {}).get("phase") not in (None, "", "Available", "Pending"):
        return False
    cspec = claim.get("spec") or {}
    if (spec.get("storageClassName") or "") != (cspec.get("storageClassName") or ""):
        return False
    if (spec.get("volumeMode") or "Filesystem") != (cspec.get("volumeMode") or "Filesystem"):
        return False
    if not set(cspec.get("accessModes") or []) <= set(spec.get("accessModes") or []):
        return False
    cap = get_path(pv, "spec.capacity.storage")
    return cap is not None and parse_quantity(cap) >= requested_storage(claim)


def claim_ref(claim: Obj) -> Obj:
    md = claim["metadata"]
    return {
        "kind": "PersistentVolumeClaim",
        "apiVersion": "v1",
        "namespace": md["namespace"],
        "name": md["name"],
        "uid": md["uid"],
        "resourceVersion": md.get("resourceVersion", ""),
    }


def provisioned_volume(claim: Obj) -> Obj:
    spec = claim.get("spec") or {}
    name = f"pvc-{uid_of(claim)}"
    pv_spec: Obj = {
        "capacity": {"storage": get_path(claim, "spec.resources.requests.storage", "1Gi")},
        "accessModes": list(spec.get("accessModes") or ["ReadWriteOnce"]),
        "persistentVolumeReclaimPolicy": "Delete",
        "volumeMode": spec.get("volumeMode") or "Filesystem",
        "hostPath": {"path": f"{VOLUME_ROOT}/{name}", "type": ""},
        "claimRef": claim_ref(claim),
    }
    if spec.get("storageClassName"):
        pv_spec["storageClassName"] = spec["storageClassName"]
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "annotations": {PROVISIONED_BY: PROVISIONER}},
        "spec": pv_spec,
    }


class PVBinder(Controller):
    name = NAME
    workers = 4

    def setup(self) -> None:
        self.claims: Informer = self.informers.informer(PVCS)
        self.volumes: Informer = self.informers.informer(PVS)
        self.claims.add_event_handler(
            self._on_claim, lambda old, new: self._on_claim(new), self._on_claim_gone
        )
        self.volumes.add_event_handler(self._on_volume, lambda old, new: self._on_volume(new))

    def _on_claim(self, claim: Obj) -> None:
        if (claim.get("status") or {}).get("phase") != "Bound":
            self.enqueue(("claim", key_of(claim)))

    def _on_claim_gone(self, claim: Obj) -> None:
        vol = get_path(claim, "spec.volumeName")
        if vol:
            self.enqueue(("volume", vol))

    def _on_volume(self, pv: Obj) -> None:
        if get_path(pv, "spec.claimRef"):
            self.enqueue(("volume", name_of(pv)))

    async def sync(self, key: tuple[str, str]) -> None:
        kind, name = key
        if kind == "claim":
            await self._sync_claim(name)
        else:
            await self._sync_volume(name)

    async def _sync_claim(self, key: str) -> None:
        ns, name = split_key(key)
        claim = self.claims.get_by_name(ns, name)
        if claim is None or is_being_deleted(claim) or (claim.get("status") or {}).get("phase") == "Bound":
            return
        wanted = get_path(claim, "spec.volumeName")
        if wanted:
            pv = self.volumes.get_by_name("", wanted)
            if pv is None:
                return  # pre-bound to a volume that does not exist (yet): stays Pending, like kube
        else:
            pv = self._best_fit(claim)
            if pv is None:
                pv = await self._provision(claim)
        await self._bind(claim, pv)

    def _best_fit(self, claim: Obj) -> Obj | None:
        fits = [pv for pv in self.volumes.list() if volume_fits(pv, claim)]
        if not fits:
            return None
        return min(fits, key=lambda pv: (parse_quantity(get_path(pv, "spec.capacity.storage")), name_of(pv)))

    async def _provision(self, claim: Obj) -> Obj:
        try:
            return await self.client.create(PVS, provisioned_volume(claim))
        except errors.StatusError as e:
            if not errors.is_already_exists(e):
                raise
            return await self.client.get(PVS, f"pvc-{uid_of(claim)}")

    async def _bind(self, claim: Obj, pv: Obj) -> None:
        ref = get_path(pv, "spec.claimRef")
        if ref and ref.get("uid") and ref.get("uid") != uid_of(claim):
            return  # someone else's volume
        if not ref or not ref.get("uid"):
            body = {**pv, "spec": {**(pv.get("spec") or {}), "claimRef": claim_ref(claim)}}
            md = dict(body.get("metadata") or {})
            md["annotations"] = {**(md.get("annotations") or {}), BOUND_BY_CONTROLLER: "yes"}
            body["metadata"] = md
            pv = await self.client.update(PVS, body)
        if (pv.get("status") or {}).get("phase") != "Bound":
            pv = await self.client.update_status(
                PVS, {**pv, "status": {**(pv.get("status") or {}), "phase": "Bound"}}
            )
        md = dict(claim["metadata"])
        md["annotations"] = {
            **(md.get("annotations") or {}),
            BIND_COMPLETED: "yes",
            BOUND_BY_CONTROLLER: "yes",
        }
        body = {**claim, "metadata": md, "spec": {**(claim.get("spec") or {}), "volumeName": name_of(pv)}}
        claim = await self.client.update(PVCS, body, namespace_of(claim))
        status = {
            **(claim.get("status") or {}),
            "phase": "Bound",
            "accessModes": list(get_path(pv, "spec.accessModes", []) or []),
            "capacity": dict(get_path(pv, "spec.capacity", {}) or {}),
        }
        await self.client.update_status(PVCS, {**claim, "status": status}, namespace_of(claim))

    async def _sync_volume(self, name: str) -> None:
        pv = self.volumes.get_by_name("", name)
        if pv is None or is_being_deleted(pv):
            return
        ref = get_path(pv, "spec.claimRef") or {}
        if not ref.get("uid"):
            return
        claim = self.claims.get_by_name(ref.get("namespace", ""), ref.get("name", ""))
        if claim is not None and uid_of(claim) == ref.get("uid"):
            return
        try:
            live = await self.client.get(PVCS, ref.get("name", ""), ref.get("namespace", ""))
            if uid_of(live) == ref.get("uid"):
                return  # our cache lags behind
        except errors.StatusError as e:
            if e.code != 404:
                raise
        if get_path(pv, "spec.persistentVolumeReclaimPolicy") == "Delete":
            try:
                await self.client.delete(PVS, name)
            except errors.StatusError as e:
                if e.code != 404:
                    raise
            return
        if (pv.get("status") or {}).get("phase") != "Released":
            await self.client.update_status(
                PVS, {**pv, "status": {**(pv.get("status") or {}), "phase": "Released"}}
            )
