"""An update whose ``metadata.resourceVersion`` is not a string is kube's 400 decode error.

Found by the fuzz (tests/e2e/test_fuzz.py): the resourceVersion precondition was read before the
body's types were checked, so ``["1"]`` was a 500, ``5`` and ``true`` a 409 Conflict and ``{}``
an unconditional update that succeeded. kube decodes the body first: each is
``cannot unmarshal … into Go struct field ObjectMeta.metadata.resourceVersion of type string``,
and the stored object is untouched.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import orjson
import pytest

from apiserver.server.app import APIApp
from apiserver.server.instance import build_api, new_metrics_registry

CM = "/api/v1/namespaces/default/configmaps"
JSON = {"Content-Type": "application/json"}


def _requests(*calls: tuple[str, str, Any]) -> list[httpx.Response]:
    reg, metrics = new_metrics_registry()
    app = APIApp(build_api(), metrics, reg).asgi()

    async def go() -> list[httpx.Response]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
            return [
                await c.request(
                    method, url, content=orjson.dumps(body) if body is not None else None, headers=JSON
                )
                for method, url, body in calls
            ]

    return asyncio.run(go())


@pytest.mark.parametrize(("rv", "go_type"), [({}, "object"), (5, "number"), (["1"], "array"), (True, "bool")])
def test_a_non_string_resource_version_on_update_is_a_400_and_changes_nothing(rv: Any, go_type: str) -> None:
    created, update, after = _requests(
        ("POST", CM, {"metadata": {"name": "cm"}, "data": {"k": "v"}}),
        ("PUT", f"{CM}/cm", {"metadata": {"name": "cm", "resourceVersion": rv}, "data": {"k": "changed"}}),
        ("GET", f"{CM}/cm", None),
    )
    assert created.status_code == 201
    assert update.status_code == 400, update.text
    assert update.json()["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal '
        f"{go_type} into Go struct field ObjectMeta.metadata.resourceVersion of type string"
    )
    assert after.content == created.content
