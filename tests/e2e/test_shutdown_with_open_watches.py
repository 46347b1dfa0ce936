"""``gangplane serve`` stopped with watches open ends them cleanly (issue 25, noise).

The watch streams get their end (a complete chunked response, as kube-apiserver ends watches when
it shuts down) and the log has no "Exception in ASGI application" / CancelledError traceback.
"""

from __future__ import annotations

import threading
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import _start_server, _stop

pytestmark = pytest.mark.e2e


def test_sigterm_with_open_watches_ends_them_without_a_traceback(tmp_path: Path) -> None:
    server = _start_server(tmp_path, ["--no-tls", "--anonymous"])
    outcomes: list[str] = []
    started = threading.Barrier(4)

    def watch(path: str) -> None:
        try:
            with httpx.stream("GET", server.url + path, timeout=30) as r:
                started.wait(10)
                for _ in r.iter_bytes():
                    pass
            outcomes.append("ended")
        except httpx.HTTPError as e:
            outcomes.append(f"cut: {e!r}")

    paths = (
        "/api/v1/namespaces/default/configmaps?watch=true",
        "/api/v1/pods?watch=true&allowWatchBookmarks=true",
        "/apis/apps/v1/statefulsets?watch=1&timeoutSeconds=300",
    )
    threads = [threading.Thread(target=watch, args=(p,)) for p in paths]
    for t in threads:
        t.start()
    started.wait(10)
    _stop(server)
    for t in threads:
        t.join(30)
    log = (tmp_path / "serve.log").read_text()
    assert server.proc.returncode == 0, log
    assert outcomes == ["ended"] * 3, outcomes
    assert "Exception in ASGI application" not in log, log
    assert "CancelledError" not in log and "Traceback" not in log, log
