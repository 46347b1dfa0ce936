"""The token controller and legacy (Secret-held) service-account tokens, in-process.

What a user sees: a ``kubernetes.io/service-account-token`` Secret gets ``data.token``,
``data.namespace`` (and ``ca.crt`` over TLS) and the account's uid; the token authenticates as
the account (a TokenReview says so) while the Secret holds it and the account lives; the Secret
goes with its account; using the token labels the Secret with the day.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any

import jwt
import pytest

from apiserver.auth.serviceaccount import (
    INVALID_SINCE_LABEL,
    LAST_USED_LABEL,
    LEGACY_ISSUER,
    legacy_claims,
)
from apiserver.client.interface import GVR, SECRETS, SERVICEACCOUNTS
from controllers.manager import SERVICEACCOUNT_TOKEN, register_controllers
from controllers.serviceaccount.tokens import TokensController, belongs_to, missing_data, token_secret_account
from controllers.testing import wait_object
from gangplane.controlplane import ControlPlane

pytestmark = pytest.mark.anyio

NS = "default"
TOKENREVIEWS = GVR("authentication.k8s.io", "v1", "tokenreviews")


@pytest.fixture
async def ctrl(cp: ControlPlane) -> AsyncIterator[TokensController]:
    register_controllers(cp, "serviceaccount-token")
    c = await cp.start_component(SERVICEACCOUNT_TOKEN)
    assert isinstance(c, TokensController)
    yield c


def token_secret(name: str, account: str, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "annotations": {"kubernetes.io/service-account.name": account}},
        "type": "kubernetes.io/service-account-token",
        **extra,
    }


def decoded(secret: dict[str, Any], key: str) -> str:
    return base64.b64decode(secret["data"][key]).decode()


async def review(client: Any, token: str) -> dict[str, Any]:
    tr = await client.create(
        TOKENREVIEWS,
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}},
    )
    return tr["status"]


async def filled(client: Any, name: str) -> dict[str, Any]:
    secret = await wait_object(
        client, SECRETS, name, NS, lambda o: o is not None and "token" in (o.get("data") or {})
    )
    assert secret is not None
    return secret


def test_legacy_claims_are_kubes() -> None:
    assert legacy_claims("ns", "builder", "u-1", "builder-token") == {
        "iss": "kubernetes/serviceaccount",
        "kubernetes.io/serviceaccount/namespace": "ns",
        "kubernetes.io/serviceaccount/secret.name": "builder-token",
        "kubernetes.io/serviceaccount/service-account.name": "builder",
        "kubernetes.io/serviceaccount/service-account.uid": "u-1",
        "sub": "system:serviceaccount:ns:builder",
    }


def test_which_secrets_are_an_accounts_tokens() -> None:
    sa = {"metadata": {"name": "builder", "namespace": NS, "uid": "u-1"}}
    plain = {"metadata": {"name": "s", "namespace": NS}, "type": "Opaque"}
    assert token_secret_account(plain) is None
    mine = {
        **token_secret("t", "builder"),
        "metadata": {**token_secret("t", "builder")["metadata"], "namespace": NS},
    }
    assert token_secret_account(mine) == ("builder", "") and belongs_to(mine, sa)
    mine["metadata"]["annotations"]["kubernetes.io/service-account.uid"] = "u-0"  # an earlier account
    assert not belongs_to(mine, sa)
    assert missing_data({"data": {}}, b"") == (False, True, True)
    ca = base64.b64encode(b"PEM").decode()
    assert missing_data({"data": {"ca.crt": ca, "namespace": "x", "token": "y"}}, b"PEM") == (
        False,
        False,
        False,
    )
    assert missing_data({"data": {"namespace": "x", "token": "y"}}, b"PEM") == (True, False, False)


async def test_a_token_secret_is_filled_and_its_token_authenticates_as_the_account(
    client: Any, ctrl: TokensController
) -> None:
    sa = await client.create(SERVICEACCOUNTS, {"metadata": {"name": "builder"}}, NS)
    await client.create(SECRETS, token_secret("builder-token", "builder"), NS)
    secret = await filled(client, "builder-token")
    assert decoded(secret, "namespace") == NS
    assert "ca.crt" not in secret["data"]  # served without TLS: no root CA to publish
    assert secret["metadata"]["annotations"]["kubernetes.io/service-account.uid"] == sa["metadata"]["uid"]
    token = decoded(secret, "token")
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["iss"] == LEGACY_ISSUER and "exp" not in claims
    status = await review(client, token)
    assert status["authenticated"] is True
    assert status["user"]["username"] == "system:serviceaccount:default:builder"
    assert status["user"]["groups"] == [
        "system:serviceaccounts",
        "system:serviceaccounts:default",
        "system:authenticated",
    ]
    # the use is tracked on the Secret, as kube's legacy token tracking does
    used = await wait_object(client, SECRETS, "builder-token", NS)
    assert used is not None and LAST_USED_LABEL in used["metadata"]["labels"]


async def test_a_changed_or_invalidated_token_no_longer_authenticates(
    client: Any, ctrl: TokensController
) -> None:
    await client.create(SERVICEACCOUNTS, {"metadata": {"name": "builder"}}, NS)
    await client.create(SECRETS, token_secret("builder-token", "builder"), NS)
    token = decoded(await filled(client, "builder-token"), "token")
    await client.patch(
        SECRETS, "builder-token", {"metadata": {"labels": {INVALID_SINCE_LABEL: "2026-01-01"}}}, NS
    )
    status = await review(client, token)
    assert status["authenticated"] is False and "has been marked invalid" in status["error"]
    other = base64.b64encode(b"another.token.value").decode()
    await client.patch(
        SECRETS,
        "builder-token",
        {"metadata": {"labels": {INVALID_SINCE_LABEL: None}}, "data": {"token": other}},
        NS,
    )
    status = await review(client, token)
    assert status["authenticated"] is False and "Token does not match server's copy" in status["error"]


async def test_deleting_the_account_deletes_its_token_secrets_and_revokes_the_token(
    client: Any, ctrl: TokensController
) -> None:
    await client.create(SERVICEACCOUNTS, {"metadata": {"name": "builder"}}, NS)
    await client.create(SECRETS, token_secret("builder-token", "builder"), NS)
    await client.create(SECRETS, {"metadata": {"name": "unrelated"}, "stringData": {"k": "v"}}, NS)
    token = decoded(await filled(client, "builder-token"), "token")
    await client.delete(SERVICEACCOUNTS, "builder", NS)
    assert await wait_object(client, SECRETS, "builder-token", NS, lambda o: o is None) is None
    assert await client.get(SECRETS, "unrelated", NS)
    status = await review(client, token)
    assert status["authenticated"] is False and "Token has been invalidated" in status["error"]


async def test_a_secret_naming_no_account_is_deleted(client: Any, ctrl: TokensController) -> None:
    await client.create(SECRETS, token_secret("orphan-token", "nobody"), NS)
    assert await wait_object(client, SECRETS, "orphan-token", NS, lambda o: o is None) is None


async def test_a_secret_recording_an_earlier_accounts_uid_is_deleted(
    client: Any, ctrl: TokensController
) -> None:
    await client.create(SERVICEACCOUNTS, {"metadata": {"name": "builder"}}, NS)
    stale = token_secret("stale-token", "builder")
    stale["metadata"]["annotations"]["kubernetes.io/service-account.uid"] = "not-the-accounts-uid"
    await client.create(SECRETS, stale, NS)
    assert await wait_object(client, SECRETS, "stale-token", NS, lambda o: o is None) is None


async def test_ca_crt_is_the_servers_ca_once_it_serves_tls(cp: ControlPlane, client: Any) -> None:
    cp.root_ca = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
    register_controllers(cp, "serviceaccount-token")
    await cp.start_component(SERVICEACCOUNT_TOKEN)
    await client.create(SERVICEACCOUNTS, {"metadata": {"name": "builder"}}, NS)
    await client.create(SECRETS, token_secret("builder-token", "builder"), NS)
    secret = await wait_object(
        client, SECRETS, "builder-token", NS, lambda o: o is not None and "ca.crt" in (o.get("data") or {})
    )
    assert secret is not None and base64.b64decode(secret["data"]["ca.crt"]) == cp.root_ca
