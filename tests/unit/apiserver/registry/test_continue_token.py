"""The ``continue`` token judged by Go's types, as kube's ``storage.DecodeContinue`` (issue 25, N2).

Every hostile token is a 400 ``invalid continue token: continue key is not valid…``; none is a
500, a 410 or a page of objects. A token the server made still pages through the list.
"""

from __future__ import annotations

import asyncio
import base64

import httpx
import pytest

from apiserver.registry import continuetoken
from apiserver.server.app import APIApp
from apiserver.server.instance import build_api, new_metrics_registry

CMS = "/api/v1/namespaces/default/configmaps"
V = '"v":"meta.k8s.io/v1"'
PREFIX = "invalid continue token: continue key is not valid"


def _b64(raw: str) -> str:
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _tok(fields: str) -> str:
    """A token of ``meta.k8s.io/v1`` with these further JSON fields."""
    return _b64("{" + V + "," + fields + "}")


def _pages(tokens: list[str], *, extra: str = "") -> list[httpx.Response]:
    reg, metrics = new_metrics_registry()
    app = APIApp(build_api(), metrics, reg).asgi()

    async def go() -> list[httpx.Response]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
            for i in range(3):
                await c.post(CMS, json={"metadata": {"name": f"cm{i}"}})
            return [
                await c.get(
                    CMS, params={"limit": "1", "continue": t, **({"resourceVersion": extra} if extra else {})}
                )
                for t in tokens
            ]

    return asyncio.run(go())


HOSTILE = [
    (
        "rv-over-uint64",
        _tok('"rv":99999999999999999999,"start":"x"'),
        "json: cannot unmarshal number 99999999999999999999 into Go struct field continueToken.rv of type int64",
    ),
    (
        "rv-int64-max-plus-one",
        _tok('"rv":9223372036854775808,"start":"x"'),
        "json: cannot unmarshal number 9223372036854775808 into Go struct field continueToken.rv of type int64",
    ),
    (
        "rv-int64-min-minus-one",
        _tok('"rv":-9223372036854775809,"start":"x"'),
        "json: cannot unmarshal number -9223372036854775809 into Go struct field continueToken.rv of type int64",
    ),
    (
        "rv-float",
        _tok('"rv":1.5,"start":"x"'),
        "json: cannot unmarshal number 1.5 into Go struct field continueToken.rv of type int64",
    ),
    (
        "rv-exponent",
        _tok('"rv":1e3,"start":"x"'),
        "json: cannot unmarshal number 1e3 into Go struct field continueToken.rv of type int64",
    ),
    (
        "rv-string",
        _tok('"rv":"1","start":"x"'),
        "json: cannot unmarshal string into Go struct field continueToken.rv of type int64",
    ),
    (
        "rv-bool",
        _tok('"rv":true,"start":"x"'),
        "json: cannot unmarshal bool into Go struct field continueToken.rv of type int64",
    ),
    (
        "rv-object",
        _tok('"rv":{},"start":"x"'),
        "json: cannot unmarshal object into Go struct field continueToken.rv of type int64",
    ),
    (
        "rv-zero",
        _tok('"rv":0,"start":"x"'),
        "incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
    ),
    (
        "rv-null",
        _tok('"rv":null,"start":"x"'),
        "incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
    ),
    (
        "rv-missing",
        _tok('"start":"x"'),
        "incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
    ),
    ("start-empty", _tok('"rv":1'), "encoded start key empty (version meta.k8s.io/v1)"),
    (
        "start-number",
        _tok('"rv":1,"start":5'),
        "json: cannot unmarshal number into Go struct field continueToken.start of type string",
    ),
    ("start-climbs-out", _tok('"rv":1,"start":"../../secrets/x"'), "../../secrets/x"),
    ("start-double-slash", _tok('"rv":1,"start":"//x"'), "//x"),
    (
        "version-unknown",
        _b64('{"v":"meta.k8s.io/v2","rv":1,"start":"x"}'),
        "server does not recognize this encoded version meta.k8s.io/v2",
    ),
    (
        "version-number",
        _b64('{"v":1,"rv":1,"start":"x"}'),
        "json: cannot unmarshal number into Go struct field continueToken.v of type string",
    ),
    ("json-null", _b64("null"), "server does not recognize this encoded version "),
    ("json-array", _b64("[1]"), "json: cannot unmarshal array into Go value of type storage.continueToken"),
    (
        "json-nan",
        _tok('"rv":NaN,"start":"x"'),
        "invalid character 'N' looking for beginning of value",
    ),
    ("not-json", _b64("{"), ""),
    ("padded-base64", _tok('"rv":1,"start":"x"') + "==", "illegal base64 data at input byte"),
    ("std-alphabet", "ab+/", "illegal base64 data at input byte 2"),
    ("one-char-tail", "abcde", "illegal base64 data at input byte 4"),
    ("non-ascii", "é", "illegal base64 data at input byte 0"),
]


@pytest.mark.parametrize(("token", "detail"), [pytest.param(t, d, id=n) for n, t, d in HOSTILE])
def test_a_hostile_continue_token_is_kubes_400(token: str, detail: str) -> None:
    (r,) = _pages([token])
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["reason"] == "BadRequest"
    assert body["message"].startswith(PREFIX)
    assert detail in body["message"]


def test_a_token_is_decoded_before_the_resource_version_is_checked() -> None:
    (r,) = _pages([_tok('"rv":1.5,"start":"x"')], extra="5")
    assert r.status_code == 400 and r.json()["message"].startswith(PREFIX), r.text


def test_go_field_rules_names_fold_case_and_unknown_fields_are_ignored() -> None:
    rv, start = continuetoken.decode(_b64('{"V":"meta.k8s.io/v1","Rv":7,"START":"ns/a","x":[1]}'))
    assert (rv, start) == (7, ("ns", "a"))
    assert continuetoken.decode(_tok('"rv":-1,"start":"ns/a"')) == (None, ("ns", "a"))


def test_a_token_from_the_future_is_too_large_a_resource_version() -> None:
    (r,) = _pages([_tok('"rv":9223372036854775807,"start":"default/cm0"')])
    assert (r.status_code, r.json()["reason"]) == (504, "Timeout"), r.text


def test_the_servers_own_tokens_still_page_and_a_negative_rv_continues_at_the_latest() -> None:
    reg, metrics = new_metrics_registry()
    app = APIApp(build_api(), metrics, reg).asgi()

    async def go() -> tuple[list[str], list[str]]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
            for i in range(3):
                await c.post(CMS, json={"metadata": {"name": f"cm{i}"}})
            names, token = [], ""
            while True:
                r = (await c.get(CMS, params={"limit": "1", **({"continue": token} if token else {})})).json()
                names += [i["metadata"]["name"] for i in r["items"]]
                token = r["metadata"].get("continue", "")
                if not token:
                    break
            latest = (
                await c.get(CMS, params={"limit": "5", "continue": _tok('"rv":-1,"start":"default/cm0"')})
            ).json()
            return names, [i["metadata"]["name"] for i in latest["items"]]

    names, after_cm0 = asyncio.run(go())
    assert names == ["cm0", "cm1", "cm2"]
    assert after_cm0 == ["cm1", "cm2"]
