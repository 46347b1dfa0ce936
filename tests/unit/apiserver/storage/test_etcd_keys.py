"""The etcd key layout is kube-apiserver's, and every key decodes back to where it came from."""

from __future__ import annotations

import pytest

from apiserver.storage.etcd import Endpoint, grpc_target, parse_servers
from apiserver.storage.etcd_keys import decode_key, encode_key, resource_prefix

CASES = [
    # (storage key, key, etcd key, apiVersion stored)
    (("", "pods"), ("default", "web-0"), "/registry/pods/default/web-0", "v1"),
    (("", "nodes"), ("", "node-1"), "/registry/minions/node-1", "v1"),
    (("", "services"), ("default", "kubernetes"), "/registry/services/specs/default/kubernetes", "v1"),
    (("", "endpoints"), ("default", "kubernetes"), "/registry/services/endpoints/default/kubernetes", "v1"),
    (("", "replicationcontrollers"), ("ns", "rc"), "/registry/controllers/ns/rc", "v1"),
    (("networking.k8s.io", "ingresses"), ("ns", "ing"), "/registry/ingress/ns/ing", "networking.k8s.io/v1"),
    (("apps", "statefulsets"), ("default", "web"), "/registry/statefulsets/default/web", "apps/v1"),
    (("", "namespaces"), ("", "default"), "/registry/namespaces/default", "v1"),
    (
        ("coordination.k8s.io", "leases"),
        ("kube-system", "kube-scheduler"),
        "/registry/leases/kube-system/kube-scheduler",
        "coordination.k8s.io/v1",
    ),
    (
        ("scheduling.k8s.io", "podgroups"),
        ("default", "g"),
        "/registry/podgroups/default/g",
        "scheduling.k8s.io/v1alpha1",
    ),
    (
        ("apiextensions.k8s.io", "customresourcedefinitions"),
        ("", "widgets.example.com"),
        "/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.example.com",
        "apiextensions.k8s.io/v1",
    ),
    (
        ("apiregistration.k8s.io", "apiservices"),
        ("", "v1.apps"),
        "/registry/apiregistration.k8s.io/apiservices/v1.apps",
        "apiregistration.k8s.io/v1",
    ),
    (
        ("example.com", "widgets"),
        ("default", "w1"),
        "/registry/example.com/widgets/default/w1",
        "example.com/v1",
    ),
    (
        ("example.com", "clusterwidgets"),
        ("", "c1"),
        "/registry/example.com/clusterwidgets/c1",
        "example.com/v1",
    ),
]


@pytest.mark.parametrize(("skey", "key", "etcd_key", "api_version"), CASES)
def test_keys_are_laid_out_as_kube_apiserver_does_and_decode_back(skey, key, etcd_key, api_version) -> None:
    assert encode_key("/registry/", skey, key) == etcd_key.encode()
    assert decode_key("/registry/", etcd_key.encode(), api_version) == (skey, key)


def test_resource_prefix_follows_storage_factory() -> None:
    assert resource_prefix(("", "nodes")) == "minions"
    assert resource_prefix(("batch", "jobs")) == "jobs"
    assert resource_prefix(("stable.example.com", "crontabs")) == "stable.example.com/crontabs"


def test_another_prefix_and_foreign_keys() -> None:
    assert encode_key("/gp/", ("", "pods"), ("a", "b")) == b"/gp/pods/a/b"
    assert decode_key("/gp/", b"/gp/pods/a/b", "v1") == (("", "pods"), ("a", "b"))
    assert decode_key("/gp/", b"/registry/pods/a/b", "v1") is None  # not under the prefix
    assert decode_key("/gp/", b"/gp/pods/a/b/c", "v1") is None  # no resource has that depth
    assert decode_key("/gp/", b"/gp/pods", "v1") is None


def test_etcd_servers_flag() -> None:
    assert parse_servers("http://127.0.0.1:2379, http://127.0.0.1:22379") == [
        Endpoint("127.0.0.1", 2379),
        Endpoint("127.0.0.1", 22379),
    ]
    assert grpc_target([Endpoint("127.0.0.1", 2379)]) == "127.0.0.1:2379"
    assert grpc_target([Endpoint("127.0.0.1", 1), Endpoint("127.0.0.2", 2)]) == "ipv4:127.0.0.1:1,127.0.0.2:2"
    for bad, why in [
        ("https://127.0.0.1:2379", "want http://host:port"),
        ("127.0.0.1:2379", "want http://host:port"),
        ("http://127.0.0.1:notaport", "bad port"),
        ("", "no server given"),
    ]:
        with pytest.raises(ValueError, match=why):
            parse_servers(bad)
