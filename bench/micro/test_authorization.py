"""Micro-benchmarks of ``--authorization-mode=RBAC`` decisions (pytest-benchmark, outside the default run).

    python -m pytest bench/micro/test_authorization.py

Each decision is what the front door makes per HTTP request under RBAC: request attributes from the
path, then the stored policy (the bootstrap roles plus one Role and RoleBinding).
"""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.api.users import ADMIN, UserInfo
from apiserver.auth.attributes import request_attributes

pytestmark = pytest.mark.benchmark

SA = UserInfo(
    "system:serviceaccount:default:x",
    ("system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"),
)


@pytest.fixture
def rbac_plane() -> Any:
    from gangplane.controlplane import ControlPlane, ControlPlaneOptions

    cp = ControlPlane(ControlPlaneOptions(authorization_mode="RBAC"))
    api = cp.api
    roles = api.registry.get("rbac.authorization.k8s.io", "v1", "roles")
    bindings = api.registry.get("rbac.authorization.k8s.io", "v1", "rolebindings")
    assert roles is not None and bindings is not None
    rules = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]
    api.create(roles, "default", {"metadata": {"name": "r"}, "rules": rules})
    ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"}
    subjects = [{"kind": "ServiceAccount", "name": "x"}]
    api.create(bindings, "default", {"metadata": {"name": "r"}, "roleRef": ref, "subjects": subjects})
    return cp


@pytest.mark.parametrize(
    ("who", "method"),
    [("admin", "POST"), ("service-account-allowed", "GET"), ("service-account-denied", "POST")],
)
def test_rbac_decision_per_request(benchmark: Any, rbac_plane: Any, who: str, method: str) -> None:
    user = ADMIN if who == "admin" else SA
    authz = rbac_plane.api.authorization

    def decide() -> bool:
        attrs = request_attributes(user, method, "/api/v1/namespaces/default/pods", {})
        return authz.allowed(attrs)

    assert benchmark(decide) is (who != "service-account-denied")
