"""A LeaderWorkerSet-like parent controller on a CRD kind, written with the official Python client.

It is what KEP-6277's "Composition by Higher-Level Controllers" has in mind: for each
``LeaderWorkerSet`` (``spec.replicas`` groups of ``spec.size`` pods) it owns

* one Workload named like the parent, with a CompositePodGroupTemplate ``group`` (gang of its
  groups) holding the PodGroupTemplate ``workers`` (gang of ``size`` pods);
* one CompositePodGroup ``<name>-<i>`` per group, instantiating that template;
* one StatefulSet ``<name>-<i>`` per group, with ``spec.scheduling`` (gang), a controller
  ownerReference to the parent and the KEP-6089 downward-mapping annotations
  ``scheduling.k8s.io/group-template-name: workers`` and
  ``scheduling.k8s.io/parent-compositepodgroup: <name>-<i>``, so the StatefulSet controller
  creates no Workload and attaches its PodGroup to the group's CompositePodGroup.

Everything it creates carries a controller ownerReference to the parent, so deleting the parent
cascades through the garbage collector. ``sync`` is level-triggered (create what is missing,
report ready groups) and runs, in one worker, for every watch event of a parent or of a StatefulSet
it owns; the typed models of the 37 client know no ``spec.scheduling``, so every object goes through
``CustomObjectsApi``.
"""

from __future__ import annotations

import queue
import threading
from typing import Any

from kubernetes import client, config, watch

from apiserver.api.types import Obj

PLURAL = "leaderworkersets"
GROUP_TEMPLATE = "group"
POD_TEMPLATE = "workers"
GROUP_TEMPLATE_NAME_ANNOTATION = "scheduling.k8s.io/group-template-name"
PARENT_COMPOSITE_POD_GROUP_ANNOTATION = "scheduling.k8s.io/parent-compositepodgroup"


