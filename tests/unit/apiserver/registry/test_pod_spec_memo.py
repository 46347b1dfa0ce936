"""``ValidatePodSpec`` remembered per spec (:mod:`apiserver.registry.strategies.pod_spec_memo`).

The memo must be invisible: for every spec, including ones that differ from a remembered one
only in ``hostname``/``nodeName`` and ones with errors, it answers exactly what a full
validation answers (the same errors, fields and order).
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from apiserver.field import Path
from apiserver.registry.strategies.pod_spec_memo import PodSpecMemo
from apiserver.registry.strategies.pod_validation import PodValidationOptions, validate_pod_spec

OPTS = PodValidationOptions(resource_is_pod=True)
SP = Path("spec")


def template() -> dict[str, Any]:
    return {
        "containers": [
            {
                "name": "c",
                "image": "registry.k8s.io/pause:3.10",
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "imagePullPolicy": "IfNotPresent",
            }
        ],
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "subdomain": "web",
        "tolerations": [
            {
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            }
        ],
    }


HOSTNAMES = ["web-0", "web-1", "Web-2", "-bad", "a" * 64, "", 7, None]
NODE_NAMES = ["n-1", "node.example.com", "Bad_Node", "", 3]
#: a set's service and its gang's PodGroup: each set of a template has its own
SUBDOMAINS = ["web", "web-1", "web-2", "Web", "-bad", "a.b", "a" * 64, "", 7]
GROUPS: list[Any] = [
    {"podGroupName": "pg-1"},
    {"podGroupName": "pg-2.example"},
    {"podGroupName": "PG_3"},
    {"podGroupName": ""},
    {"podGroupName": "a" * 254},
    {"podGroupName": 5},
    {"podGroupName": None},
    {},
    {"podGroupName": "pg-1", "extra": 1},
    "pg-1",
    None,
]
#: values that break other rules, for specs with errors elsewhere
BREAKS: list[tuple[str, Any]] = [
    ("restartPolicy", "Sometimes"),
    ("terminationGracePeriodSeconds", None),
    ("subdomain", "Not A Label"),
    ("dnsPolicy", "Nope"),
    ("priorityClassName", "UPPER"),
]


def _errors(errs: list[Any]) -> list[tuple[str, str, str]]:
    return [(e.type, e.field, e.detail) for e in errs]


def _variant(rnd: random.Random) -> dict[str, Any]:
    spec = template()
    h = rnd.choice(HOSTNAMES)
    if h is not None:
        spec["hostname"] = h
    n = rnd.choice(NODE_NAMES + [None])
    if n is not None:
        spec["nodeName"] = n
    if rnd.random() < 0.7:
        spec["subdomain"] = rnd.choice(SUBDOMAINS) if rnd.random() < 0.5 else f"web-{rnd.randint(0, 9)}"
    if rnd.random() < 0.7:
        group = rnd.choice(GROUPS) if rnd.random() < 0.5 else {"podGroupName": f"pg-{rnd.randint(0, 9)}"}
        spec["schedulingGroup"] = copy.deepcopy(group)
    if rnd.random() < 0.2:
        k, v = rnd.choice(BREAKS)
        spec[k] = v
    if rnd.random() < 0.2:
        spec["containers"][0]["name"] = rnd.choice(["c", "d", "Bad Name"])
    return spec


@pytest.mark.parametrize("seed", range(6))
def test_remembered_answers_equal_full_validations(seed: int) -> None:
    rnd = random.Random(seed)
    memo = PodSpecMemo()
    answered = 0
    for _ in range(600):
        spec = _variant(rnd)
        want = _errors(validate_pod_spec(copy.deepcopy(spec), SP, OPTS))
        before = copy.deepcopy(spec)
        known = len(memo._valid)
        assert _errors(memo.validate(spec, SP, OPTS)) == want
        assert spec == before  # the key's blanking copies, never modifies
        answered += not want and len(memo._valid) == known
    assert memo._valid  # valid templates were remembered and answered their variants
    assert answered > 80


def test_pods_of_one_template_are_validated_once() -> None:
    memo = PodSpecMemo()
    for i in range(5):
        spec = template()
        spec["hostname"] = f"web-{i}"
        assert memo.validate(spec, SP, OPTS) == []
    assert len(memo._valid) == 1
    for s in range(5):  # the gangs of other sets: their own service and PodGroup
        spec = template()
        spec["hostname"], spec["subdomain"] = f"web{s}-0", f"web{s}"
        spec["schedulingGroup"] = {"podGroupName": f"web{s}-pg"}
        assert memo.validate(spec, SP, OPTS) == []
    assert len(memo._valid) == 2
    bad = template()
    bad["hostname"] = "Web_5"  # same template, its own string breaks its rule
    assert _errors(memo.validate(bad, SP, OPTS)) == _errors(validate_pod_spec(bad, SP, OPTS)) != []


@pytest.mark.parametrize("odd", [None, float("nan"), True, 1.0])
def test_a_spec_with_a_null_or_a_lookalike_value_is_not_confused(odd: Any) -> None:
    memo = PodSpecMemo()
    good = template()
    assert memo.validate(good, SP, OPTS) == []
    spec = template()
    spec["terminationGracePeriodSeconds"] = odd  # 30 is valid; these are not the same value
    assert _errors(memo.validate(spec, SP, OPTS)) == _errors(validate_pod_spec(spec, SP, OPTS))
    if odd is None or odd != odd:
        assert len(memo._valid) == 1  # a text with null is never remembered


def test_own_strings_known_to_other_rules_are_still_checked_by_their_own() -> None:
    """The memo asks each own string's rule's remembered strings first: a string another rule
    accepted (a label value, a subdomain) is no pass for hostname, subdomain or nodeName."""
    from apiserver.validation import names

    odd = {"hostname": "web.example.com", "subdomain": "Web_1", "nodeName": "Bad_Node"}
    for value in odd.values():  # each valid by some other rule, and so remembered there
        answers = [names.is_valid_label_value(value), names.is_dns1123_subdomain(value)]
        assert [] in answers

    def named() -> dict[str, Any]:
        return {**template(), "hostname": "web-0", "subdomain": "web", "nodeName": "n-1"}

    memo = PodSpecMemo()
    assert memo.validate(named(), SP, OPTS) == []  # the shape is remembered
    for key, value in odd.items():
        spec = named()
        spec[key] = value
        want = _errors(validate_pod_spec(copy.deepcopy(spec), SP, OPTS))
        assert want
        assert _errors(memo.validate(spec, SP, OPTS)) == want
