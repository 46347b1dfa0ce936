"""CPU of a create's type check, against the cost of remembering it by typed shape (a script, not a test)::

    python -m bench.micro.typecheck_cpu [--n 20000] [--rounds 5]

kube decodes every body into Go structs; gangplane does that check explicitly before defaulting
(:func:`apiserver.patch.typecheck.check_kind_types`). Session 14 asked whether the check could be
done once per *typed shape* (the object with every scalar replaced by a marker of its type) and
skipped on a remembered one. This script measures, per body, in one process, alternated,
``--rounds`` times (the minimum of each is printed, in µs of ``time.process_time`` per body):

* ``check``: ``check_kind_types`` as a create calls it (``fill``, no live object);
* ``typed-memo``: a memo of checks that found nothing, by *whole-object typed shape*: the object
  with the scalars of its maps replaced by a marker of their exact type (floats by integral-ness:
  ``1.0`` passes an integer field, ``1.5`` does not), lists verbatim, as
  :mod:`apiserver.patch.createmem`'s (untyped) shape; its ``orjson`` text is the key. A hit skips
  the check, a miss checks and remembers (the last column: distinct shapes met);
* ``level-memo``: a memo per object level: the level's keys and the exact types of its values
  (built by C-level ``tuple``/``map``) name the children that still need a look (nested objects,
  lists, maps, floats under an integer field), so the scalars of a remembered level are skipped;
* ``tuple-key`` (session 20, typekey): a *typed structure key* as :mod:`apiserver.patch.structkey`
  makes its key (a tuple per map: its keys, then one marker per value; no copy, no text), with
  scalars marked by exact type (floats by integral-ness) and lists looked into as maps are (their
  verbatim text would make each gang set's ``ownerReferences`` a new key); a hit skips the check.

Each row is ``--n`` distinct bodies of one kind, as a cluster creates them by the thousand:
``gangs-1000x3``'s (``bench.micro.create_cpu``'s bodies captured from the plane: ``plane-pod``,
``podgroup``, ``workload``, ``revision``, and the driver's ``statefulset``, one set per body) and
``event`` (kubelet Events, ``bench.micro.event_cpu``'s), ``basic-pod`` (SchedulingBasic's pods),
``set-pod`` (``bench.micro.create_cpu``'s StatefulSet pod, all of one set), ``gang-pod`` (the same
pods, one set per three: the owner's uid is in the ``ownerReferences`` list, so each set is a new
shape) and ``pod-2c`` (a set's pods with two containers, env and a probe: a larger template). Both memo designs are
rejected designs kept here only to be measured (see docs/bench.md, "Session 14 — typedshape");
the product has neither. Numbers go in docs/bench.md, never into assertions.
"""

from __future__ import annotations

import argparse
import copy
import time
from collections.abc import Callable
from typing import Any

import orjson

from apiserver.patch import typecheck as tc
from apiserver.patch.fieldpath import EXACT_JSON
from bench.micro import create_cpu, event_cpu
from bench.workloads import common


def _event(i: int) -> dict[str, Any]:
    """A kubelet's Event about pod ``i`` (its own name, uid, resourceVersion)."""
    reason, message = event_cpu.REASONS[i % 3]
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"gang-0-{i}.18ee70548a{i:06x}", "namespace": "bench"},
        "involvedObject": event_cpu._ref(i),
        "reason": reason,
        "message": message,
        "type": "Normal",
        "source": {"component": "kubelet", "host": f"node-{i}"},
        "firstTimestamp": "2026-12-05T18:53:29Z",
        "lastTimestamp": "2026-12-05T18:53:29Z",
        "count": 1,
        "reportingComponent": "kubelet",
        "reportingInstance": f"node-{i}",
    }


def _one_set_pod(i: int) -> dict[str, Any]:
    """``create_cpu``'s pod ``i`` with the owner of pod 0: every pod of one set (one owner)."""
    pod = create_cpu.pod(i)
    pod["metadata"]["ownerReferences"] = create_cpu.pod(0)["metadata"]["ownerReferences"]
    return pod


