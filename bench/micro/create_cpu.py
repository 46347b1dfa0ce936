"""The API server's CPU per create, without the rest of the plane (a script, not a pytest test):

    python -m bench.micro.create_cpu [--n 3000] [--rounds 3] [--profile KIND]

Builds the API server as ``gangplane serve`` does (``build_api``: every built-in admission plugin,
ObjectMeta validation, field validation, managedFields) and calls ``GenericStore.create`` N times
in a row for each kind, printing the CPU time per create (``time.process_time``):

* ``pod``: a StatefulSet pod of one template (its own name, ``pod-name`` label and hostname; one
  owner reference per three pods, as a gang of three);
* ``gangpod``: a pod as the StatefulSet controller sends it in ``gangs-1000x3`` (session 15,
  captured from the plane): a ``generateName`` beside its name, two owner references (the set
  and its PodGroup), the set's ``subdomain`` and the gang's ``schedulingGroup``, the template's
  defaults already filled in; three pods per set, so every third pod names new owners;
* ``event``: an Event as the scheduler's recorder writes it (its own name, message, uid);
* ``workload``: a Workload as the StatefulSet controller makes one per set, each the first
  object of its owner here (as a PodGroup is, owned by its new Workload): the owner memo of the
  managedFields entry never hits, the template of the reference does; its PodGroup template is
  named after the set, as the controller names it (before session 11 this script used one
  name for all, which hid that no two Workloads shared a shape);
* ``podgroup``: the PodGroup of gang set ``i``, owned by the set and by its Workload (two
  references, both naming owners met for the first time);
* ``statefulset``: gang StatefulSet ``gang-{i}`` of 3 as the bench driver creates it in
  ``gangs-1000x3`` (``bench.workloads.statefulsets.statefulset``; each in its own namespace);
* ``gangworkload``, ``ganggroup``, ``gangrevision``: the Workload, PodGroup and ControllerRevision
  of gang set ``i`` as the StatefulSet controller sends them in ``gangs-1000x3`` (session 15,
  captured from the plane): the Workload and PodGroup carry the controller's ``managed-by``
  *annotation* (the ``workload``/``podgroup`` kinds have a label there), the PodGroup's Workload
  reference has ``blockOwnerDeletion``; the revision's ``data`` is the set's template patch.

Since session 14 all three owned kinds (pod, workload, podgroup) are answered from the template
of their shape with the owners' uids (and a Workload's template name) left out
(:mod:`apiserver.patch.ownedentry`).

Compare two trees by alternating them: ``python bench/micro/create_cpu.py --pairs BASE NEW``
runs this file with each tree on ``PYTHONPATH`` in turn, ``--rounds`` times, and prints the
minimum per kind of each and their ratio (the script imports only the API server, so any tree
with ``apiserver.server.instance.build_api`` will do). Numbers go in the docs, never into
assertions.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import time
from collections.abc import Callable
from typing import Any

SORT = "tottime"
KINDS = (
    "pod",
    "gangpod",
    "event",
    "workload",
    "podgroup",
    "statefulset",
    "gangworkload",
    "ganggroup",
    "gangrevision",
)


def pod(i: int) -> dict[str, Any]:
    """Pod ``i`` of a gang StatefulSet ``w{i // 3}``, as its controller creates it."""
    s = i // 3
    name = f"w{s}-{i % 3}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {
                "app": "w",
                "apps.kubernetes.io/pod-index": str(i % 3),
                "controller-revision-hash": f"w{s}-5d8f7c9b4",
                "statefulset.kubernetes.io/pod-name": name,
            },
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "StatefulSet",
                    "name": f"w{s}",
                    "uid": f"00000000-0000-4000-8000-{s:012d}",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "schedulerName": "none",
            "hostname": name,
            "subdomain": "w",
            "containers": [
                {
                    "name": "c",
                    "image": "registry.k8s.io/pause:3.9",
                    "ports": [{"containerPort": 80, "name": "web"}],
                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                }
            ],
        },
    }


def _template_spec() -> dict[str, Any]:
    """The bench's gang template's pod spec with kube's defaults filled in, as the StatefulSet
    controller's pods and revisions carry it (a fresh copy each call)."""
    return {
        "containers": [
            {
                "name": "c",
                "image": "registry.k8s.io/pause:3.10",
                "resources": {"requests": {"cpu": "100m"}},
                "imagePullPolicy": "IfNotPresent",
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
            }
        ],
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": "Always",
        "securityContext": {},
        "terminationGracePeriodSeconds": 30,
        "schedulerName": "default-scheduler",
    }


