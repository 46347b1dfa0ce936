"""Admission rule matching, as kube's webhooks and admission policies match a request: wildcards,
subresources, scope, and ``matchPolicy: Equivalent``."""

from __future__ import annotations

import pytest

from apiserver.admission.policy.matching import match_rules, rule_matches
from apiserver.registry.builtin import builtin_resources
from apiserver.rest.resources import Registry

REGISTRY = Registry(builtin_resources())
PODS = REGISTRY.get("", "v1", "pods")
NODES = REGISTRY.get("", "v1", "nodes")
HPA_V1 = REGISTRY.get("autoscaling", "v1", "horizontalpodautoscalers")


def rule(
    resources: list[str], scope: str = "*", ops: tuple[str, ...] = ("*",), groups=("",), versions=("v1",)
) -> dict:
    return {
        "operations": list(ops),
        "apiGroups": list(groups),
        "apiVersions": list(versions),
        "resources": resources,
        "scope": scope,
    }


@pytest.mark.parametrize(
    ("resources", "sub", "want"),
    [
        (["pods"], "", True),
        (["pods"], "status", False),
        (["*"], "", True),
        (["*"], "status", False),
        (["pods/status"], "status", True),
        (["pods/*"], "status", True),
        (["pods/*"], "", True),  # kube: "pods/*" covers the main resource too
        (["*/status"], "status", True),
        (["*/*"], "", True),
        (["*/*"], "binding", True),
        (["nodes"], "", False),
    ],
)
def test_resources_and_subresources(resources: list[str], sub: str, want: bool) -> None:
    assert rule_matches(rule(resources), "CREATE", PODS, sub) is want


def test_operations_and_scope() -> None:
    assert rule_matches(rule(["pods"], ops=("UPDATE",)), "UPDATE", PODS, "")
    assert not rule_matches(rule(["pods"], ops=("UPDATE",)), "CREATE", PODS, "")
    assert rule_matches(rule(["*"], scope="Namespaced"), "CREATE", PODS, "")
    assert not rule_matches(rule(["*"], scope="Cluster"), "CREATE", PODS, "")
    assert rule_matches(rule(["*"], scope="Cluster"), "CREATE", NODES, "")


def test_equivalent_versions_match_only_with_equivalent_policy() -> None:
    v2_rule = rule(["horizontalpodautoscalers"], groups=("autoscaling",), versions=("v2",))
    matched = match_rules([v2_rule], "CREATE", HPA_V1, "", "Equivalent", REGISTRY)
    assert matched is not None and matched.version == "v2"
    assert match_rules([v2_rule], "CREATE", HPA_V1, "", "Exact", REGISTRY) is None
