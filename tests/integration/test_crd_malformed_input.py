"""Malformed CRDs and custom resources get a 4xx Status naming the problem, never a 500: every
field of a CRD (and of a custom resource, its patches, its /status and /scale) replaced by a value
of each JSON type, sent over HTTP as a client would."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import orjson
import pytest

from apiserver.api.types import Obj
from gangplane.controlplane import ControlPlane
from tests.crd_support import crontab, crontab_crd

pytestmark = pytest.mark.anyio

JUNK: list[Any] = [None, 7, "x", [1], {"a": 1}]
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
CRONTABS = "/apis/stable.example.com/v1/namespaces/default/crontabs"


def replaced(base: Obj) -> Iterator[tuple[str, Obj]]:
    """``base`` with each of its values (at any depth) replaced by each of :data:`JUNK`."""
    paths: list[list[Any]] = []

    def walk(o: Any, p: list[Any]) -> None:
        if p:
            paths.append(p)
        if isinstance(o, dict):
            for k, v in o.items():
                walk(v, [*p, k])
        elif isinstance(o, list):
            for i, v in enumerate(o):
                walk(v, [*p, i])

    walk(base, [])
    for p in paths:
        for j in JUNK:
            b = copy.deepcopy(base)
            cur = b
            for k in p[:-1]:
                cur = cur[k]
            cur[p[-1]] = j
            yield ".".join(map(str, p)) + f"={j!r}", b


@pytest.fixture
async def http(cp: ControlPlane) -> AsyncIterator[httpx.AsyncClient]:
    url = await cp.serve_http("127.0.0.1", 0)
    async with httpx.AsyncClient(base_url=url) as c:
        yield c


async def test_malformed_crds_are_client_errors(http: httpx.AsyncClient) -> None:
    server_errors = []
    for what, body in replaced(crontab_crd()):
        r = await http.post(CRDS, content=orjson.dumps(body), headers={"Content-Type": "application/json"})
        if r.status_code >= 500:
            server_errors.append((what, r.text))
        elif r.status_code == 201:
            await http.delete(f"{CRDS}/{r.json()['metadata']['name']}")
        else:
            assert r.json()["kind"] == "Status" and 400 <= r.status_code < 500
    assert server_errors == []


async def test_malformed_custom_resources_and_patches_are_client_errors(http: httpx.AsyncClient) -> None:
    assert (await http.post(CRDS, json=crontab_crd())).status_code == 201
    server_errors = []
    for what, body in replaced(crontab("a", ports=[{"name": "p", "port": 1}], tags=["t"])):
        r = await http.post(
            CRONTABS, content=orjson.dumps(body), headers={"Content-Type": "application/json"}
        )
        if r.status_code >= 500:
            server_errors.append(("create " + what, r.text))
        elif r.status_code == 201:
            await http.delete(f"{CRONTABS}/a")
    assert (await http.post(CRONTABS, json=crontab("a"))).status_code == 201
    for key in ("cronSpec", "replicas", "mode", "port", "tags", "ports", "template", "extra"):
        for j in JUNK:
            for ctype, patch in (
                ("application/merge-patch+json", {"spec": {key: j}}),
                ("application/json-patch+json", [{"op": "add", "path": f"/spec/{key}", "value": j}]),
            ):
                for sub in ("", "/status"):
                    r = await http.patch(
                        f"{CRONTABS}/a{sub}", content=orjson.dumps(patch), headers={"Content-Type": ctype}
                    )
                    if r.status_code >= 500:
                        server_errors.append((f"patch{sub} {key}={j!r}", r.text))
    for j in JUNK:
        for body in ({"spec": {"replicas": j}}, {"spec": j}):
            r = await http.patch(
                f"{CRONTABS}/a/scale",
                content=orjson.dumps(body),
                headers={"Content-Type": "application/merge-patch+json"},
            )
            if r.status_code >= 500:
                server_errors.append((f"scale {body!r}", r.text))
    assert server_errors == []