def gangpod(i: int) -> dict[str, Any]:
    """Pod ``i`` of gang StatefulSet ``gang-{i // 3}``, as its controller creates it."""
    s = i // 3
    name = f"gang-{s}-{i % 3}"
    group = f"gang-{s}-64c68d44d4-gang-{s}-77f6bff56c"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "generateName": f"gang-{s}-",
            "namespace": "default",
            "labels": {
                "app": f"gang-{s}",
                "statefulset.kubernetes.io/pod-name": name,
                "apps.kubernetes.io/pod-index": str(i % 3),
                "controller-revision-hash": f"gang-{s}-67b4fddcb8",
            },
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "StatefulSet",
                    "name": f"gang-{s}",
                    "uid": f"00000000-0000-4000-8000-{s:012d}",
                    "controller": True,
                    "blockOwnerDeletion": True,
                },
                {
                    "apiVersion": "scheduling.k8s.io/v1beta1",
                    "kind": "PodGroup",
                    "name": group,
                    "uid": f"00000000-0000-4000-8003-{s:012d}",
                },
            ],
            "name": name,
        },
        "spec": {
            **_template_spec(),
            "hostname": name,
            "subdomain": f"gang-{s}",
            "schedulingGroup": {"podGroupName": group},
        },
    }


def event(i: int) -> dict[str, Any]:
    """An Event as the scheduler's recorder writes one about pod ``i``."""
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"p{i}.18{i:010d}", "namespace": "default"},
        "involvedObject": {
            "kind": "Pod",
            "namespace": "default",
            "name": f"p{i}",
            "uid": f"00000000-0000-4000-9000-{i:012d}",
            "apiVersion": "v1",
            "resourceVersion": str(1000 + i),
        },
        "reason": "Scheduled",
        "message": f"Successfully assigned default/p{i} to n-{i % 50}",
        "type": "Normal",
        "source": {"component": "default-scheduler"},
        "firstTimestamp": "2026-12-05T00:00:00Z",
        "lastTimestamp": "2026-12-05T00:00:00Z",
        "count": 1,
        "reportingComponent": "default-scheduler",
        "reportingInstance": "default-scheduler",
    }


def _set_owner(name: str, i: int) -> dict[str, Any]:
    """The controller reference to StatefulSet ``name`` (uid numbered ``i``)."""
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "name": name,
        "uid": f"00000000-0000-4000-8001-{i:012d}",
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _workload_body(set_name: str, name: str, metadata: dict[str, Any]) -> dict[str, Any]:
    """Set ``set_name``'s Workload ``name``: its metadata (after name and namespace) ``metadata``,
    one gang template named after the set, as the controller names it."""
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {"name": name, "namespace": "default", **metadata},
        "spec": {
            "controllerRef": {"apiGroup": "apps", "kind": "StatefulSet", "name": set_name},
            "podGroupTemplates": [{"name": set_name, "schedulingPolicy": {"gang": {"minCount": 3}}}],
        },
    }


def _pod_group_body(set_name: str, workload: str, name: str, metadata: dict[str, Any]) -> dict[str, Any]:
    """Set ``set_name``'s PodGroup ``name`` of Workload ``workload`` (metadata after name and
    namespace: ``metadata``)."""
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default", **metadata},
        "spec": {
            "workloadRef": {"workloadName": workload, "templateName": set_name},
            "schedulingPolicy": {"gang": {"minCount": 3}},
        },
    }


def _workload_ref(i: int, name: str, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "Workload",
        "name": name,
        "uid": f"00000000-0000-4000-8002-{i:012d}",
        **extra,
    }


def workload(i: int) -> dict[str, Any]:
    """The Workload of gang StatefulSet ``w{i}`` (named after the set, as its template: no two
    Workloads share a shape)."""
    return _workload_body(f"w{i}", f"w{i}", {"ownerReferences": [_set_owner(f"w{i}", i)]})


def podgroup(i: int) -> dict[str, Any]:
    """The PodGroup of gang StatefulSet ``w{i}``, as the controller makes it from its Workload."""
    return _pod_group_body(
        f"w{i}",
        f"w{i}",
        f"w{i}-w{i}",
        {
            "labels": {"scheduling.k8s.io/managed-by": "statefulset-controller"},
            "ownerReferences": [_set_owner(f"w{i}", i), _workload_ref(i, f"w{i}")],
        },
    )


def statefulset(i: int) -> dict[str, Any]:
    """Gang StatefulSet ``gang-{i}`` of 3, the bench driver's body (its namespace set here)."""
    from bench.workloads.statefulsets import statefulset as sts

    body = sts(f"gang-{i}", 3, True, "")
    body["metadata"]["namespace"] = "default"
    return body


_MANAGED_BY = {"scheduling.k8s.io/managed-by": "statefulset-controller"}


def gangworkload(i: int) -> dict[str, Any]:
    """The Workload of gang set ``gang-{i}`` as the controller sends it in ``gangs-1000x3``."""
    return _workload_body(
        f"gang-{i}",
        f"gang-{i}-d5bb687c4",
        {"ownerReferences": [_set_owner(f"gang-{i}", i)], "annotations": dict(_MANAGED_BY)},
    )


