"""``/livez``, ``/readyz`` and ``/healthz`` in kube's format: the checks listed with ``?verbose``,
``?exclude``, a failing check as a 500 listing them all, one check alone, and ``shutdown``."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from apiserver.server.app import APIApp
from apiserver.server.health import HealthChecks
from apiserver.server.instance import build_api, new_metrics_registry
from apiserver.storage.sqlite import SQLiteStorage

pytestmark = pytest.mark.anyio


def checks(reason: str | None = None, stopping: bool = False) -> HealthChecks:
    async def storage() -> str | None:
        return reason

    return HealthChecks(storage, lambda: stopping)


async def test_a_healthy_server_answers_ok_and_lists_its_checks_when_verbose() -> None:
    h = checks()
    assert await h.answer("readyz", "", False, []) == (ok := await h.answer("livez", "", False, []))
    assert (ok.status, ok.text) == (200, "ok")
    verbose = await h.answer("readyz", "", True, [])
    assert verbose is not None and verbose.text == (
        "[+]ping ok\n[+]etcd ok\n[+]etcd-readiness ok\n[+]shutdown ok\nreadyz check passed\n"
    )
    live = await h.answer("livez", "", True, ["etcd", "", "nope"])
    assert live is not None and live.text == (
        "[+]ping ok\n[+]etcd excluded: ok\n"
        'warn: some health checks cannot be excluded: no matches for "nope"\nlivez check passed\n'
    )


async def test_a_failing_check_is_a_500_that_withholds_the_reason_except_alone() -> None:
    h = checks("etcd request failed: connection refused")
    failed = await h.answer("readyz", "", False, [])
    assert failed is not None and (failed.status, failed.text) == (
        500,
        "[+]ping ok\n[-]etcd failed: reason withheld\n[-]etcd-readiness failed: reason withheld\n"
        "[+]shutdown ok\nreadyz check failed\n",
    )
    alone = await h.answer("livez", "etcd", False, [])
    assert alone is not None and (alone.status, alone.text) == (
        500,
        "internal server error: etcd request failed: connection refused\n",
    )
    excluded = await h.answer("livez", "", False, ["etcd"])
    assert excluded is not None and (excluded.status, excluded.text) == (200, "ok")
    assert await h.answer("readyz", "nope", False, []) is None


async def test_readyz_fails_its_shutdown_check_while_the_server_stops() -> None:
    h = checks(stopping=True)
    ready = await h.answer("readyz", "", False, [])
    live = await h.answer("livez", "", False, [])
    assert ready is not None and ready.status == 500 and "[-]shutdown failed: reason withheld\n" in ready.text
    assert live is not None and live.status == 200


def test_paths_are_parsed_to_endpoint_and_check() -> None:
    parse = HealthChecks.parse
    assert (parse("/readyz"), parse("/livez/etcd"), parse("/healthz/"), parse("/readyzz")) == (
        ("readyz", ""),
        ("livez", "etcd"),
        ("healthz", ""),
        None,
    )


async def test_a_sqlite_server_whose_commit_failed_is_not_ready(tmp_path: Path) -> None:
    store = SQLiteStorage(tmp_path)
    await store.start()
    reg, metrics = new_metrics_registry()
    app = APIApp(build_api(store=store), metrics, reg).asgi()
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
            assert (await c.get("/readyz")).text == "ok"
            store._failed = OSError(28, "No space left on device")
            r = await c.get("/readyz?verbose")
            assert r.status_code == 500 and "[-]etcd failed: reason withheld\n" in r.text
            assert r.headers["content-type"] == "text/plain; charset=utf-8"
            one = await c.get("/livez/etcd")
            assert one.status_code == 500
            assert (
                one.text
                == "internal server error: the SQLite storage failed to commit: [Errno 28] No space left on device\n"
            )
            assert (await c.get("/livez/nope")).status_code == 404
    finally:
        store._failed = None
        await store.close()