def crd(group: str) -> Obj:
    """The parent kind's CRD: ``replicas`` (groups) and ``size`` (pods per group), with scale."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{PLURAL}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {
                "plural": PLURAL,
                "singular": "leaderworkerset",
                "kind": "LeaderWorkerSet",
                "shortNames": ["lws"],
            },
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": [
                        {"name": "Groups", "type": "integer", "jsonPath": ".spec.replicas"},
                        {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                        {"name": "Ready", "type": "integer", "jsonPath": ".status.readyGroups"},
                    ],
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "required": ["size"],
                                    "properties": {
                                        "replicas": {"type": "integer", "minimum": 0, "default": 1},
                                        "size": {"type": "integer", "minimum": 1},
                                        "image": {"type": "string", "default": "registry.k8s.io/pause:3.10"},
                                    },
                                },
                                "status": {
                                    "type": "object",
                                    "properties": {"readyGroups": {"type": "integer"}},
                                },
                            },
                        }
                    },
                }
            ],
        },
    }


def _owner(parent: Obj) -> Obj:
    md = parent["metadata"]
    return {
        "apiVersion": parent["apiVersion"],
        "kind": parent["kind"],
        "name": md["name"],
        "uid": md["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


class ParentController:
    """Reconciles every LeaderWorkerSet of one namespace (see module docstring)."""

    def __init__(self, kubeconfig: str, namespace: str, group: str) -> None:
        self.api_client = config.new_client_from_config(config_file=kubeconfig)
        self.custom = client.CustomObjectsApi(self.api_client)
        self.ns = namespace
        self.group = group
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._watches: list[watch.Watch] = []
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()
        self.errors: list[BaseException] = []

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Watch parents and their StatefulSets (each event queues the parent), sync in one worker."""
        self._threads = [
            threading.Thread(target=self._watch_parents, name="lws-watch-parents", daemon=True),
            threading.Thread(target=self._watch_children, name="lws-watch-children", daemon=True),
            threading.Thread(target=self._worker, name="lws-worker", daemon=True),
        ]
        for t in self._threads:
            t.start()

    def stop(self) -> None:
        self._stop.set()
        self._queue.put(None)
        for w in self._watches:
            w.stop()
        for t in self._threads:
            t.join(10)
        self.api_client.close()

    def _stream(self, fn: Any, *args: Any, **kw: Any) -> Any:
        w = watch.Watch()
        self._watches.append(w)
        while not self._stop.is_set():
            try:
                yield from w.stream(fn, *args, timeout_seconds=5, **kw)
            except Exception as e:  # the watch is re-established, as an informer would
                if not self._stop.is_set():
                    self.errors.append(e)

    def _watch_parents(self) -> None:
        for event in self._stream(
            self.custom.list_namespaced_custom_object, self.group, "v1", self.ns, PLURAL
        ):
            self._queue.put(event["object"]["metadata"]["name"])

    def _watch_children(self) -> None:
        for event in self._stream(
            self.custom.list_namespaced_custom_object,
            "apps",
            "v1",
            self.ns,
            "statefulsets",
            label_selector="leaderworkerset",
        ):
            for ref in event["object"]["metadata"].get("ownerReferences") or ():
                if ref.get("controller") and ref.get("kind") == "LeaderWorkerSet":
                    self._queue.put(ref["name"])

    def _worker(self) -> None:
        while True:
            name = self._queue.get()
            if name is None or self._stop.is_set():
                return
            parent = self._get(self.group, "v1", PLURAL, name)
            if parent is None:
                continue
            try:
                self.sync(parent)
            except Exception as e:  # retried on the next event of the parent or its children
                self.errors.append(e)

    # ------------------------------------------------------------------ sync
    def sync(self, parent: Obj) -> None:
        if parent["metadata"].get("deletionTimestamp"):
            return
        name = parent["metadata"]["name"]
        groups = int(parent["spec"].get("replicas", 1))
        size = int(parent["spec"]["size"])
        self._ensure("scheduling.k8s.io", "v1beta1", "workloads", self._workload(parent, groups, size))
        for i in range(groups):
            self._ensure("scheduling.k8s.io", "v1alpha3", "compositepodgroups", self._composite(parent, i))
            self._ensure("apps", "v1", "statefulsets", self._statefulset(parent, i, size))
        ready = 0
        for i in range(groups):
            sts = self._get("apps", "v1", "statefulsets", f"{name}-{i}")
            if sts is not None and (sts.get("status") or {}).get("readyReplicas", 0) == size:
                ready += 1
        if (parent.get("status") or {}).get("readyGroups") != ready:
            self.custom.patch_namespaced_custom_object_status(
                self.group, "v1", self.ns, PLURAL, name, {"status": {"readyGroups": ready}}
            )

    def _get(self, group: str, version: str, plural: str, name: str) -> Obj | None:
        try:
            return self.custom.get_namespaced_custom_object(group, version, self.ns, plural, name)
        except client.ApiException as e:
            if e.status == 404:
                return None
            raise

    def _ensure(self, group: str, version: str, plural: str, body: Obj) -> None:
        if self._get(group, version, plural, body["metadata"]["name"]) is not None:
            return
        try:
            self.custom.create_namespaced_custom_object(group, version, self.ns, plural, body)
        except client.ApiException as e:
            if e.status != 409:
                raise

    def _workload(self, parent: Obj, groups: int, size: int) -> Obj:
        name = parent["metadata"]["name"]
        return {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "Workload",
            "metadata": {"name": name, "ownerReferences": [_owner(parent)]},
            "spec": {
                "controllerRef": {"apiGroup": self.group, "kind": "LeaderWorkerSet", "name": name},
                "compositePodGroupTemplates": [
                    {
                        "name": GROUP_TEMPLATE,
                        "schedulingPolicy": {"gang": {"minGroupCount": 1}},
                        "podGroupTemplates": [
                            {"name": POD_TEMPLATE, "schedulingPolicy": {"gang": {"minCount": size}}}
                        ],
                    }
                ],
            },
        }

    def _composite(self, parent: Obj, i: int) -> Obj:
        name = parent["metadata"]["name"]
        return {
            "apiVersion": "scheduling.k8s.io/v1alpha3",
            "kind": "CompositePodGroup",
            "metadata": {"name": f"{name}-{i}", "ownerReferences": [_owner(parent)]},
            "spec": {
                "workloadRef": {"workloadName": name, "templateName": GROUP_TEMPLATE},
                "schedulingPolicy": {"gang": {"minGroupCount": 1}},
            },
        }

    def _statefulset(self, parent: Obj, i: int, size: int) -> Obj:
        name = f"{parent['metadata']['name']}-{i}"
        labels = {"app": name, "leaderworkerset": parent["metadata"]["name"]}
        return {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {
                "name": name,
                "labels": labels,
                "ownerReferences": [_owner(parent)],
                "annotations": {
                    GROUP_TEMPLATE_NAME_ANNOTATION: POD_TEMPLATE,
                    PARENT_COMPOSITE_POD_GROUP_ANNOTATION: name,
                },
            },
            "spec": {
                "replicas": size,
                "serviceName": name,
                "podManagementPolicy": "Parallel",
                "selector": {"matchLabels": {"app": name}},
                "scheduling": {"schedulingPolicy": {"gang": {}}},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "containers": [
                            {
                                "name": "worker",
                                "image": parent["spec"].get("image", "registry.k8s.io/pause:3.10"),
                                "resources": {"requests": {"cpu": "100m"}},
                            }
                        ]
                    },
                },
            },
        }
