"""A watch's parameters are judged before its stream starts; a stream that cannot go on ends with
an ``ERROR`` event, never a cut connection (issue 25, N3).

kube decodes a Table watch's options (``includeObject``) before it answers, so a bad one is a 400
Status like the same LIST; boolean parameters are read by kube's parameter codec (only absent,
``0`` and ``false`` are false). An internal failure while events are written becomes a final
``ERROR`` event carrying a Status, as kube's watch server sends one.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import orjson
import pytest

from apiserver.server import tables
from apiserver.server.app import APIApp
from apiserver.server.instance import build_api, new_metrics_registry

CMS = "/api/v1/namespaces/default/configmaps"
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}


def _requests(calls: list[tuple[str, dict[str, str], dict[str, str]]]) -> list[httpx.Response]:
    reg, metrics = new_metrics_registry()
    app = APIApp(build_api(), metrics, reg).asgi()

    async def go() -> list[httpx.Response]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
            for name in ("a", "boom"):
                await c.post(CMS, json={"metadata": {"name": name}})
            return [await c.get(path, params=params, headers=headers) for path, params, headers in calls]

    return asyncio.run(go())


def _events(r: httpx.Response) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in r.content.splitlines() if line]


def test_a_table_watch_with_a_bad_include_object_is_a_400_before_the_stream() -> None:
    watch, listed = _requests(
        [
            (CMS, {"watch": "true", "includeObject": "x", "timeoutSeconds": "1"}, TABLE),
            (CMS, {"includeObject": "x"}, TABLE),
        ]
    )
    for r in (watch, listed):
        assert r.status_code == 400, r.text
        assert r.json()["message"] == 'unrecognized includeObject value: "x"'


def test_a_table_watch_with_a_good_include_object_streams_rows() -> None:
    (r,) = _requests([(CMS, {"watch": "1", "includeObject": "None", "timeoutSeconds": "1"}, TABLE)])
    assert r.status_code == 200
    rows = [e["object"]["rows"][0] for e in _events(r)]
    assert [row["cells"][0] for row in rows] == ["a", "boom"]
    assert all("object" not in row for row in rows)


@pytest.mark.parametrize(("value", "watches"), [("yes", True), ("", True), ("FALSE", False), ("0", False)])
def test_boolean_parameters_read_as_kubes_codec_reads_them(value: str, watches: bool) -> None:
    (r,) = _requests([(CMS, {"watch": value, "timeoutSeconds": "1"}, {})])
    assert r.status_code == 200
    if watches:
        assert [e["type"] for e in _events(r)] == ["ADDED", "ADDED"]
    else:
        assert r.json()["kind"] == "ConfigMapList"


def test_a_stream_that_cannot_go_on_ends_with_an_error_event(monkeypatch: pytest.MonkeyPatch) -> None:
    real = tables.to_table

    def breaks_on_boom(group: str, plural: str, objs: list[Any], *a: Any, **kw: Any) -> Any:
        if any(o["metadata"]["name"] == "boom" for o in objs):
            raise RuntimeError("printer failed")
        return real(group, plural, objs, *a, **kw)

    monkeypatch.setattr(tables, "to_table", breaks_on_boom)
    (r,) = _requests([(CMS, {"watch": "true", "timeoutSeconds": "5"}, TABLE)])
    assert r.status_code == 200
    events = _events(r)
    assert events[-1]["type"] == "ERROR"
    status = events[-1]["object"]
    assert (status["kind"], status["code"], status["reason"]) == ("Status", 500, "InternalError")
    assert "printer failed" in status["message"]
