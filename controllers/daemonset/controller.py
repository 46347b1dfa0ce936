"""DaemonSet controller (kube's ``pkg/controller/daemon``): one pod per eligible node, rolling updates.

Informers: DaemonSets, Pods, Nodes and ControllerRevisions. Pod handlers enqueue the owning set and
settle expectations; node changes enqueue every set. ``sync(key)``:

1. the set (an empty selector is refused with ``SelectingAll``), its revisions — the current one
   (created, or renumbered on rollback; its hash labels pods ``controller-revision-hash``) and old
   ones — and its pods, claimed by selector and grouped by target node;
2. if expectations are satisfied and the set is not being deleted, ``manage``: per node,
   :func:`~controllers.daemonset.predicates.node_should_run` decides — create a missing pod, delete
   failed ones (``FailedDaemonPod``), extra ones, and pods on nodes they may no longer run on (a
   ``NoExecute`` taint they do not tolerate, a selector that no longer matches, a deleted node);
3. ``RollingUpdate``: within ``maxUnavailable`` delete old pods (unavailable ones first), or with
   ``maxSurge`` create the new pod beside the old one and delete the old once the new is available;
   ``OnDelete`` leaves old pods alone;
4. trims revisions beyond ``revisionHistoryLimit`` and writes the status.
Pods are created with ``generateName: <set>-`` pinned to their node by required node affinity
(``matchFields metadata.name``) and carry the DaemonSet default tolerations; the scheduler binds them.
"""

from __future__ import annotations

import asyncio
import copy
import logging

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.events import NORMAL, WARNING, EventRecorder
from apiserver.client.informer import CONTROLLER_UID, Informer, InformerFactory, controller_uid_index
from apiserver.client.interface import CONTROLLERREVISIONS, DAEMONSETS, NODES, PODS, Client, requests_per_step
from apiserver.meta import (
    Clock,
    annotations_of,
    controller_ref,
    is_being_deleted,
    key_of,
    labels_of,
    name_of,
    namespace_of,
    new_controller_ref,
    split_key,
    uid_of,
)
from apiserver.selectors import LabelSelector, label_selector_from_dict
from controllers import history, podutil, slowstart
from controllers.daemonset import predicates
from controllers.deployment.util import compute_hash, scaled_value
from controllers.expectations import Expectations
from controllers.metrics import ControllerMetrics
from controllers.ownerlookup import owners_selecting, resolve_controller_ref
from controllers.podowners import PodOwnerController
from controllers.refmanager import ControllerRefManager, recheck_deletion_timestamp

log = logging.getLogger("gangplane.daemonset")

NAME = "daemonset-controller"
API_VERSION = "apps/v1"
KIND = "DaemonSet"
REVISION_HASH = "controller-revision-hash"
TEMPLATE_GENERATION_LABEL = "pod-template-generation"
TEMPLATE_GENERATION_ANNOTATION = "deprecated.daemonset.template.generation"
BURST_REPLICAS = 250

#: node name -> (should run, should continue running), computed once per sync
Fits = dict[str, tuple[bool, bool]]


def template_generation(ds: Obj) -> int | None:
    raw = annotations_of(ds).get(TEMPLATE_GENERATION_ANNOTATION)
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


def revision_data(ds: Obj) -> Obj:
    """``getPatch``: ``{"spec":{"template":{…,"$patch":"replace"}}}``."""
    template = copy.deepcopy((ds.get("spec") or {}).get("template") or {})
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def is_pod_updated(pod: Obj, hash_: str, generation: int | None) -> bool:
    """``IsPodUpdated``: the template generation label or the revision hash matches."""
    labels = labels_of(pod)
    by_generation = generation is not None and labels.get(TEMPLATE_GENERATION_LABEL) == str(generation)
    return by_generation or (bool(hash_) and labels.get(REVISION_HASH) == hash_)


