"""``/metrics`` exposes no ``<name>_created`` series (kube's component-base metrics have none)."""

from __future__ import annotations

import httpx
import pytest

from gangplane.controlplane import ControlPlane

pytestmark = pytest.mark.anyio


async def test_metrics_has_counters_and_histograms_but_no_created_series(cp: ControlPlane) -> None:
    await cp.start([])
    transport = httpx.ASGITransport(app=cp.app.asgi())
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        await http.get("/api/v1/namespaces/default/configmaps")
        text = (await http.get("/metrics")).text
    names = {
        line.split("{")[0].split(" ")[0] for line in text.splitlines() if line and not line.startswith("#")
    }
    assert "apiserver_request_total" in names
    assert "apiserver_request_duration_seconds_bucket" in names
    assert not [n for n in names if n.endswith("_created")]
    assert "# TYPE apiserver_request_total counter" in text
