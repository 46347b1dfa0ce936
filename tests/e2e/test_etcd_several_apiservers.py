"""Several API servers on one etcd: two ``gangplane serve --etcd-servers`` processes on a
three-member etcd serve the same cluster — a write through one is seen by a watch on the other,
in order, with the resourceVersions the first one answered; and both read the same objects."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import Server, _start_server, _stop
from tests.etcd_cluster import EtcdCluster

CMS = "/api/v1/namespaces/default/configmaps"


@pytest.fixture(scope="module")
def etcd3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdCluster]:
    with EtcdCluster(tmp_path_factory.mktemp("etcd3"), 3) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def two_servers(
    tmp_path_factory: pytest.TempPathFactory, etcd3: EtcdCluster
) -> Iterator[tuple[Server, Server]]:
    ends = [m.client_url for m in etcd3.members]
    # a runs every component; b is a second API server (no controllers) talking to other members first
    a = _start_server(
        tmp_path_factory.mktemp("a"), ["--no-tls", "--anonymous", "--etcd-servers", ",".join(ends)]
    )
    try:
        b = _start_server(
            tmp_path_factory.mktemp("b"),
            ["--no-tls", "--anonymous", "--controllers", "", "--etcd-servers", ",".join(reversed(ends))],
        )
    except BaseException:
        _stop(a)
        raise
    yield a, b
    _stop(b)
    _stop(a)


def _watch(url: str, rv: str, want: int, out: list[dict], done: threading.Event) -> None:
    with httpx.stream("GET", url, params={"watch": "1", "resourceVersion": rv}, timeout=30) as resp:
        for line in resp.iter_lines():
            if line:
                out.append(json.loads(line))
            if len(out) >= want:
                break
    done.set()


def test_a_write_through_one_server_is_seen_by_a_watch_on_the_other_in_order(two_servers) -> None:
    a, b = two_servers
    rv = httpx.get(b.url + CMS).json()["metadata"]["resourceVersion"]
    events: list[dict] = []
    done = threading.Event()
    watcher = threading.Thread(target=_watch, args=(b.url + CMS, rv, 4, events, done), daemon=True)
    watcher.start()
    made = httpx.post(a.url + CMS, json={"metadata": {"name": "shared"}, "data": {"v": "1"}})
    assert made.status_code == 201, made.text
    changed = httpx.put(
        a.url + CMS + "/shared", json={**made.json(), "data": {"v": "2"}}
    )  # carries the resourceVersion a answered: a compare on etcd's mod revision
    assert changed.status_code == 200, changed.text
    other = httpx.post(a.url + CMS, json={"metadata": {"name": "other"}})
    gone = httpx.delete(a.url + CMS + "/shared")
    assert other.status_code == 201 and gone.status_code == 200
    assert done.wait(30), f"watch on the second server saw only {events}"
    seen = [
        (e["type"], e["object"]["metadata"]["name"], e["object"]["metadata"]["resourceVersion"])
        for e in events
    ]
    rvs = [r.json()["metadata"]["resourceVersion"] for r in (made, changed, other)]
    assert seen[:3] == [
        ("ADDED", "shared", rvs[0]),
        ("MODIFIED", "shared", rvs[1]),
        ("ADDED", "other", rvs[2]),
    ]
    assert seen[3][:2] == ("DELETED", "shared") and int(seen[3][2]) > int(rvs[2])
    assert events[1]["object"]["data"] == {"v": "2"}


def test_both_servers_read_the_same_cluster(two_servers) -> None:
    a, b = two_servers
    made = httpx.post(b.url + CMS, json={"metadata": {"name": "from-b"}})
    assert made.status_code == 201, made.text
    got = httpx.get(a.url + CMS + "/from-b")  # a consistent read on a: etcd's newest revision
    assert got.status_code == 200 and got.json()["metadata"]["uid"] == made.json()["metadata"]["uid"]
    # the nodes a's node agent registered are served by b too
    names_a = {n["metadata"]["name"] for n in httpx.get(a.url + "/api/v1/nodes").json()["items"]}
    names_b = {n["metadata"]["name"] for n in httpx.get(b.url + "/api/v1/nodes").json()["items"]}
    assert names_a and names_a == names_b
    # an update through b with a's stale resourceVersion is a Conflict, as with one server
    stale = made.json()
    assert httpx.put(a.url + CMS + "/from-b", json={**stale, "data": {"by": "a"}}).status_code == 200
    refused = httpx.put(b.url + CMS + "/from-b", json={**stale, "data": {"by": "b"}})
    assert refused.status_code == 409 and refused.json()["reason"] == "Conflict"


def test_gangplane_serve_exits_2_when_etcd_is_unreachable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from apiserver.cli import main
    from tests.etcd_cluster import free_port

    url = f"http://127.0.0.1:{free_port()}"
    args = ["serve", "--port", "0", "--kubeconfig", str(tmp_path / "kc"), "--etcd-servers", url]
    assert main(args) == 2
    assert f"gangplane: cannot reach etcd at 127.0.0.1:{url.rsplit(':', 1)[1]}" in capsys.readouterr().err