def ganggroup(i: int) -> dict[str, Any]:
    """The PodGroup of gang set ``gang-{i}`` as the controller sends it in ``gangs-1000x3``."""
    workload = f"gang-{i}-d5bb687c4"
    return _pod_group_body(
        f"gang-{i}",
        workload,
        f"{workload}-gang-{i}-5446884ddf",
        {
            "ownerReferences": [
                _set_owner(f"gang-{i}", i),
                _workload_ref(i, workload, blockOwnerDeletion=True),
            ],
            "annotations": dict(_MANAGED_BY),
        },
    )


def gangrevision(i: int) -> dict[str, Any]:
    """The ControllerRevision of gang set ``gang-{i}`` as the controller sends it."""
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": f"gang-{i}-67b4fddcb8",
            "namespace": "default",
            "labels": {"app": f"gang-{i}", "controller.kubernetes.io/hash": "67b4fddcb8"},
            "ownerReferences": [_set_owner(f"gang-{i}", i)],
        },
        "data": {
            "spec": {
                "template": {
                    "metadata": {"labels": {"app": f"gang-{i}"}},
                    "spec": _template_spec(),
                    "$patch": "replace",
                }
            }
        },
        "revision": 1,
    }


BODIES: dict[str, Callable[[int], dict[str, Any]]] = {
    "pod": pod,
    "gangpod": gangpod,
    "event": event,
    "workload": workload,
    "podgroup": podgroup,
    "statefulset": statefulset,
    "gangworkload": gangworkload,
    "ganggroup": ganggroup,
    "gangrevision": gangrevision,
}


def _api() -> tuple[Any, dict[str, Any]]:
    from apiserver.server.instance import build_api

    api = build_api()
    rds = {
        "pod": api.registry.get("", "v1", "pods"),
        "gangpod": api.registry.get("", "v1", "pods"),
        "event": api.registry.get("", "v1", "events"),
        "workload": api.registry.get("scheduling.k8s.io", "v1beta1", "workloads"),
        "podgroup": api.registry.get("scheduling.k8s.io", "v1beta1", "podgroups"),
        "statefulset": api.registry.get("apps", "v1", "statefulsets"),
        "gangworkload": api.registry.get("scheduling.k8s.io", "v1beta1", "workloads"),
        "ganggroup": api.registry.get("scheduling.k8s.io", "v1beta1", "podgroups"),
        "gangrevision": api.registry.get("apps", "v1", "controllerrevisions"),
    }
    return api, rds


def run(n: int, profile: str) -> dict[str, float]:
    """µs of CPU per create of each kind (after 200 warm-up creates of it)."""
    from apiserver.registry.generic import WriteOptions

    api, rds = _api()
    out: dict[str, float] = {}
    for kind in KINDS:
        rd, make = rds[kind], BODIES[kind]
        opts = WriteOptions(field_manager="bench")
        for i in range(n, n + 200):
            api.create(rd, "default", make(i), opts)
        bodies = [make(i) for i in range(n)]
        gc.collect()
        prof = cProfile.Profile() if profile == kind else None
        if prof is not None:
            prof.enable()
        t = time.process_time()
        for b in bodies:
            api.create(rd, "default", b, WriteOptions(field_manager="bench"))
        out[kind] = (time.process_time() - t) / n * 1e6
        if prof is not None:
            prof.disable()
            pstats.Stats(prof).sort_stats(SORT).print_stats(60)
    return out


def pairs(trees: list[str], n: int, rounds: int) -> None:
    """Run this script against each source tree in turn, ``rounds`` times (alternating, so
    both see the same weather), and print each tree's minimum per kind and the ratios."""
    import json
    import os
    import subprocess
    import sys

    best: list[dict[str, float]] = [{} for _ in trees]
    for r in range(rounds):
        for i, tree in enumerate(trees):
            env = dict(os.environ, PYTHONPATH=tree)
            out = subprocess.run(
                [sys.executable, __file__, "--n", str(n), "--rounds", "1", "--json"],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            got = json.loads(out.strip().splitlines()[-1])
            print(f"round {r + 1} {tree}: " + " ".join(f"{k}={v:.1f}us" for k, v in got.items()), flush=True)
            for k, v in got.items():
                best[i][k] = min(best[i].get(k, v), v)
    for tree, b in zip(trees, best, strict=True):
        print(f"best {tree}: " + " ".join(f"{k}={v:.1f}us" for k, v in b.items()))
    if len(trees) == 2:
        print("ratio: " + " ".join(f"{k}={best[1][k] / best[0][k]:.3f}" for k in best[0]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--profile", choices=KINDS, default="")
    ap.add_argument("--json", action="store_true", help="print the result as one JSON line")
    ap.add_argument("--pairs", nargs="+", metavar="TREE", help="alternate runs over these source trees")
    args = ap.parse_args()
    if args.pairs:
        pairs(args.pairs, args.n, args.rounds)
        return
    best: dict[str, float] = {}
    for _ in range(args.rounds):
        for kind, us in run(args.n, args.profile).items():
            best[kind] = min(best.get(kind, us), us)
    if args.json:
        import json

        print(json.dumps(best))
    else:
        print(" ".join(f"{k}={v:.1f}us" for k, v in best.items()))


if __name__ == "__main__":
    main()