def _pod_2c(i: int) -> dict[str, Any]:
    """That pod with a second container, env and a probe: a larger template, one set."""
    pod = _one_set_pod(i)
    first = pod["spec"]["containers"][0]
    probe = {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 10, "failureThreshold": 3}
    first["env"] = [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]
    first["readinessProbe"] = probe
    second = copy.deepcopy(first)
    second["name"] = "sidecar"
    second["args"] = ["--port", "9090", "--verbose"]
    pod["spec"]["containers"].append(second)
    pod["spec"]["terminationGracePeriodSeconds"] = 30
    return pod


#: body sets: ((group, version, kind), body of index i)
BODIES: dict[str, tuple[tuple[str, str, str], Callable[[int], dict[str, Any]]]] = {
    "event": (("", "v1", "Event"), _event),
    "basic-pod": (("", "v1", "Pod"), lambda i: common.pod(f"run-{i}")),
    "set-pod": (("", "v1", "Pod"), _one_set_pod),
    "gang-pod": (("", "v1", "Pod"), create_cpu.pod),
    "pod-2c": (("", "v1", "Pod"), _pod_2c),
    "plane-pod": (("", "v1", "Pod"), create_cpu.gangpod),
    "podgroup": (("scheduling.k8s.io", "v1beta1", "PodGroup"), create_cpu.ganggroup),
    "workload": (("scheduling.k8s.io", "v1beta1", "Workload"), create_cpu.gangworkload),
    "statefulset": (("apps", "v1", "StatefulSet"), create_cpu.statefulset),
    "revision": (("apps", "v1", "ControllerRevision"), create_cpu.gangrevision),
}

# ------------------------------------------------------------ rejected design 1: whole-object key
#: a marker per exact scalar type (floats by integral-ness: ``1.0`` passes an integer field, ``1.5``
#: not). A product memo would also refuse a shape holding a ``null`` (``fill`` rewrites some) and
#: one ``orjson`` refuses; the bodies measured here hold neither, so the key costs the same.
_MARK: dict[type, Any] = {str: "s", int: 0, bool: False, type(None): "n"}


