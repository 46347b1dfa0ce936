"""Objects nested up to the decoders' limit work through every verb over real HTTP, with stack to
spare; one level more is a 400 before any handler runs.

A custom resource with ``x-kubernetes-preserve-unknown-fields`` keeps whatever nesting it is
given, so it carries a :data:`~apiserver.patch.limits.MAX_DEPTH`-deep object through create
(strict field validation), get (object and Table), list, merge and JSON patch, server-side apply
by two managers (managed fields nest it five levels deeper), update and dry-run. The recursion
limit is lowered by 300 frames for the whole run, so every recursive walk of patching, apply,
pruning and validation has at least that much headroom under Python's default limit.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator

import httpx
import orjson
import pytest

from apiserver.patch.limits import MAX_DEPTH, max_depth
from gangplane.controlplane import ControlPlane
from tests.crd_support import crontab_crd

pytestmark = pytest.mark.anyio

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
CRONTABS = "/apis/stable.example.com/v1/namespaces/default/crontabs"
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
JSON = {"Content-Type": "application/json"}
MERGE = {"Content-Type": "application/merge-patch+json"}
JSONPATCH = {"Content-Type": "application/json-patch+json"}
APPLY = {"Content-Type": "application/apply-patch+yaml"}


def chain(levels: int) -> str:
    return '{"a":' * (levels - 1) + "{}" + "}" * (levels - 1)


def crontab_at(name: str, depth: int) -> bytes:
    """A CronTab ``depth`` levels deep: the object, ``spec``, then ``spec.extra``'s chain."""
    head = '{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"' + name + '"},'
    return (head + '"spec":{"cronSpec":"* * * * *","extra":' + chain(depth - 2) + "}}").encode()


@pytest.fixture
def headroom() -> Iterator[None]:
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(before - 300)
    try:
        yield
    finally:
        sys.setrecursionlimit(before)


@pytest.fixture
async def http(cp: ControlPlane) -> AsyncIterator[httpx.AsyncClient]:
    url = await cp.serve_http("127.0.0.1", 0)
    async with httpx.AsyncClient(base_url=url, timeout=60) as c:
        assert (await c.post(CRDS, json=crontab_crd())).status_code == 201
        yield c


async def test_objects_at_the_nesting_limit_work_through_every_verb(
    http: httpx.AsyncClient, headroom: None
) -> None:
    body = crontab_at("deep", MAX_DEPTH)
    assert max_depth(orjson.loads(body)) == MAX_DEPTH
    r = await http.post(CRONTABS + "?fieldValidation=Strict", content=body, headers=JSON)
    assert r.status_code == 201, r.text
    assert max_depth(r.json()["spec"]) == MAX_DEPTH - 1
    url = f"{CRONTABS}/deep"
    for path, headers in (
        (url, {}),
        (url + "?includeObject=Object", TABLE),
        (CRONTABS + "?includeObject=Object", TABLE),
        (CRONTABS, {}),
    ):
        assert (await http.get(path, headers=headers)).status_code == 200, path
    merge = '{"spec":{"extra":%s}}' % chain(MAX_DEPTH - 2)  # noqa: UP031
    assert (await http.patch(url, content=merge, headers=MERGE)).status_code == 200
    add = '[{"op":"add","path":"/spec/extra/b","value":%s}]' % chain(MAX_DEPTH - 3)  # noqa: UP031
    assert (await http.patch(url, content=add, headers=JSONPATCH)).status_code == 200
    r = await http.patch(url + "?fieldManager=one&force=true", content=body, headers=APPLY)
    assert r.status_code == 200, r.text
    other = body.replace(b'"a":{}', b'"a":{"z":1}')
    r = await http.patch(url + "?fieldManager=two&force=true", content=other, headers=APPLY)
    assert r.status_code == 200, r.text
    current = await http.get(url)
    r = await http.put(url + "?fieldValidation=Strict", content=current.content, headers=JSON)
    assert r.status_code == 200, r.text
    r = await http.post(CRONTABS + "?dryRun=All", content=crontab_at("dry", MAX_DEPTH), headers=JSON)
    assert r.status_code == 201, r.text
    # the same nesting written as block YAML (decoded, then scanned again for duplicate fields)
    block = "".join("  " * (i + 2) + "a:\n" for i in range(MAX_DEPTH - 3)) + "  " * (MAX_DEPTH - 1) + "b: 1\n"
    yaml_body = "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata: {name: yml}\n"
    yaml_body += "spec:\n  cronSpec: '* * * * *'\n  extra:\n" + block
    r = await http.post(
        CRONTABS + "?fieldValidation=Strict", content=yaml_body, headers={"Content-Type": "application/yaml"}
    )
    assert r.status_code == 201, r.text
    assert max_depth(r.json()["spec"]) == MAX_DEPTH - 1
    assert (await http.delete(url)).status_code == 200


