"""The StatefulSet controller's writer: pod and claim API calls, and the events kube records for them.

Mirrors ``stateful_pod_control.go``: claims are created before their pod, the claim ownerReferences
follow ``persistentVolumeClaimRetentionPolicy``, every pod write records ``Successful<Verb>`` /
``Failed<Verb>`` on the StatefulSet with kube's exact messages. Reads come from the claim cache;
claims this object just created are remembered for the rest of the call so a lagging cache does
not hide them.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.events import NORMAL, WARNING, EventRecorder
from apiserver.client.informer import Informer
from apiserver.client.interface import PODS, PVCS, Client
from apiserver.meta import name_of, namespace_of, uid_of
from controllers.statefulset import utils

log = logging.getLogger("gangplane.statefulset")

_CONFLICT_RETRIES = 4  # retry.DefaultBackoff.Steps


def _err_text(err: BaseException) -> str:
    return err.message if isinstance(err, errors.StatusError) else str(err)


class StatefulPodControl:
    def __init__(self, client: Client, recorder: EventRecorder, claims: Informer) -> None:
        self.client = client
        self.recorder = recorder
        self.claims = claims

    # ------------------------------------------------------------------ events
    def record_pod_event(self, verb: str, sts: Obj, pod: Obj, err: BaseException | None) -> None:
        if err is None:
            self.recorder.event(
                sts,
                NORMAL,
                f"Successful{verb.title()}",
                f"{verb.lower()} Pod {name_of(pod)} in StatefulSet {name_of(sts)} successful",
            )
        else:
            self.recorder.event(
                sts,
                WARNING,
                f"Failed{verb.title()}",
                f"{verb.lower()} Pod {name_of(pod)} in StatefulSet {name_of(sts)} failed error: {_err_text(err)}",
            )

    def record_claim_event(
        self, verb: str, sts: Obj, pod: Obj, claim: Obj, err: BaseException | None
    ) -> None:
        if err is None:
            self.recorder.event(
                sts,
                NORMAL,
                f"Successful{verb.title()}",
                f"{verb.lower()} Claim {name_of(claim)} Pod {name_of(pod)} in StatefulSet {name_of(sts)} success",
            )
        else:
            self.recorder.event(
                sts,
                WARNING,
                f"Failed{verb.title()}",
                f"{verb.lower()} Claim {name_of(claim)} for Pod {name_of(pod)} in StatefulSet {name_of(sts)} "
                f"failed error: {_err_text(err)}",
            )

    # ------------------------------------------------------------------ pods
    async def create_pod(
        self,
        sts: Obj,
        pod: Obj,
        decorate: Callable[[Obj], None] | None = None,
        claims: bool = True,
        handoff: bool = False,
    ) -> Obj:
        """``CreateStatefulPod``: claims first, then the pod, then the claims' retention refs.

        ``claims`` False: the caller knows the set has no claim templates, where both claim
        steps loop over nothing; they are skipped (two coroutines less per pod).
        ``handoff``: ``pod`` is a private body the caller built for this create (a stamped
        copy of its revision's prototype, no claim volumes) and will neither read nor modify
        again, so the client may write it as it is instead of copying it first
        (:meth:`Client.create`). The failure Event then names the pod by the name read before.
        """
        known: dict[str, Obj] = {}
        try:
            if claims:
                known = await self._create_claims(sts, pod)
        except errors.StatusError as e:
            self.record_pod_event("create", sts, pod, e)
            raise
        if decorate is not None:
            decorate(pod)
        # what the failure Event reads of the pod, read before a handed-off body is the server's
        named = {"metadata": {"name": name_of(pod)}} if handoff else pod
        try:
            created = await self.client.create(PODS, pod, namespace_of(sts), handoff=handoff, read_only=True)
        except errors.StatusError as e:
            if not errors.is_already_exists(e):
                self.record_pod_event("create", sts, named, e)
            raise
        try:
            if claims:
                await self.update_claims_for_retention(sts, created, known)
        except errors.StatusError as e:
            self.record_pod_event("update", sts, created, e)
            raise
        self.record_pod_event("create", sts, created, None)
        return created

    async def delete_pod(self, sts: Obj, pod: Obj) -> None:
        """Delete the pod (gracefully); one already gone (our cache lagged) is not an error."""
        try:
            pre = {"uid": uid_of(pod)} if uid_of(pod) else None
            await self.client.delete(PODS, name_of(pod), namespace_of(pod), preconditions=pre)
        except errors.StatusError as e:
            if e.code == 404:
                return
            self.record_pod_event("delete", sts, pod, e)
            raise
        self.record_pod_event("delete", sts, pod, None)

    async def update_pod(self, sts: Obj, pod: Obj) -> None:
        """``UpdateStatefulPod``: fix identity, storage and claim retention; retry on conflict."""
        pod = copy.deepcopy(pod)
        attempted = False
        last: errors.StatusError | None = None
        for _ in range(_CONFLICT_RETRIES):
            consistent = True
            if not utils.identity_matches(sts, pod):
                utils.update_identity(sts, pod)
                consistent = False
            if not utils.storage_matches(sts, pod):
                utils.update_storage(sts, pod)
                consistent = False
                try:
                    await self._create_claims(sts, pod)
                except errors.StatusError as e:
                    self.record_pod_event("update", sts, pod, e)
                    raise
            if not self.claims_match_retention(sts, pod):
                try:
                    await self.update_claims_for_retention(sts, pod)
                except errors.StatusError as e:
                    self.record_pod_event("update", sts, pod, e)
                    raise
                consistent = False
            if consistent:
                return
            attempted = True
            try:
                await self.client.update(PODS, pod, namespace_of(pod))
                last = None
                break
            except errors.StatusError as e:
                last = e
                if not errors.is_conflict(e):
                    break
                try:
                    pod = await self.client.get(PODS, name_of(pod), namespace_of(pod))
                except errors.StatusError:
                    break
        if attempted:
            self.record_pod_event("update", sts, pod, last)
        if last is not None:
            raise last

    # ------------------------------------------------------------------ claims
    def _claim(self, sts: Obj, name: str, known: dict[str, Obj] | None = None) -> Obj | None:
        if known is not None and name in known:
            return known[name]
        return self.claims.get_by_name(namespace_of(sts), name)

    async def _create_claims(self, sts: Obj, pod: Obj) -> dict[str, Obj]:
        """``createPersistentVolumeClaims``: create every missing claim; a terminating one is an error."""
        known: dict[str, Obj] = {}
        failures: list[errors.StatusError] = []
        for _, claim in utils.claims_for(sts, utils.ordinal_of(pod)):
            existing = self._claim(sts, name_of(claim))
            if existing is None:
                try:
                    known[name_of(claim)] = await self.client.create(PVCS, claim, namespace_of(sts))
                    self.record_claim_event("create", sts, pod, claim, None)
                except errors.StatusError as e:
                    if errors.is_already_exists(e):
                        continue  # our cache lags; the claim is there, which is all we want
                    self.record_claim_event("create", sts, pod, claim, e)
                    failures.append(
                        errors.StatusError(
                            e.code, e.reason, f"failed to create PVC {name_of(claim)}: {e.message}"
                        )
                    )
            elif (existing.get("metadata") or {}).get("deletionTimestamp"):
                failures.append(errors.StatusError(409, "Conflict", f"pvc {name_of(claim)} is being deleted"))
            else:
                known[name_of(claim)] = existing
        if failures:
            raise failures[0]
        return known

    def claims_in_place(self, sts: Obj, pod: Obj) -> bool:
        """Every claim of the pod exists (per the cache) and is not being deleted."""
        for _, claim in utils.claims_for(sts, utils.ordinal_of(pod)):
            existing = self._claim(sts, name_of(claim))
            if existing is None or (existing.get("metadata") or {}).get("deletionTimestamp"):
                return False
        return True

    async def create_missing_claims(self, sts: Obj, pod: Obj) -> None:
        """``createMissingPersistentVolumeClaims`` for a Pending pod whose claim went away."""
        known = await self._create_claims(sts, pod)
        try:
            await self.update_claims_for_retention(sts, pod, known)
        except errors.StatusError as e:
            self.record_pod_event("update", sts, pod, e)
            raise

    def claims_match_retention(self, sts: Obj, pod: Obj) -> bool:
        """``ClaimsMatchRetentionPolicy`` against the claim cache (a missing claim matches)."""
        ordinal = utils.ordinal_of(pod)
        for tmpl in utils.claim_templates(sts):
            claim = self._claim(sts, utils.claim_name(sts, name_of(tmpl), ordinal))
            if claim is not None and not utils.claim_owner_up_to_date(claim, sts, pod):
                return False
        return True

    async def update_claims_for_retention(
        self, sts: Obj, pod: Obj, known: dict[str, Obj] | None = None
    ) -> None:
        """``UpdatePodClaimForRetentionPolicy``: rewrite the claims' refs where they are out of date."""
        ordinal = utils.ordinal_of(pod)
        for tmpl in utils.claim_templates(sts):
            cname = utils.claim_name(sts, name_of(tmpl), ordinal)
            claim = self._claim(sts, cname, known)
            if claim is None:
                continue  # picked up on a later sync
            if utils.has_unexpected_controller(claim, sts, pod):
                self.recorder.event(
                    sts,
                    WARNING,
                    "ConflictingController",
                    f"PersistentVolumeClaim {cname} has a conflicting OwnerReference that acts as a manging controller, "
                    "the retention policy is ignored for this claim",
                )
            if utils.claim_owner_up_to_date(claim, sts, pod):
                continue
            refs = utils.claim_owner_refs(claim, sts, pod)
            patch = {
                "metadata": {
                    "resourceVersion": claim["metadata"].get("resourceVersion"),
                    "ownerReferences": refs or None,
                }
            }
            try:
                await self.client.patch(PVCS, cname, patch, namespace_of(sts))
            except errors.StatusError as e:
                raise errors.StatusError(
                    e.code,
                    e.reason,
                    f"could not update claim {cname} for delete policy ownerRefs: {e.message}",
                ) from e

    def pod_claim_is_stale(self, sts: Obj, pod: Obj) -> bool:
        """``PodClaimIsStale``: with whenScaled=Delete, a claim still owned by a previous pod blocks creation."""
        if utils.retention_policy(sts)[1] == utils.RETAIN:
            return False
        for _, claim in utils.claims_for(sts, utils.ordinal_of(pod)):
            existing = self._claim(sts, name_of(claim))
            if existing is not None and utils.has_stale_owner_ref(existing, pod, "v1", "Pod"):
                return True
        return False
