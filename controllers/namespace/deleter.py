"""Empties a terminating namespace (kube's ``deletion/namespaced_resources_deleter.go``).

:meth:`NamespacedResourcesDeleter.delete` is one pass: make sure the namespace shows
``Terminating``, delete every namespaced resource in it (``deletecollection`` where served, else
one by one; pods gracefully), record what is left in the namespace's status conditions, and once
nothing is left remove the ``kubernetes`` finalizer through ``namespaces/{name}/finalize`` —
after which the API server deletes the namespace. When content remains it raises
:class:`ResourcesRemaining` with kube's estimate of how long that will take (the longest pod
grace period, or 15 s for objects held by finalizers).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.interface import NAMESPACES, PODS, Client
from apiserver.meta import Clock, finalizers_of, rfc3339
from controllers.namespace import conditions
from controllers.resources import APIResource

log = logging.getLogger("gangplane.namespace")

FINALIZER = "kubernetes"
FINALIZER_ESTIMATE_SECONDS = 15


class ResourcesRemaining(Exception):  # noqa: N818 - kube's ResourcesRemainingError
    def __init__(self, estimate: float) -> None:
        super().__init__(
            f"some content remains in the namespace, estimate {int(estimate)} seconds before it is removed"
        )
        self.estimate = estimate


class NamespacedResourcesDeleter:
    def __init__(
        self,
        client: Client,
        resources: list[APIResource],
        clock: Clock | None = None,
        more: Callable[[], list[APIResource]] | None = None,
    ) -> None:
        self.client = client
        self._static = [r for r in resources if r.namespaced and r.supports("delete")]
        #: resources served now beyond the static ones (custom resources, from the CRDs)
        self.more = more
        self.clock = clock or Clock()

    @property
    def resources(self) -> list[APIResource]:
        if self.more is None:
            return self._static
        known = {(r.gvr.group, r.gvr.resource) for r in self._static}
        extra = [
            r
            for r in self.more()
            if r.namespaced and r.supports("delete") and (r.gvr.group, r.gvr.resource) not in known
        ]
        return self._static + extra

    async def delete(self, name: str) -> None:
        try:
            ns = await self.client.get(NAMESPACES, name)
        except errors.StatusError as e:
            if e.code == 404:
                return
            raise
        if not (ns.get("metadata") or {}).get("deletionTimestamp"):
            return
        ns = await self._ensure_terminating(ns)
        if ns is None or not ((ns.get("spec") or {}).get("finalizers")):
            return
        estimate = await self._delete_all_content(ns)
        if estimate > 0:
            raise ResourcesRemaining(estimate)
        await self._finalize(ns)

    async def _ensure_terminating(self, ns: Obj) -> Obj | None:
        if (ns.get("status") or {}).get("phase") == "Terminating":
            return ns
        body = dict(ns)
        body["status"] = {**(ns.get("status") or {}), "phase": "Terminating"}
        try:
            return await self.client.update_status(NAMESPACES, body)
        except errors.StatusError as e:
            if e.code == 404:
                return None
            raise

    async def _finalize(self, ns: Obj) -> None:
        """Remove our finalizer token via the ``finalize`` subresource (the rest stay, sorted)."""
        body = {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": ns["metadata"],
            "spec": {
                "finalizers": sorted(
                    {f for f in (ns.get("spec") or {}).get("finalizers") or [] if f != FINALIZER}
                )
            },
        }
        try:
            await self.client.update_subresource(NAMESPACES, ns["metadata"]["name"], "finalize", body)
        except errors.StatusError as e:
            if e.code != 404:
                raise

    async def _delete_all_content(self, ns: Obj) -> float:
        name = ns["metadata"]["name"]
        estimate = 0.0
        remaining: dict[tuple[str, str], int] = {}
        finalizers: Counter[str] = Counter()
        failures: list[str] = []
        first_error: errors.StatusError | None = None
        for res in self.resources:
            try:
                est, left, fins = await self._delete_resource(res, name)
            except errors.StatusError as e:
                failures.append(e.message)
                first_error = first_error or e
                continue
            estimate = max(estimate, est)
            if left:
                remaining[(res.gvr.resource, res.gvr.group)] = left
                finalizers.update(fins)
        now = rfc3339(self.clock.now())
        status = dict(ns.get("status") or {})
        failing = conditions.content_conditions(remaining, dict(finalizers), failures, now)
        if conditions.update_conditions(status, failing, now):
            try:
                await self.client.update_status(NAMESPACES, {**ns, "status": status})
            except errors.StatusError as e:
                log.info("could not update status conditions of namespace %s: %s", name, e.message)
        if first_error is not None:
            raise first_error
        return estimate

    async def _delete_resource(self, res: APIResource, namespace: str) -> tuple[float, int, Counter[str]]:
        """Delete everything of ``res`` in ``namespace``: (estimate, items left, finalizers left)."""
        estimate = await self._estimate_graceful_termination(res, namespace)
        if res.supports("deletecollection"):
            await self.client.delete_collection(res.gvr, namespace, propagation_policy="Background")
        else:
            for item in (await self.client.list(res.gvr, namespace)).get("items") or []:
                try:
                    await self.client.delete(
                        res.gvr, item["metadata"]["name"], namespace, propagation_policy="Background"
                    )
                except errors.StatusError as e:
                    if e.code not in (404, 409):
                        raise
        left = (await self.client.list(res.gvr, namespace)).get("items") or []
        fins: Counter[str] = Counter()
        for item in left:
            fins.update(finalizers_of(item))
        if left and estimate == 0:
            if fins:
                return FINALIZER_ESTIMATE_SECONDS, len(left), fins
            raise errors.StatusError(
                500,
                "InternalError",
                f"unexpected items still remain in namespace: {namespace} for gvr: {res.gvr}",
            )
        return estimate, len(left), fins

    async def _estimate_graceful_termination(self, res: APIResource, namespace: str) -> float:
        """The longest grace period of the namespace's non-terminal pods (kube only estimates pods)."""
        if res.gvr != PODS:
            return 0
        estimate = 0
        for pod in (await self.client.list(PODS, namespace)).get("items") or []:
            if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
            if grace is not None:
                estimate = max(estimate, int(grace))
        return estimate
