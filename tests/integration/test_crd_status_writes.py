"""CRD ``/status`` writes never leave a CRD its controller cannot read (issue 25, N4).

kube's CRD status strategy validates ``status.storedVersions`` on every status write (at least
one entry, the storage version among them): ``{"status": null}`` and a PUT without a status are
422 naming the field, and the CRD stays Established. A status the API does accept with its names
and conditions cleared is rebuilt by the naming and establishing steps, as kube's controllers
rebuild it, and its custom resources stay served.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest

from gangplane.controlplane import ControlPlane
from tests.crd_support import CRDS, CRONTABS, condition, crontab, crontab_crd
from tests.helpers import wait_for_object

pytestmark = pytest.mark.anyio

NAME = "crontabs.stable.example.com"
STATUS = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{NAME}/status"
MERGE = {"Content-Type": "application/merge-patch+json"}


def _established(crd: Any) -> bool:
    c = condition(crd or {}, "Established")
    return c is not None and c["status"] == "True"


@pytest.fixture
async def http(cp: ControlPlane) -> AsyncIterator[httpx.AsyncClient]:
    url = await cp.serve_http("127.0.0.1", 0)
    async with httpx.AsyncClient(base_url=url) as c:
        yield c


async def _established_crd(client: Any) -> Any:
    await client.create(CRDS, crontab_crd())
    return await wait_for_object(client, CRDS, NAME, cond=_established)


async def test_a_status_write_that_drops_the_stored_versions_is_refused(
    client: Any, http: httpx.AsyncClient
) -> None:
    before = await _established_crd(client)
    r = await http.patch(STATUS, content=b'{"status":null}', headers=MERGE)
    assert r.status_code == 422, r.text
    assert r.json()["details"]["causes"][0]["field"] == "status.storedVersions"
    assert "must have at least one stored version" in r.json()["message"]
    body = {k: v for k, v in before.items() if k != "status"}
    r = await http.put(STATUS, content=orjson.dumps(body), headers={"Content-Type": "application/json"})
    assert r.status_code == 422, r.text
    r = await http.patch(STATUS, content=b'{"status":{"storedVersions":["v9"]}}', headers=MERGE)
    assert r.status_code == 422, r.text
    assert "must have the storage version v1" in r.json()["message"]
    after = await client.get(CRDS, NAME)
    assert after["status"] == before["status"]
    assert _established(after)


async def test_cleared_names_and_conditions_are_rebuilt_and_the_kind_stays_served(
    client: Any, http: httpx.AsyncClient
) -> None:
    await _established_crd(client)
    r = await http.patch(
        STATUS, content=b'{"status":{"conditions":null,"acceptedNames":null}}', headers=MERGE
    )
    assert r.status_code == 200, r.text
    crd = await wait_for_object(
        client,
        CRDS,
        NAME,
        cond=lambda o: _established(o) and o["status"]["acceptedNames"].get("kind") == "CronTab",
    )
    assert condition(crd, "NamesAccepted")["status"] == "True"
    assert crd["status"]["storedVersions"] == ["v1"]
    created = await client.create(CRONTABS, crontab("after"), "default")
    assert created["metadata"]["name"] == "after"