def _by_creation_and_phase(pods: list[Obj]) -> list[Obj]:
    """``podByCreationTimestampAndPhase``: scheduled before pending, then older first, then name."""
    return sorted(
        pods,
        key=lambda p: (
            not (p.get("spec") or {}).get("nodeName"),
            (p.get("metadata") or {}).get("creationTimestamp") or "",
            name_of(p),
        ),
    )


class DaemonSetsController(PodOwnerController):
    name = NAME
    workers = 2  # --concurrent-daemonset-syncs

    def __init__(
        self,
        client: Client,
        *,
        informers: InformerFactory | None = None,
        clock: Clock | None = None,
        metrics: ControllerMetrics | None = None,
        recorder: EventRecorder | None = None,
        workers: int | None = None,
    ) -> None:
        super().__init__(
            client, informers=informers, clock=clock, metrics=metrics, recorder=recorder, workers=workers
        )
        self.expectations = Expectations(self.clock)
        self.history = history.History(client)

    # ------------------------------------------------------------------ wiring
    def setup(self) -> None:
        self.sets: Informer = self.informers.informer(DAEMONSETS)
        self.pods: Informer = self.informers.informer(PODS)
        self.nodes: Informer = self.informers.informer(NODES)
        self.revisions: Informer = self.informers.informer(CONTROLLERREVISIONS)
        self.pods.add_indexer(CONTROLLER_UID, controller_uid_index)
        self.pods.add_indexer(podutil.ORPHANS, podutil.orphan_index)
        self.revisions.add_indexer(CONTROLLER_UID, controller_uid_index)
        self.sets.add_event_handler(self._on_set, lambda o, n: self._on_set(n), self._delete_set)
        self.pods.add_event_handler(self._add_pod, self._update_pod, self._delete_pod)
        self.nodes.add_event_handler(self._on_node, self._update_node, self._on_node)

    def _on_set(self, ds: Obj) -> None:
        self.enqueue(key_of(ds))

    def _delete_set(self, ds: Obj) -> None:
        self.expectations.delete(key_of(ds))
        self.enqueue(key_of(ds))

    def _on_node(self, node: Obj) -> None:
        for key in self.sets.keys():  # noqa: SIM118 - Informer.keys() is a method
            self.enqueue(key)

    def _update_node(self, old: Obj, cur: Obj) -> None:
        """``updateNode``: only label, taint and readiness changes can change where pods belong."""
        if (
            labels_of(old) != labels_of(cur)
            or (old.get("spec") or {}).get("taints") != (cur.get("spec") or {}).get("taints")
            or (old.get("spec") or {}).get("unschedulable") != (cur.get("spec") or {}).get("unschedulable")
        ):
            self._on_node(cur)

    def _resolve(self, namespace: str, ref: Obj | None) -> Obj | None:
        return resolve_controller_ref(self.sets, namespace, ref, KIND, "apps")

    def _owner_kind(self) -> str:
        return KIND

    def _sets_for_orphan(self, pod: Obj) -> list[Obj]:
        return owners_selecting(self.sets, pod)

    # ------------------------------------------------------------------ sync
    async def sync(self, key: str) -> None:
        namespace, name = split_key(key)
        ds = self.sets.get_by_name(namespace, name)
        if ds is None:
            self.expectations.delete(key)
            return
        try:
            selector = label_selector_from_dict((ds.get("spec") or {}).get("selector"))
        except ValueError as e:
            log.warning("daemonset %s has an invalid selector: %s", key, e)
            return
        if selector.empty:
            self.recorder.event(
                ds,
                WARNING,
                "SelectingAll",
                "This daemon set is selecting all pods. A non-empty selector is required.",
            )
            return
        nodes = self.nodes.list()
        fit = predicates.DaemonPodFit((ds.get("spec") or {}).get("template") or {})
        fits = {name_of(n): fit.should_run(n) for n in nodes}
        cur, old = await self._construct_history(ds, selector)
        hash_ = labels_of(cur).get(REVISION_HASH, "")
        pods = await self._claim_pods(ds, selector)
        if not self.expectations.satisfied(key) or is_being_deleted(ds):
            await self._update_status(ds, nodes, fits, pods, hash_)
            return
        await self._manage(ds, key, nodes, fits, pods, hash_)
        if self.expectations.satisfied(key):
            strategy = ((ds.get("spec") or {}).get("updateStrategy") or {}).get("type") or "RollingUpdate"
            if strategy == "RollingUpdate":
                pods = self._live_pods(ds)
                await self._rolling_update(ds, key, nodes, fits, pods, hash_)
        await self._cleanup_history(ds, old)
        await self._update_status(ds, nodes, fits, self._live_pods(ds), hash_)

    def _live_pods(self, ds: Obj) -> list[Obj]:
        return list(self.pods.by_index(CONTROLLER_UID, uid_of(ds)))

    async def _claim_pods(self, ds: Obj, selector: LabelSelector) -> list[Obj]:
        candidates = {key_of(p): p for p in self.pods.by_index(CONTROLLER_UID, uid_of(ds))}
        for p in self.pods.by_index(podutil.ORPHANS, namespace_of(ds)):
            if selector.matches(labels_of(p)):
                candidates.setdefault(key_of(p), p)
        manager = ControllerRefManager(
            self.client,
            PODS,
            ds,
            selector,
            API_VERSION,
            KIND,
            recheck_deletion_timestamp(self.client, DAEMONSETS, ds),
        )
        return await manager.claim(list(candidates.values()))

    @staticmethod
    def _by_node(pods: list[Obj]) -> dict[str, list[Obj]]:
        out: dict[str, list[Obj]] = {}
        for p in pods:
            out.setdefault(predicates.target_node(p), []).append(p)
        return out

    # ------------------------------------------------------------------ history
    async def _construct_history(self, ds: Obj, selector: LabelSelector) -> tuple[Obj, list[Obj]]:
        """``constructHistory``: the current revision (created if missing) and the old ones."""
        owned = list(self.revisions.by_index(CONTROLLER_UID, uid_of(ds)))
        orphans = [
            r
            for r in self.revisions.list(namespace_of(ds))
            if controller_ref(r) is None and selector.matches(labels_of(r))
        ]
        if orphans:
            manager = ControllerRefManager(
                self.client,
                CONTROLLERREVISIONS,
                ds,
                selector,
                API_VERSION,
                KIND,
                recheck_deletion_timestamp(self.client, DAEMONSETS, ds),
            )
            owned += await manager.claim(orphans)
        data = revision_data(ds)
        current = [r for r in owned if r.get("data") == data]
        old = [r for r in owned if r.get("data") != data]
        number = max((history.revision_number(r) for r in old), default=0) + 1
        if not current:
            cur = await self._snapshot(ds, data, number)
        else:
            cur = sorted(current, key=history.revision_number)[-1]
            for dup in current:
                if dup is not cur:
                    await self.history.delete(dup)
            if history.revision_number(cur) < number:
                cur = await self.history.update_revision_number(cur, number)
        return cur, old

    async def _snapshot(self, ds: Obj, data: Obj, number: int) -> Obj:
        collision = (ds.get("status") or {}).get("collisionCount")
        h = compute_hash((ds.get("spec") or {}).get("template") or {}, collision)
        labels = dict(
            (((ds.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels") or {}
        )
        labels[REVISION_HASH] = h
        rev: Obj = {
            "apiVersion": "apps/v1",
            "kind": "ControllerRevision",
            "metadata": {
                "name": history.revision_name(name_of(ds), h),
                "namespace": namespace_of(ds),
                "labels": labels,
                "ownerReferences": [new_controller_ref(ds, API_VERSION, KIND)],
            },
            "data": data,
            "revision": number,
        }
        if annotations_of(ds):
            rev["metadata"]["annotations"] = dict(annotations_of(ds))
        try:
            return await self.client.create(CONTROLLERREVISIONS, rev, namespace_of(ds))
        except errors.StatusError as e:
            if not errors.is_already_exists(e):
                raise
        existing = await self.client.get(CONTROLLERREVISIONS, rev["metadata"]["name"], namespace_of(ds))
        if existing.get("data") == data:
            return existing
        status = {**(ds.get("status") or {}), "collisionCount": int(collision or 0) + 1}
        await self.client.update_status(DAEMONSETS, {**ds, "status": status}, namespace_of(ds))
        raise errors.conflict("controllerrevisions", rev["metadata"]["name"], "apps", "hash collision")

    async def _cleanup_history(self, ds: Obj, old: list[Obj]) -> None:
        """``cleanupHistory``: drop the oldest revisions no live pod uses beyond revisionHistoryLimit."""
        limit = int((ds.get("spec") or {}).get("revisionHistoryLimit") or 10)
        if len(old) <= limit:
            return
        live = {labels_of(p).get(REVISION_HASH) for p in self._live_pods(ds)}
        removable = [
            r for r in sorted(old, key=history.revision_number) if labels_of(r).get(REVISION_HASH) not in live
        ]
        for r in removable[: len(old) - limit]:
            await self.history.delete(r)

    # ------------------------------------------------------------------ manage
    async def _manage(
        self, ds: Obj, key: str, nodes: list[Obj], fits: Fits, pods: list[Obj], hash_: str
    ) -> None:
        """``manage``: which nodes need a pod, which pods must go."""
        surge = self._allows_surge(ds)
        by_node = self._by_node(pods)
        create_on: list[str] = []
        delete: list[Obj] = []
        node_names = set()
        for node in nodes:
            node_name = name_of(node)
            node_names.add(node_name)
            should_run, should_continue = fits[node_name]
            on_node = by_node.get(node_name, [])
            if should_run and not on_node:
                create_on.append(node_name)
                continue
            if not on_node:
                continue
            if not should_continue:
                delete += [p for p in on_node if not is_being_deleted(p)]
                continue
            running: list[Obj] = []
            for p in on_node:
                if is_being_deleted(p):
                    continue
                phase = podutil.phase_of(p)
                if phase == "Failed":
                    self.recorder.event(
                        ds,
                        WARNING,
                        "FailedDaemonPod",
                        f"Found failed daemon pod {namespace_of(p)}/{name_of(p)} on node {node_name}, will try to kill it",
                    )
                    delete.append(p)
                elif phase == "Succeeded":
                    delete.append(p)
                else:
                    running.append(p)
            if not surge:
                if len(running) > 1:
                    delete += _by_creation_and_phase(running)[1:]
                continue
            if len(running) <= 1:
                if not running and should_run:
                    create_on.append(node_name)
                continue
            oldest_new: Obj | None = None
            oldest_old: Obj | None = None
            for p in _by_creation_and_phase(running):
                if labels_of(p).get(REVISION_HASH) == hash_:
                    if oldest_new is None:
                        oldest_new = p
                        continue
                elif oldest_old is None:
                    oldest_old = p
                    continue
                delete.append(p)
            if oldest_new is not None and oldest_old is not None:
                mrs = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
                if not podutil.is_pod_ready(oldest_old) or podutil.is_pod_available(
                    oldest_new, mrs, self.clock.now()
                ):
                    delete.append(oldest_old)
        for node_name, on_node in by_node.items():
            if node_name not in node_names:
                delete += [p for p in on_node if not is_being_deleted(p)]
        await self._sync_nodes(ds, key, delete, create_on, hash_)

    def _allows_surge(self, ds: Obj) -> bool:
        us = (ds.get("spec") or {}).get("updateStrategy") or {}
        if (us.get("type") or "RollingUpdate") != "RollingUpdate":
            return False
        return scaled_value((us.get("rollingUpdate") or {}).get("maxSurge") or 0, 1, True) > 0

    async def _sync_nodes(
        self, ds: Obj, key: str, delete: list[Obj], create_on: list[str], hash_: str
    ) -> None:
        """``syncNodes``: create (slow start, at most 250) and delete, tracked by expectations."""
        create_on = create_on[:BURST_REPLICAS]
        delete = delete[:BURST_REPLICAS]
        self.expectations.set_expectations(key, len(create_on), [key_of(p) for p in delete])
        template = (ds.get("spec") or {}).get("template") or {}
        generation = template_generation(ds)
        pending = list(create_on)

        async def create_one() -> None:
            node_name = pending.pop(0)
            pod_template = predicates.new_pod_template(template, node_name)
            labels = pod_template.setdefault("metadata", {}).setdefault("labels", {})
            if generation is not None:
                labels[TEMPLATE_GENERATION_LABEL] = str(generation)
            labels[REVISION_HASH] = hash_
            pod = podutil.pod_from_template(ds, pod_template, API_VERSION, KIND)
            try:
                created = await self.client.create(PODS, pod, namespace_of(ds), read_only=True)
            except errors.StatusError as e:
                if e.code == 403 and "being terminated" in e.message:
                    return
                self.recorder.event(ds, WARNING, "FailedCreate", f"Error creating: {e.message}")
                raise
            self.recorder.event(ds, NORMAL, "SuccessfulCreate", f"Created pod: {name_of(created)}")

        errs: list[Exception] = []
        if create_on:
            done, err = await slowstart.slow_start_batch(
                len(create_on), lambda _: create_one(), in_place=requests_per_step(self.client)
            )
            for _ in range(len(create_on) - done):
                self.expectations.creation_observed(key)
            if err is not None:
                errs.append(err)

        async def delete_one(pod: Obj) -> None:
            try:
                await self.client.delete(PODS, name_of(pod), namespace_of(pod))
            except errors.StatusError as e:
                self.expectations.deletion_observed(key, key_of(pod))
                if errors.is_not_found(e):
                    return
                self.recorder.event(ds, WARNING, "FailedDelete", f"Error deleting: {e.message}")
                raise
            self.recorder.event(ds, NORMAL, "SuccessfulDelete", f"Deleted pod: {name_of(pod)}")

        results = await asyncio.gather(*(delete_one(p) for p in delete), return_exceptions=True)
        errs += [r for r in results if isinstance(r, Exception)]
        if errs:
            raise errs[0]

    # ------------------------------------------------------------------ rolling update
    def _desired_counts(self, ds: Obj, nodes: list[Obj], fits: Fits) -> tuple[int, int, int]:
        """``updatedDesiredNodeCounts``: (maxSurge, maxUnavailable, desiredNumberScheduled)."""
        desired = sum(1 for n in nodes if fits[name_of(n)][0])
        ru = (((ds.get("spec") or {}).get("updateStrategy") or {}).get("rollingUpdate")) or {}
        max_unavailable = scaled_value(
            ru.get("maxUnavailable") if ru.get("maxUnavailable") is not None else 1, desired, True
        )
        max_surge = scaled_value(ru.get("maxSurge") or 0, desired, True)
        if max_unavailable == 0 and max_surge == 0:
            max_unavailable = 1
        return max_surge, max_unavailable, desired

    @staticmethod
    def _find_updated(
        pods: list[Obj], hash_: str, generation: int | None
    ) -> tuple[Obj | None, Obj | None, bool]:
        """``findUpdatedPodsOnNode``: (new pod, old pod, at most one of each)."""
        new: Obj | None = None
        old: Obj | None = None
        for p in pods:
            if is_being_deleted(p):
                continue
            if is_pod_updated(p, hash_, generation):
                if new is not None:
                    return None, None, False
                new = p
            else:
                if old is not None:
                    return None, None, False
                old = p
        return new, old, True

    async def _rolling_update(
        self, ds: Obj, key: str, nodes: list[Obj], fits: Fits, pods: list[Obj], hash_: str
    ) -> None:
        generation = template_generation(ds)
        by_node = self._by_node(pods)
        max_surge, max_unavailable, desired = self._desired_counts(ds, nodes, fits)
        mrs = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
        now = self.clock.now()
        node_by_name = {name_of(n): n for n in nodes}

        def available(p: Obj) -> bool:
            return podutil.is_pod_available(p, mrs, now)

        if max_surge == 0:
            unavailable = 0
            replace: list[Obj] = []
            candidates: list[Obj] = []
            for node_name in sorted(by_node):
                new, old, ok = self._find_updated(by_node[node_name], hash_, generation)
                if not ok or (new is None) == (old is None):
                    unavailable += 1
                elif new is not None:
                    if not available(new):
                        unavailable += 1
                elif old is not None:
                    if not available(old):
                        replace.append(old)
                    elif unavailable < max_unavailable:
                        candidates.append(old)
            remaining = max(0, min(max_unavailable - unavailable, len(candidates)))
            await self._sync_nodes(ds, key, replace + candidates[:remaining], [], hash_)
            return
        delete: list[Obj] = []
        should_not_run: list[Obj] = []
        candidate_nodes: list[str] = []
        allowed_nodes: list[str] = []
        surged = 0
        n_available = 0
        for node_name in sorted(by_node):
            new, old, ok = self._find_updated(by_node[node_name], hash_, generation)
            if not ok:
                surged += 1
                continue
            if old is not None:
                n_available += 1 if available(old) else 0
            elif new is not None:
                n_available += 1 if available(new) else 0
            if old is None:
                continue
            node = node_by_name.get(node_name)
            should_run = node is not None and fits[node_name][0]
            if new is None:
                if not available(old):
                    if not should_run:
                        delete.append(old)
                        continue
                    allowed_nodes.append(node_name)
                else:
                    if not should_run:
                        should_not_run.append(old)
                        continue
                    if surged >= max_surge:
                        continue
                    candidate_nodes.append(node_name)
            else:
                if not available(new):
                    surged += 1
                    continue
                delete.append(old)
        deletable = n_available - desired
        if deletable > 0:
            delete += [p for p in should_not_run[:deletable] if not is_being_deleted(p)]
        remaining_surge = max(0, min(max_surge - surged, len(candidate_nodes)))
        await self._sync_nodes(ds, key, delete, allowed_nodes + candidate_nodes[:remaining_surge], hash_)

    # ------------------------------------------------------------------ status
    async def _update_status(
        self, ds: Obj, nodes: list[Obj], fits: Fits, pods: list[Obj], hash_: str
    ) -> None:
        """``updateDaemonSetStatus``."""
        by_node = self._by_node(pods)
        mrs = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
        now = self.clock.now()
        generation = template_generation(ds)
        desired = current = misscheduled = ready = available = updated = 0
        for node in nodes:
            should_run, _ = fits[name_of(node)]
            on_node = by_node.get(name_of(node), [])
            if should_run:
                desired += 1
                if not on_node:
                    continue
                current += 1
                pod = _by_creation_and_phase(on_node)[0]
                if podutil.is_pod_ready(pod):
                    ready += 1
                    if podutil.is_pod_available(pod, mrs, now):
                        available += 1
                if is_pod_updated(pod, hash_, generation):
                    updated += 1
            elif on_node:
                misscheduled += 1
        old = ds.get("status") or {}
        status = dict(old)
        status.update(
            currentNumberScheduled=current,
            numberMisscheduled=misscheduled,
            desiredNumberScheduled=desired,
            numberReady=ready,
            observedGeneration=int(ds["metadata"].get("generation") or 0),
            updatedNumberScheduled=updated,
            numberAvailable=available,
            numberUnavailable=desired - available,
        )
        if status == old:
            return
        try:
            await self.client.update_status(DAEMONSETS, {**ds, "status": status}, namespace_of(ds))
        except errors.StatusError as e:
            if not errors.is_not_found(e):
                raise
        if mrs > 0 and ready != available:
            self.enqueue_after(key_of(ds), mrs)
