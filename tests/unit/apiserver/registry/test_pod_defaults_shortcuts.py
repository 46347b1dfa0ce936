"""Pod defaulting's shortcuts (session 18, ``createvalid``) against the general walk.

``default_pod_spec`` walks the container lists itself (not through ``all_containers``' generator)
and ``default_container`` asks ``_default_probe``/``_default_handler`` only about probes and
lifecycle hooks that are there. Random specs (container lists missing, odd or holding non-dicts;
probes and lifecycles as dicts, ``None``, empty or other values) come out exactly as the steps
they replace make them, key order included.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import orjson
import pytest

from apiserver.api.podresources import all_containers
from apiserver.api.types import as_dict, as_list, as_str
from apiserver.registry.strategies import pod_defaults
from apiserver.registry.strategies import pod_defaults as pd
from apiserver.registry.strategies.pod_validation import PROBES


def _reference_container(c: dict[str, Any]) -> None:
    """``default_container`` as it was before the shortcut (session 17), verbatim."""
    if not c.get("imagePullPolicy"):
        c["imagePullPolicy"] = (
            "Always" if pd.image_tag(as_str(c.get("image"))) == "latest" else "IfNotPresent"
        )
    if not c.get("terminationMessagePath"):
        c["terminationMessagePath"] = pd.TERMINATION_MESSAGE_PATH_DEFAULT
    if not c.get("terminationMessagePolicy"):
        c["terminationMessagePolicy"] = "File"
    for p in as_list(c.get("ports")):
        if isinstance(p, dict) and not p.get("protocol"):
            p["protocol"] = "TCP"
    for key in PROBES:
        pd._default_probe(c.get(key))
    lifecycle = as_dict(c.get("lifecycle"))
    for key in ("postStart", "preStop"):
        pd._default_handler(lifecycle.get(key))
    for env in as_list(c.get("env")):
        ref = as_dict(as_dict(as_dict(env).get("valueFrom")).get("fieldRef"))
        if ref and not ref.get("apiVersion"):
            ref["apiVersion"] = "v1"
    res = c.get("resources")
    if isinstance(res, dict):
        for key in ("limits", "requests"):
            if isinstance(res.get(key), dict):
                res[key] = pd.canonical_resource_list(res[key])


def _reference_spec(spec: dict[str, Any]) -> None:
    """``default_pod_spec`` as it was before the shortcut (session 17), verbatim."""
    if not spec.get("dnsPolicy"):
        spec["dnsPolicy"] = "ClusterFirst"
    if not spec.get("restartPolicy"):
        spec["restartPolicy"] = "Always"
    if spec.get("securityContext") is None:
        spec["securityContext"] = {}
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = pd.DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS
    if not spec.get("schedulerName"):
        spec["schedulerName"] = pd.DEFAULT_SCHEDULER_NAME
    for _, _, c in all_containers(spec):
        _reference_container(c)
    for v in as_list(spec.get("volumes")):
        if isinstance(v, dict):
            pd._default_volume(v)
    if isinstance(spec.get("overhead"), dict):
        spec["overhead"] = pd.canonical_resource_list(spec["overhead"])
    res = spec.get("resources")
    if isinstance(res, dict):
        for key in ("limits", "requests"):
            if isinstance(res.get(key), dict):
                res[key] = pd.canonical_resource_list(res[key])


_PROBE_VALUES: list[Any] = [
    None,
    {},
    {"httpGet": {"port": 80}},
    {"exec": {"command": ["true"]}, "periodSeconds": 5},
    [],
    "odd",
    0,
]
_LIFECYCLES: list[Any] = [None, {}, {"postStart": {"httpGet": {}}}, {"preStop": None}, "odd", []]


def _container(rnd: random.Random, i: int) -> Any:
    if rnd.random() < 0.05:
        return rnd.choice([None, "odd", 3])
    c: dict[str, Any] = {"name": f"c{i}", "image": rnd.choice(["img", "img:latest", "img:1", ""])}
    for key in PROBES:
        if rnd.random() < 0.3:
            c[key] = copy.deepcopy(rnd.choice(_PROBE_VALUES))
    if rnd.random() < 0.3:
        c["lifecycle"] = copy.deepcopy(rnd.choice(_LIFECYCLES))
    if rnd.random() < 0.3:
        c["ports"] = [{"containerPort": 80}]
    if rnd.random() < 0.5:
        c["resources"] = {"requests": {"cpu": "100m"}}
    return c


def _spec(rnd: random.Random) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    for key in ("initContainers", "containers", "ephemeralContainers"):
        r = rnd.random()
        if r < 0.1:
            spec[key] = rnd.choice([None, {}, "odd"])
        elif r < 0.7 or key == "containers":
            spec[key] = [_container(rnd, i) for i in range(rnd.randint(0, 3))]
    if rnd.random() < 0.3:
        spec["restartPolicy"] = "Never"
    return spec


@pytest.mark.parametrize("seed", range(4))
def test_pod_spec_defaults_equal_the_general_walk(seed: int) -> None:
    rnd = random.Random(seed)
    for _ in range(400):
        spec = _spec(rnd)
        want = copy.deepcopy(spec)
        _reference_spec(want)
        pod_defaults.default_pod_spec(spec)
        assert orjson.dumps(spec) == orjson.dumps(want)


@pytest.mark.parametrize("seed", range(2))
def test_container_defaults_equal_the_general_steps(seed: int) -> None:
    rnd = random.Random(50 + seed)
    for i in range(600):
        c = _container(rnd, i)
        if not isinstance(c, dict):
            continue
        want = copy.deepcopy(c)
        _reference_container(want)
        pod_defaults.default_container(c)
        assert orjson.dumps(c) == orjson.dumps(want)
