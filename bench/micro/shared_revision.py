"""CPU per read-only share of a stored pod revision, without and with the subtree table (a script):

    python -m bench.micro.shared_revision [N]

Each round decodes N copies of one bound gang pod's stored bytes the way an informer's first
read of a revision does (``Record(None, raw, rv).shared(table)``: decode, ``compact``, and with a
:class:`~apiserver.storage.sharedsubtrees.SharedSubtrees` table its template lists made the
canonical ones), keeping every result alive as the informers keep the current revisions. Rounds
alternate the two ways, five each, once with the cyclic collector off (the cost of the work
itself) and once with CPython's default collector (what keeping fewer tracked objects saves).
Session 13 (``gcpods``) measured it; see docs/bench.md.
"""

from __future__ import annotations

import gc
import sys
import time

import orjson

from apiserver.storage.interface import Record
from apiserver.storage.sharedsubtrees import SharedSubtrees

#: a gang StatefulSet's pod after binding, as ``gangs-10x5000`` stores it
POD = orjson.loads(
    '{"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "gang-0-", "namespace": "bench", "labels": {"app": "gang-0", "statefulset.kubernetes.io/pod-name": "gang-0-0", "apps.kubernetes.io/pod-index": "0", "controller-revision-hash": "gang-0-67b4fddcb8"}, "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "gang-0", "uid": "10463a06-25bf-4dc0-bf60-e23c1f50e1e0", "controller": true, "blockOwnerDeletion": true}, {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "name": "gang-0-7c756fdddd-gang-0-5685fc6fb6", "uid": "de5e5c52-c2fa-4593-a99e-7329d646a797"}], "name": "gang-0-0", "uid": "255be4fe-6f3a-49c2-b136-448d6d043ef0", "creationTimestamp": "2026-12-05T16:26:25Z", "generation": 1, "managedFields": [{"manager": "statefulset-controller", "operation": "Update", "apiVersion": "v1", "time": "2026-12-05T16:26:25Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {}, "f:apps.kubernetes.io/pod-index": {}, "f:controller-revision-hash": {}, "f:statefulset.kubernetes.io/pod-name": {}}, "f:ownerReferences": {".": {}, "k:{\\"uid\\":\\"10463a06-25bf-4dc0-bf60-e23c1f50e1e0\\"}": {}, "k:{\\"uid\\":\\"de5e5c52-c2fa-4593-a99e-7329d646a797\\"}": {}}}, "f:spec": {"f:containers": {".": {}, "k:{\\"name\\":\\"c\\"}": {".": {}, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {}, "f:resources": {".": {}, "f:requests": {".": {}, "f:cpu": {}}}, "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {}}}, "f:dnsPolicy": {}, "f:enableServiceLinks": {}, "f:hostname": {}, "f:preemptionPolicy": {}, "f:priority": {}, "f:restartPolicy": {}, "f:schedulerName": {}, "f:schedulingGroup": {".": {}, "f:podGroupName": {}}, "f:securityContext": {}, "f:serviceAccount": {}, "f:serviceAccountName": {}, "f:subdomain": {}, "f:terminationGracePeriodSeconds": {}, "f:tolerations": {}}}}], "resourceVersion": "1796487985356349"}, "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": "100m"}}, "imagePullPolicy": "IfNotPresent", "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}], "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "securityContext": {}, "terminationGracePeriodSeconds": 30, "schedulerName": "default-scheduler", "hostname": "gang-0-0", "subdomain": "gang-0", "schedulingGroup": {"podGroupName": "gang-0-7c756fdddd-gang-0-5685fc6fb6"}, "enableServiceLinks": true, "serviceAccountName": "default", "serviceAccount": "default", "priority": 0, "preemptionPolicy": "PreemptLowerPriority", "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}, {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}], "nodeName": "node-00002"}, "status": {"phase": "Pending", "qosClass": "Burstable", "conditions": [{"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2026-12-05T16:26:25Z"}]}}'
)


def rounds(n: int, collector: bool) -> dict[str, list[float]]:
    raw = orjson.dumps(POD)
    table = SharedSubtrees()
    out: dict[str, list[float]] = {"without": [], "with": []}
    was = gc.isenabled()
    (gc.enable if collector else gc.disable)()
    try:
        for _ in range(5):
            for name, t in (("without", None), ("with", table)):
                recs = [Record(None, raw, i) for i in range(n)]
                gc.collect()
                c = time.process_time()
                for rec in recs:
                    rec.shared(t)
                out[name].append((time.process_time() - c) / n * 1e6)
                del recs
    finally:
        (gc.enable if was else gc.disable)()
    return out


def main(argv: list[str]) -> None:
    n = int(argv[0]) if argv else 20000
    for collector in (False, True):
        res = rounds(n, collector)
        label = "collector on (CPython defaults)" if collector else "collector off"
        for name, v in res.items():
            print(
                f"{label:32} {name:8} "
                + " ".join(f"{x:6.2f}" for x in v)
                + f"  us/revision, min {min(v):.2f}"
            )


if __name__ == "__main__":
    main(sys.argv[1:])
