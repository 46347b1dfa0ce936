"""DefaultTolerationSeconds answers a pod without tolerations (most pods) without looking through
them: the result must be the former loop's, object for object, for every spec, with and without
tolerations of every kind (randomized)."""

from __future__ import annotations

import copy
import random
from typing import Any

import orjson

from apiserver.admission import CREATE, Attributes
from apiserver.admission.plugins import DefaultTolerationSeconds
from apiserver.registry.builtin import builtin_resources

_KEYS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


def _former(spec: dict[str, Any]) -> None:
    """The plugin's loop as it was before session 16 (the general path)."""
    tols = spec.get("tolerations") or []
    for key in _KEYS:
        if any(t.get("key") == key and t.get("effect") in ("NoExecute", None, "") for t in tols):
            continue
        if any(t.get("operator") == "Exists" and not t.get("key") for t in tols):
            continue
        tols.append({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300})
    spec["tolerations"] = tols


def _toleration(rng: random.Random) -> dict[str, Any]:
    t: dict[str, Any] = {}
    if rng.random() < 0.7:
        t["key"] = rng.choice([*_KEYS, "", "other", None])
    if rng.random() < 0.6:
        t["operator"] = rng.choice(["Exists", "Equal", ""])
    if rng.random() < 0.6:
        t["effect"] = rng.choice(["NoExecute", "NoSchedule", "", None])
    if rng.random() < 0.3:
        t["tolerationSeconds"] = rng.choice([0, 60, 300])
    return t


def _specs(rng: random.Random) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{}, {"tolerations": []}, {"tolerations": None}, {"tolerations": ""}]
    for _ in range(3000):
        spec: dict[str, Any] = {"containers": [{"name": "c"}]}
        r = rng.random()
        if r < 0.2:
            spec["tolerations"] = rng.choice([[], None, "", 0, {}])
        elif r < 0.8:
            spec["tolerations"] = [_toleration(rng) for _ in range(rng.randint(1, 4))]
        out.append(spec)
    return out


def test_answers_as_the_former_loop() -> None:
    rd = next(r for r in builtin_resources() if r.plural == "pods" and not r.group)
    plugin = DefaultTolerationSeconds()
    for spec in _specs(random.Random(1606)):
        want = copy.deepcopy(spec)
        _former(want)
        pod = {"metadata": {"name": "p"}, "spec": copy.deepcopy(spec)}
        plugin.admit(Attributes(CREATE, rd, "default", "p", pod, None), None)  # type: ignore[arg-type]
        got = pod["spec"]
        assert orjson.dumps(got) == orjson.dumps(want), spec
        assert list(got) == list(want)
    # no spec at all: one is made, with both tolerations
    pod: dict[str, Any] = {"metadata": {"name": "p"}}
    plugin.admit(Attributes(CREATE, rd, "default", "p", pod, None), None)  # type: ignore[arg-type]
    want_spec: dict[str, Any] = {}
    _former(want_spec)
    assert pod["spec"] == want_spec


def test_a_pods_list_is_its_own() -> None:
    """Two pods never share the tolerations list or its items (each stored object owns its own)."""
    rd = next(r for r in builtin_resources() if r.plural == "pods" and not r.group)
    plugin = DefaultTolerationSeconds()
    a: dict[str, Any] = {"spec": {}}
    b: dict[str, Any] = {"spec": {}}
    plugin.admit(Attributes(CREATE, rd, "default", "a", a, None), None)  # type: ignore[arg-type]
    plugin.admit(Attributes(CREATE, rd, "default", "b", b, None), None)  # type: ignore[arg-type]
    assert a["spec"]["tolerations"] == b["spec"]["tolerations"]
    assert a["spec"]["tolerations"] is not b["spec"]["tolerations"]
    for x, y in zip(a["spec"]["tolerations"], b["spec"]["tolerations"], strict=True):
        assert x is not y