def _typed_blank(m: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in m.items():
        t = type(v)
        mark = _MARK.get(t)
        if mark is not None:
            out[k] = mark
        elif t is dict:
            out[k] = _typed_blank(v)
        elif t is float:
            out[k] = 0.0 if v.is_integer() else 0.5
        else:
            out[k] = v
    return out


# ------------------------------------------------------------ rejected design 2: a memo per level
_NESTED = (tc._OBJECT, tc._MAP, tc._LIST)


def _plan(v: dict[str, Any], shape: Any) -> tuple[str, ...] | None:
    """The children of an object level that its keys and value types do not settle (``None``: one
    of them is of a wrong type, which the general walk reports)."""
    out = []
    for k, child in v.items():
        sub = shape.props.get(k)
        if sub is None or child is None or sub.kind == tc._ANY:
            continue
        if sub.kind in _NESTED or (type(child) is not sub.fast and isinstance(child, float)):
            out.append(k)
        elif type(child) is not sub.fast and not tc._leaf_ok(child, sub.leaf):
            return None
    return tuple(out)


def _level_walk(v: Any, shape: Any, struct: str, memo: dict[Any, tuple[str, ...]]) -> None:
    if v is None:
        return
    if shape.kind != tc._OBJECT:
        if shape.kind in (tc._MAP, tc._LIST):
            children = v.values() if type(v) is dict else v
            sub = shape.values if shape.kind == tc._MAP else shape.items
            if type(v) is (dict if shape.kind == tc._MAP else list) and sub is not None:
                for child in children:
                    if type(child) is not sub.fast:
                        _level_walk(child, sub, struct, memo)
                return
        tc._walk(v, shape, struct, True)
        return
    if type(v) is not dict:
        tc._walk(v, shape, struct, True)
        return
    key = (shape, tuple(v), tuple(map(type, v.values())))
    plan = memo.get(key)
    if plan is None:
        plan = _plan(v, shape)
        if plan is None:
            tc._walk(v, shape, struct, True)
            return
        memo[key] = plan
    inner = shape.name or struct
    for k in plan:
        _level_walk(v[k], shape.props[k], inner, memo)


# ------------------------------------------------------------ rejected design 3: a typed tuple key
#: exact scalar types' markers (``float`` by integral-ness in :func:`_tuple_key`; lists by ``_LIST``)
_TMARK: dict[type, int] = {str: 1, int: 2, bool: 3, type(None): 4}
_LIST_MARK = 7


def _tuple_key(m: dict[str, Any]) -> tuple[Any, ...]:
    out: list[Any] = [*m]
    for v in m.values():
        out.append(_tuple_mark(v))
    return tuple(out)


def _tuple_mark(v: Any) -> Any:
    t = type(v)
    mark = _TMARK.get(t)
    if mark is not None:
        return mark
    if t is dict:
        return _tuple_key(v)
    if t is list:
        return (_LIST_MARK, *[_tuple_mark(x) for x in v])
    if t is float:
        return 5 if v.is_integer() else 6
    return t


def _tuple_memo_check(gvk: tuple[str, str, str], body: dict[str, Any], memo: set[Any]) -> None:
    """Design 3 whole: a hit skips the check; a miss checks and remembers (a product memo would
    also refuse to learn a check that filled a ``null``; these bodies hold none)."""
    key = _tuple_key(body)
    if key in memo:
        return
    tc.check_kind_types(*gvk, body)
    memo.add(key)


# ------------------------------------------------------------ the measurement
def _typed_memo_check(gvk: tuple[str, str, str], body: dict[str, Any], memo: dict[bytes, bool]) -> None:
    """Design 1 whole: a hit skips the check; a miss checks and remembers (bounded as createmem's)."""
    key = orjson.dumps(_typed_blank(body), option=EXACT_JSON)
    if key in memo:
        return
    tc.check_kind_types(*gvk, body)
    if len(memo) >= 1024:
        memo.clear()
    memo[key] = True


def _per_body(fn: Callable[[dict[str, Any]], object], bodies: list[dict[str, Any]]) -> float:
    t = time.process_time()
    for body in bodies:
        fn(body)
    return (time.process_time() - t) / len(bodies) * 1e6


def run(n: int, rounds: int) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for name, (gvk, make) in BODIES.items():
        bodies = [make(i) for i in range(n)]
        shape = tc._kind_shape(*gvk)
        kind = gvk[2]
        best: dict[str, float] = {}
        for _ in range(rounds):
            # a fresh memo per round and design: each round pays its misses once
            key_memo: dict[bytes, bool] = {}
            level_memo: dict[Any, tuple[str, ...]] = {}
            tuple_memo: set[Any] = set()
            runs: dict[str, Callable[[dict[str, Any]], object]] = {
                "check": lambda b, g=gvk: tc.check_kind_types(*g, b),
                "typed-memo": lambda b, g=gvk, m=key_memo: _typed_memo_check(g, b, m),
                "level-memo": lambda b, k=kind, m=level_memo, s=shape: _level_walk(b, s, k, m),
                "tuple-key": lambda b, g=gvk, m=tuple_memo: _tuple_memo_check(g, b, m),
            }
            for label, fn in runs.items():
                best[label] = min(best.get(label, float("inf")), _per_body(fn, bodies))
            best["shapes"] = float(len(key_memo))
            best["tuple-keys"] = float(len(tuple_memo))
        out[name] = best
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=6000, help="bodies per set")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    res = run(args.n, args.rounds)
    print(
        f"{'bodies':11} {'check':>7} {'typed-memo':>11} {'level-memo':>11} {'tuple-key':>10} {'shapes':>7}"
        f" {'keys':>5}  (µs CPU per body, min)"
    )
    for name, r in res.items():
        print(
            f"{name:11} {r['check']:7.2f} {r['typed-memo']:11.2f} {r['level-memo']:11.2f} {r['tuple-key']:10.2f}"
            f" {int(r['shapes']):7} {int(r['tuple-keys']):5}"
        )


if __name__ == "__main__":
    main()