async def test_one_level_past_the_limit_is_400_and_changes_nothing(http: httpx.AsyncClient) -> None:
    assert (await http.post(CRONTABS, content=crontab_at("ok", 10), headers=JSON)).status_code == 201
    before = (await http.get(f"{CRONTABS}/ok")).content
    too_deep = crontab_at("ok", MAX_DEPTH + 1)
    for method, url, headers in (
        ("POST", CRONTABS, JSON),
        ("PUT", f"{CRONTABS}/ok", JSON),
        ("PATCH", f"{CRONTABS}/ok", MERGE),
        ("PATCH", f"{CRONTABS}/ok?fieldManager=m", APPLY),
    ):
        r = await http.request(method, url, content=too_deep, headers=headers)
        assert r.status_code == 400, (method, url, r.text)
    # a JSON patch deepening the object past the limit: 422 naming the patch
    r = await http.patch(
        f"{CRONTABS}/ok",
        content='[{"op":"add","path":"/spec/extra/b","value":%s}]' % chain(MAX_DEPTH - 2),  # noqa: UP031
        headers=JSONPATCH,
    )
    assert r.status_code == 422 and "patch: Invalid value" in r.json()["message"]
    assert (await http.get(f"{CRONTABS}/ok")).content == before


def schema_chain(levels: int) -> str:
    """An ``openAPIV3Schema`` of ``levels`` nested object properties (two JSON levels each)."""
    s = '{"type":"object","x-kubernetes-preserve-unknown-fields":true}'
    for _ in range(levels):
        s = '{"type":"object","properties":{"a":' + s + "}}"
    return s


async def test_deep_crd_schemas_and_raw_extensions_work_near_the_limit(
    http: httpx.AsyncClient, headroom: None
) -> None:
    """A CRD whose schema nests 97 properties (structural checks, pruning, CEL, OpenAPI) and a
    ControllerRevision whose ``data`` is nested to the limit (strategic merge, apply)."""
    crd = crontab_crd(plural="deeps", singular="deep", kind="Deep", shortNames=[], categories=[])
    crd["spec"]["versions"] = crd["spec"]["versions"][:1]
    crd["spec"]["versions"][0].pop("additionalPrinterColumns")
    crd["spec"]["versions"][0].pop("subresources")
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = "SCHEMA"
    text = orjson.dumps(crd).decode().replace('"SCHEMA"', schema_chain(97))
    r = await http.post(CRDS, content=text, headers=JSON)
    assert r.status_code == 201, r.text
    r = await http.patch(
        f"{CRDS}/deeps.stable.example.com?fieldManager=m&force=true", content=text, headers=APPLY
    )
    assert r.status_code == 200, r.text
    assert (await http.get("/openapi/v3/apis/stable.example.com/v1")).status_code == 200
    cr = (
        '{"apiVersion":"stable.example.com/v1","kind":"Deep","metadata":{"name":"d"},"a":'
        + chain(MAX_DEPTH - 1)
        + "}"
    )
    r = await http.post("/apis/stable.example.com/v1/namespaces/default/deeps", content=cr, headers=JSON)
    assert r.status_code == 201, r.text

    revisions = "/apis/apps/v1/namespaces/default/controllerrevisions"
    rev = '{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"r"},"revision":1,"data":'
    rev += chain(MAX_DEPTH - 1) + "}"
    assert (
        await http.post(revisions + "?fieldValidation=Strict", content=rev, headers=JSON)
    ).status_code == 201
    smp = {"Content-Type": "application/strategic-merge-patch+json"}
    r = await http.patch(f"{revisions}/r", content='{"data":' + chain(MAX_DEPTH - 1) + "}", headers=smp)
    assert r.status_code == 200, r.text
    r = await http.patch(f"{revisions}/r?fieldManager=m&force=true", content=rev, headers=APPLY)
    assert r.status_code == 200, r.text
