"""Bound service-account tokens: issued claims authenticate while the account and bound object live."""

from __future__ import annotations

import os
from pathlib import Path

import jwt
import pytest

from apiserver.api.types import Obj
from apiserver.auth import serviceaccount as sat
from apiserver.auth.serviceaccount import (
    ISSUER,
    InvalidToken,
    ServiceAccountTokens,
    SigningKey,
    SigningKeyError,
)


class World:
    def __init__(self) -> None:
        self.now = 1_000_000.0
        self.objs: dict[tuple[str, str, str, str], Obj] = {
            ("", "serviceaccounts", "default", "x"): {"metadata": {"name": "x", "uid": "sa-uid"}},
            ("", "pods", "default", "p"): {"metadata": {"name": "p", "uid": "pod-uid"}},
        }

    def lookup(self, group: str, plural: str, ns: str, name: str) -> Obj | None:
        return self.objs.get((group, plural, ns, name))


def claims(now: float, **private: object) -> Obj:
    return {
        "aud": [ISSUER],
        "exp": int(now) + 3600,
        "iat": int(now),
        "nbf": int(now),
        "iss": ISSUER,
        "jti": "j-1",
        "sub": "system:serviceaccount:default:x",
        "kubernetes.io": {
            "namespace": "default",
            "serviceaccount": {"name": "x", "uid": "sa-uid"},
            **private,
        },
    }


@pytest.fixture
def world() -> World:
    return World()


def test_a_token_authenticates_as_its_service_account(world: World) -> None:
    tokens = ServiceAccountTokens(world.lookup, lambda: world.now)
    user = tokens(tokens.sign(claims(world.now)))
    assert user is not None
    assert user.username == "system:serviceaccount:default:x" and user.uid == "sa-uid"
    assert user.groups == ("system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated")
    assert user.extra == {sat.CREDENTIAL_ID: ["JTI=j-1"]}


def test_expiry_is_checked_against_the_servers_clock(world: World) -> None:
    tokens = ServiceAccountTokens(world.lookup, lambda: world.now)
    token = tokens.sign(claims(world.now))
    world.now += 3601
    assert tokens(token) is None
    with pytest.raises(InvalidToken, match="expired"):
        tokens.authenticate(token, sat.API_AUDIENCES)


def test_audiences_must_intersect(world: World) -> None:
    tokens = ServiceAccountTokens(world.lookup, lambda: world.now)
    token = tokens.sign({**claims(world.now), "aud": ["vault"]})
    assert tokens(token) is None
    user, valid = tokens.authenticate(token, ("vault", "other"))
    assert user is not None and valid == ["vault"]
    with pytest.raises(
        InvalidToken, match=r'token audiences \["vault"\] is invalid for the target audiences'
    ):
        tokens.authenticate(token, sat.API_AUDIENCES)


def test_deleting_the_account_or_the_bound_pod_revokes_the_token(world: World) -> None:
    tokens = ServiceAccountTokens(world.lookup, lambda: world.now)
    bound = tokens.sign(claims(world.now, pod={"name": "p", "uid": "pod-uid"}))
    user = tokens(bound)
    assert user is not None and user.extra[sat.POD_NAME] == ["p"] and user.extra[sat.POD_UID] == ["pod-uid"]
    world.objs[("", "pods", "default", "p")] = {"metadata": {"name": "p", "uid": "recreated"}}
    with pytest.raises(InvalidToken, match=r"pod UID \(recreated\) does not match claim \(pod-uid\)"):
        tokens.authenticate(bound, sat.API_AUDIENCES)
    plain = tokens.sign(claims(world.now))
    del world.objs[("", "serviceaccounts", "default", "x")]
    with pytest.raises(InvalidToken, match='serviceaccounts "x" not found'):
        tokens.authenticate(plain, sat.API_AUDIENCES)


def test_tokens_not_ours_are_passed_over(world: World) -> None:
    tokens = ServiceAccountTokens(world.lookup, lambda: world.now)
    assert tokens.authenticate("not-a-jwt", sat.API_AUDIENCES) == (None, [])
    foreign = jwt.encode({"iss": "https://elsewhere", "sub": "x"}, "s" * 32, algorithm="HS256")
    assert tokens.authenticate(foreign, sat.API_AUDIENCES) == (None, [])
    forged = jwt.encode(claims(world.now), "s" * 32, algorithm="HS256")
    with pytest.raises(InvalidToken):
        tokens.authenticate(forged, sat.API_AUDIENCES)


def test_a_node_bound_token_needs_its_node(world: World) -> None:
    tokens = ServiceAccountTokens(world.lookup, lambda: world.now)
    world.objs[("", "nodes", "", "n1")] = {"metadata": {"name": "n1", "uid": "node-uid"}}
    token = tokens.sign(claims(world.now, node={"name": "n1", "uid": "node-uid"}))
    user = tokens(token)
    assert (
        user is not None and user.extra[sat.NODE_NAME] == ["n1"] and user.extra[sat.NODE_UID] == ["node-uid"]
    )
    del world.objs[("", "nodes", "", "n1")]
    with pytest.raises(InvalidToken, match='nodes "n1" not found'):
        tokens.authenticate(token, sat.API_AUDIENCES)


def test_a_key_file_is_made_once_owner_only_and_read_back_by_the_next_process(
    world: World, tmp_path: Path
) -> None:
    path = tmp_path / "sa.key"
    first = ServiceAccountTokens(world.lookup, lambda: world.now, key=SigningKey(path, create=True))
    token = first.sign(claims(world.now))
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert path.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    again = ServiceAccountTokens(world.lookup, lambda: world.now, key=SigningKey(path, create=True))
    user = again(token)
    assert user is not None and user.username == "system:serviceaccount:default:x"
    other = ServiceAccountTokens(world.lookup, lambda: world.now)  # a key of its own: not ours
    with pytest.raises(InvalidToken, match="square/go-jose: error in cryptographic primitive"):
        other.authenticate(token, sat.API_AUDIENCES)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read service account key file .*: No such file or directory"),
        (b"not a key", "holds no unencrypted PEM private key"),
    ],
)
def test_an_unusable_key_file_is_refused_naming_it(
    tmp_path: Path, content: bytes | None, message: str
) -> None:
    path = tmp_path / "sa.key"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(SigningKeyError, match=message):
        SigningKey(path).check()
