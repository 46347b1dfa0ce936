"""ServiceAccounts controller and the serviceaccounts/token subresource, in-process."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import jwt
import pytest

from apiserver import errors
from apiserver.client.interface import NAMESPACES, PODS, SERVICEACCOUNTS
from controllers.manager import SERVICEACCOUNT, register_controllers
from controllers.serviceaccount import ServiceAccountsController
from controllers.testing import wait_object
from gangplane.controlplane import ControlPlane

pytestmark = pytest.mark.anyio


@pytest.fixture
async def ctrl(cp: ControlPlane) -> AsyncIterator[ServiceAccountsController]:
    register_controllers(cp, "serviceaccount")
    c = await cp.start_component(SERVICEACCOUNT)
    assert isinstance(c, ServiceAccountsController)
    yield c


async def test_every_existing_namespace_gets_a_default_service_account(
    client: Any, ctrl: ServiceAccountsController
) -> None:
    for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
        assert await wait_object(client, SERVICEACCOUNTS, "default", ns) is not None


async def test_a_new_namespace_gets_default_and_it_is_recreated_when_deleted(
    client: Any, ctrl: ServiceAccountsController
) -> None:
    await client.create(NAMESPACES, {"metadata": {"name": "team-a"}})
    first = await wait_object(client, SERVICEACCOUNTS, "default", "team-a", timeout=1.0)
    assert first is not None
    await client.delete(SERVICEACCOUNTS, "default", "team-a")
    again = await wait_object(
        client,
        SERVICEACCOUNTS,
        "default",
        "team-a",
        lambda o: o is not None and o["metadata"]["uid"] != first["metadata"]["uid"],
    )
    assert again is not None


async def test_token_request_returns_a_signed_jwt_with_kube_claims(
    client: Any, ctrl: ServiceAccountsController
) -> None:
    sa = await wait_object(client, SERVICEACCOUNTS, "default", "default")
    assert sa is not None
    tr = await client.create_subresource(
        SERVICEACCOUNTS,
        "default",
        "token",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
        "default",
    )
    assert tr["kind"] == "TokenRequest" and tr["spec"]["expirationSeconds"] == 3600
    header = jwt.get_unverified_header(tr["status"]["token"])
    assert header["alg"] == "RS256" and header["kid"]
    claims = jwt.decode(tr["status"]["token"], options={"verify_signature": False})
    assert claims["sub"] == "system:serviceaccount:default:default"
    assert claims["iss"] == "https://kubernetes.default.svc.cluster.local"
    assert claims["aud"] == ["https://kubernetes.default.svc.cluster.local"]
    assert claims["exp"] - claims["iat"] == 3600
    assert claims["kubernetes.io"]["serviceaccount"] == {"name": "default", "uid": sa["metadata"]["uid"]}
    assert tr["status"]["expirationTimestamp"].endswith("Z")


async def test_token_request_bound_to_a_pod_and_validation(
    client: Any, ctrl: ServiceAccountsController
) -> None:
    await wait_object(client, SERVICEACCOUNTS, "default", "default")
    pod = await client.create(
        PODS,
        {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
        "default",
    )
    body = {
        "kind": "TokenRequest",
        "spec": {
            "audiences": ["vault"],
            "expirationSeconds": 900,
            "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p"},
        },
    }
    tr = await client.create_subresource(SERVICEACCOUNTS, "default", "token", body, "default")
    claims = jwt.decode(tr["status"]["token"], options={"verify_signature": False})
    assert claims["aud"] == ["vault"] and claims["kubernetes.io"]["pod"] == {
        "name": "p",
        "uid": pod["metadata"]["uid"],
    }
    with pytest.raises(errors.StatusError) as e:
        await client.create_subresource(
            SERVICEACCOUNTS,
            "default",
            "token",
            {"kind": "TokenRequest", "spec": {"expirationSeconds": 60}},
            "default",
        )
    assert e.value.code == 422
    assert (
        "spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes"
        in e.value.message
    )
    with pytest.raises(errors.StatusError) as e:
        await client.create_subresource(SERVICEACCOUNTS, "nope", "token", {"kind": "TokenRequest"}, "default")
    assert e.value.code == 404 and e.value.message == 'serviceaccounts "nope" not found'


async def test_token_binding_refuses_a_pod_of_another_service_account_and_unknown_kinds(
    client: Any, ctrl: ServiceAccountsController
) -> None:
    await client.create(SERVICEACCOUNTS, {"metadata": {"name": "robot"}}, "default")
    await client.create(
        PODS,
        {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
        "default",
    )
    body = {
        "kind": "TokenRequest",
        "spec": {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p"}},
    }
    with pytest.raises(errors.StatusError) as e:
        await client.create_subresource(SERVICEACCOUNTS, "robot", "token", body, "default")
    assert e.value.code == 400
    assert (
        e.value.message
        == 'cannot bind token for serviceaccount "robot" to pod running with different serviceaccount name.'
    )
    body["spec"]["boundObjectRef"] = {"kind": "Deployment", "apiVersion": "apps/v1", "name": "d"}
    with pytest.raises(errors.StatusError) as e:
        await client.create_subresource(SERVICEACCOUNTS, "robot", "token", body, "default")
    assert (e.value.code, e.value.message) == (
        400,
        "cannot bind token to object of type apps/v1, Kind=Deployment",
    )
