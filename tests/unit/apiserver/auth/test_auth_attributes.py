"""kube's RequestInfoFactory as apiserver.auth.attributes.request_attributes."""

from __future__ import annotations

import pytest

from apiserver.api.users import UserInfo
from apiserver.auth.attributes import request_attributes

U = UserInfo("u")


@pytest.mark.parametrize(
    ("method", "path", "query", "expected"),
    [
        ("GET", "/api/v1/namespaces/default/pods", {}, ("list", "default", "", "pods", "", "")),
        (
            "GET",
            "/api/v1/namespaces/default/pods",
            {"watch": ["true"]},
            ("watch", "default", "", "pods", "", ""),
        ),
        ("GET", "/api/v1/namespaces/default/pods", {"watch": ["0"]}, ("list", "default", "", "pods", "", "")),
        (
            "GET",
            "/api/v1/namespaces/default/pods",
            {"watch": ["yes"]},
            ("watch", "default", "", "pods", "", ""),
        ),
        ("GET", "/api/v1/namespaces/default/pods/p", {}, ("get", "default", "", "pods", "p", "")),
        ("GET", "/api/v1/namespaces/default/pods/p/log", {}, ("get", "default", "", "pods", "p", "log")),
        ("POST", "/api/v1/namespaces/default/pods", {}, ("create", "default", "", "pods", "", "")),
        (
            "PUT",
            "/apis/apps/v1/namespaces/ns/deployments/d/scale",
            {},
            ("update", "ns", "apps", "deployments", "d", "scale"),
        ),
        ("PATCH", "/api/v1/nodes/n1/status", {}, ("patch", "", "", "nodes", "n1", "status")),
        ("DELETE", "/api/v1/namespaces/default/pods/p", {}, ("delete", "default", "", "pods", "p", "")),
        (
            "DELETE",
            "/api/v1/namespaces/default/pods",
            {},
            ("deletecollection", "default", "", "pods", "", ""),
        ),
        # the namespace object: the namespace is its own name; status/finalize are its subresources
        ("GET", "/api/v1/namespaces", {}, ("list", "", "", "namespaces", "", "")),
        ("GET", "/api/v1/namespaces/team", {}, ("get", "team", "", "namespaces", "team", "")),
        (
            "PUT",
            "/api/v1/namespaces/team/finalize",
            {},
            ("update", "team", "", "namespaces", "team", "finalize"),
        ),
        (
            "GET",
            "/apis/rbac.authorization.k8s.io/v1/clusterroles",
            {},
            ("list", "", "rbac.authorization.k8s.io", "clusterroles", "", ""),
        ),
        # list/watch of one name through a field selector carries the name (resourceNames rules)
        (
            "GET",
            "/api/v1/namespaces/default/configmaps",
            {"fieldSelector": ["metadata.name=cm"], "watch": ["1"]},
            ("watch", "default", "", "configmaps", "cm", ""),
        ),
        (
            "GET",
            "/api/v1/namespaces/default/configmaps",
            {"fieldSelector": ["metadata.name!=cm"]},
            ("list", "default", "", "configmaps", "", ""),
        ),
        ("GET", "/api/v1/watch/namespaces/default/pods", {}, ("watch", "default", "", "pods", "", "")),
        ("HEAD", "/api/v1/namespaces/default/pods/p", {}, ("get", "default", "", "pods", "p", "")),
    ],
)
def test_resource_requests(
    method: str, path: str, query: dict[str, list[str]], expected: tuple[str, ...]
) -> None:
    a = request_attributes(U, method, path, query)
    assert a.resource_request
    assert (a.verb, a.namespace, a.api_group, a.resource, a.name, a.subresource) == expected


@pytest.mark.parametrize(
    ("method", "path", "verb"),
    [
        ("GET", "/healthz", "get"),
        ("GET", "/api", "get"),
        ("GET", "/api/v1", "get"),
        ("GET", "/apis/apps/v1", "get"),
        ("GET", "/openapi/v3/apis/apps/v1", "get"),
        ("POST", "/version", "post"),
        ("GET", "/", "get"),
    ],
)
def test_non_resource_requests(method: str, path: str, verb: str) -> None:
    a = request_attributes(U, method, path, {})
    assert not a.resource_request and a.verb == verb and a.path == path
