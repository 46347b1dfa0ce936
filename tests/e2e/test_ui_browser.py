"""gangplane's live view (``/ui/``) in a real headless Chromium against a real ``gangplane serve``.

One server (HTTPS, bearer token, the default fleet) and one browser per module; the tests run in
order as a user would: log in with the printed URL, look at the fleet, ``kubectl apply`` the KEP's
Story 1 and Story 3, a gang that cannot fit, then a preemption. What is checked is what the page
draws from: the model, layout and hit-testing behind the canvas (``window.gangplane``) and the
panels' DOM.
"""

from __future__ import annotations

import json
import re
import ssl
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.browser import chromium, wait_page
from tests.e2e.conftest import Kubectl, Server, _start_server, _stop

pytestmark = pytest.mark.e2e

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ui"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
RACK = "topology.kubernetes.io/rack"
ZONE = "topology.kubernetes.io/zone"


def login_url(server: Server) -> str:
    log = (server.kubeconfig.parent / "serve.log").read_text()
    m = re.search(r"gangplane: live view \(one-time login link\): (\S+)", log)
    assert m, log
    return m.group(1)


def bearer(server: Server) -> str:
    return yaml.safe_load(server.kubeconfig.read_text())["users"][0]["user"]["token"]


@pytest.fixture(scope="module")
def ui_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = _start_server(tmp_path_factory.mktemp("ui"), [])
    yield s
    _stop(s)


@pytest.fixture(scope="module")
def browser(ui_server: Server) -> Iterator[Any]:
    with chromium() as driver:
        yield driver


@pytest.fixture(scope="module")
def kubectl_ui(ui_server: Server, kubectl137: Path) -> Kubectl:
    return Kubectl(kubectl137, ui_server, "1.37")


def http(server: Server) -> httpx.Client:
    return httpx.Client(base_url=server.url, verify=False, timeout=10)


def open_view(server: Server, browser: Any) -> None:
    """Make sure the browser shows the live view, logging in with a minted URL when it does not
    (each test can run alone; in file order the first test's login carries over)."""
    live = "return !!(window.gangplane && gangplane.reflectors.every(r => r.state === 'live'))"
    if browser.current_url.startswith(server.url + "/ui/") and browser.execute_script(live):
        return
    with http(server) as c:
        minted = c.post("/ui/login-urls", headers={"Authorization": f"Bearer {bearer(server)}"})
    browser.get(minted.json()["loginURL"])
    wait_page(
        browser, "return gp.reflectors.every(r => r.state === 'live') && gp.rendered();", what="live watches"
    )


def test_login_url_opens_the_board_with_the_default_fleet(ui_server: Server, browser: Any) -> None:
    url = login_url(ui_server)
    browser.get(url)
    assert browser.current_url == ui_server.url + "/ui/"  # the token leaves the address bar
    cookie = next(c for c in browser.get_cookies() if c["name"] == "gangplane-session")
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict" and cookie["secure"] is True
    racks = wait_page(
        browser,
        "return gp.model.nodes.size === 22 && gp.reflectors.every(r => r.state === 'live') && gp.rendered() && "
        "gp.layout.domains.map(d => [d.key, d.value, d.nodes.length]);",
        what="the default fleet",
    )
    assert [ZONE, "zone-a", 11] in racks and [ZONE, "zone-b", 11] in racks
    for zone in ("a", "b"):
        for r in (0, 1):
            assert [RACK, f"zone-{zone}-rack-{r}", 4] in racks
    assert browser.find_element("id", "who").text == "as kubernetes-admin"
    # the canvas is hit-tested from the same layout: a click on a node selects it
    rect = browser.execute_script("return gangplane.layout.nodes.get('gpu-zone-b-rack-1-2')")
    canvas = browser.find_element("id", "board")
    _click_canvas(browser, canvas, rect["x"] + rect["w"] - 3, rect["y"] + rect["h"] - 3)
    wait_page(
        browser, "return document.getElementById('selection').textContent.includes('gpu-zone-b-rack-1-2');"
    )
    sel = browser.find_element("id", "selection").text
    assert "rack-1" in sel and "0 / 96" in sel  # cpu requested / allocatable
    # the link was good for one visit
    with http(ui_server) as c:
        again = c.get(url.removeprefix(ui_server.url))
    assert again.status_code == 401 and "already used" in again.text


def _click_canvas(browser: Any, canvas: Any, x: float, y: float) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    size = canvas.size  # offsets are from the element's centre
    ActionChains(browser).move_to_element_with_offset(
        canvas, int(x - size["width"] / 2), int(y - size["height"] / 2)
    ).click().perform()


class BoundWatch:
    """When the API first shows ``n`` pods of ``selector`` bound (a watch over the bearer token)."""

    def __init__(self, server: Server, selector: str, n: int) -> None:
        self.at: float | None = None
        self._server, self._selector, self._n = server, selector, n
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        headers = {"Authorization": f"Bearer {bearer(self._server)}"}
        q = f"labelSelector={self._selector}&watch=1&timeoutSeconds=60"
        req = urllib.request.Request(
            f"{self._server.url}/api/v1/namespaces/default/pods?{q}", headers=headers
        )
        bound: set[str] = set()
        with urllib.request.urlopen(req, context=ctx, timeout=70) as resp:
            for line in resp:
                ev = json.loads(line)
                pod = ev["object"]
                if ev["type"] != "DELETED" and pod["spec"].get("nodeName"):
                    bound.add(pod["metadata"]["name"])
                if len(bound) >= self._n:
                    self.at = time.monotonic()
                    return
                if self._stop.is_set():
                    return

    def wait(self, timeout: float = 60) -> float:
        self._thread.join(timeout)
        assert self.at is not None, f"the API never showed {self._n} pods of {self._selector} bound"
        return self.at


GANG_IN_ONE_RACK = """
const pods = [...gp.model.pods.values()].filter(p => p.name.startsWith('%(prefix)s-') && p.node);
if (pods.length !== %(n)d) return null;
const racks = new Set(pods.map(p => gp.model.nodes.get(p.node).labels['topology.kubernetes.io/rack']));
const groups = new Set(pods.map(p => p.group));
if (!gp.rendered()) return null;
return {racks: [...racks], groups: [...groups], nodes: pods.map(p => p.node)};
"""


def test_story_1_and_story_3_gangs_appear_and_story_3_fills_one_rack(
    ui_server: Server, browser: Any, kubectl_ui: Kubectl
) -> None:
    open_view(ui_server, browser)
    watch = BoundWatch(ui_server, "app=training-shards", 8)
    kubectl_ui.run("apply", "-f", str(EXAMPLES / "gang-statefulset.yaml"))
    kubectl_ui.run("apply", "-f", str(FIXTURES / "story3-rack-local-training.yaml"))
    applied = time.monotonic()
    api_bound = watch.wait()
    shown = wait_page(
        browser, GANG_IN_ONE_RACK % {"prefix": "training-shards", "n": 8}, timeout=30, what="Story 3"
    )
    seen = time.monotonic()
    # the view's own latency: the gang is drawn in its rack within 1 s of the API having bound it
    assert seen - api_bound <= 1.0, f"drawn {seen - api_bound:.2f}s after the API bound the gang"
    print(
        f"Story 3 gang drawn {seen - applied:.2f}s after kubectl apply, {seen - api_bound:.3f}s after binding"
    )
    assert len(shown["racks"]) == 1 and shown["racks"][0] is not None
    assert len(shown["groups"]) == 1 and shown["groups"][0].startswith("default/training-shards-")
    assert wait_page(browser, _all_bound_js("cockroachdb", 5), what="Story 1's gang bound") == 5
    # the gangs panel: policy, minCount, scheduled/total, topology, disruptionMode, the condition
    group = shown["groups"][0]
    row = wait_page(
        browser,
        f"const li = document.querySelector('#gangs li[data-key=\"{group}\"]');"
        "return li && li.textContent.includes('8/8') && li.textContent;",
        what="the Story 3 gang row",
    )
    for text in (
        "gang minCount=8",
        "scheduled 8/8",
        "topology topology.kubernetes.io/rack",
        "disruptionMode single",
        "PodGroupInitiallyScheduled=True (Scheduled)",
    ):
        assert text in row, row
    # selecting the gang highlights its pods (others faded) and its placement domain (the rack)
    browser.find_element("css selector", f'#gangs li[data-key="{group}"]').click()
    sel = wait_page(
        browser,
        "return document.getElementById('selection').textContent.includes('placement') && "
        "document.getElementById('selection').textContent;",
    )
    assert f"rack: {shown['racks'][0]}" in sel and "8/8" in sel
    domains = browser.execute_script(f"return gangplane.gangDomains('{group}').values")
    assert domains == shown["racks"]


def _all_bound_js(prefix: str, n: int) -> str:
    return (
        f"const pods = [...gp.model.pods.values()].filter(p => p.name.startsWith('{prefix}-') && p.node && p.group);"
        f"return gp.rendered() && pods.length === {n} && pods.length;"
    )


def test_a_waiting_gang_shows_its_gangunschedulable_reason(
    ui_server: Server, browser: Any, kubectl_ui: Kubectl
) -> None:
    open_view(ui_server, browser)
    kubectl_ui.run("apply", "-f", str(FIXTURES / "waiting-gang.yaml"))
    reason = wait_page(
        browser,
        "const li = [...document.querySelectorAll('#gangs li.gang.waiting')].find(l => l.dataset.key.startsWith('default/too-big-'));"
        # the row shows the condition's message until the GangUnschedulable event arrives, then the event's
        "const r = li && li.querySelector('.reason');"
        "return r && gp.model.gangEvent.has(li.dataset.key) && gp.rendered() && r.textContent;",
        what="the waiting gang's reason",
    )
    events = json.loads(
        kubectl_ui.run("get", "events", "--field-selector", "reason=GangUnschedulable", "-o", "json").stdout
    )
    messages = {e["message"] for e in events["items"] if e["involvedObject"]["name"].startswith("too-big-")}
    assert reason in messages, (reason, messages)
    assert re.match(r"best placement \S+ fits \d of 5; the other \d: Insufficient nvidia.com/gpu", reason), (
        reason
    )
    assert "5/0" not in reason
    # training-shards is Story 3's set: there only when that test ran before this one on this
    # worker's server (pytest -k, or xdist handing the module's tests to both workers)
    kubectl_ui.run(
        "delete", "statefulset", "too-big", "training-shards", "--wait=false", "--ignore-not-found"
    )
    wait_page(
        browser,
        "return ![...gp.model.pods.values()].some(p => p.name.startsWith('too-big-') || p.name.startsWith('training-shards-'));",
        timeout=60,
        what="the deleted sets' pods gone",
    )


def test_a_preemption_shows_its_victims_linked_to_the_preemptor(
    ui_server: Server, browser: Any, kubectl_ui: Kubectl
) -> None:
    open_view(ui_server, browser)
    kubectl_ui.run("apply", "-f", str(FIXTURES / "preemption.yaml"))
    wait_page(
        browser,
        "return [...gp.model.pods.values()].filter(p => p.name.startsWith('filler-') && p.node).length === 16;",
        timeout=60,
        what="16 filler pods bound",
    )
    kubectl_ui.run("apply", "-f", str(FIXTURES / "preemptor.yaml"))
    entry = wait_page(
        browser,
        "const li = [...document.querySelectorAll('#timeline li.preemption')].find(l => l.dataset.preemptor.startsWith('PodGroup/urgent-'));"
        "const victims = li ? [...li.querySelectorAll('.victims a')].map(a => a.textContent) : [];"
        # two whole-GPU-node pods need two nodes' filler pods evicted
        "return victims.length === 2 && {preemptor: li.dataset.preemptor, victims, text: li.textContent};",
        timeout=60,
        what="a preemption entry with its two victims",
    )
    events = json.loads(
        kubectl_ui.run("get", "events", "--field-selector", "reason=Preempted", "-o", "json").stdout
    )
    victims = {
        e["involvedObject"]["name"] for e in events["items"] if e["related"]["name"].startswith("urgent-")
    }
    assert set(entry["victims"]) == victims and victims, (entry, victims)
    assert all(v.startswith("filler-") for v in victims)
    # a victim's link selects it
    browser.find_element("css selector", "#timeline li.preemption .victims a").click()
    wait_page(browser, "return document.getElementById('selection').textContent.includes('default/filler-');")
    wait_page(browser, _all_bound_js("urgent", 2), timeout=60, what="the preemptor gang bound")


def test_story_4_selecting_a_gang_lists_its_shared_resourceclaim(
    ui_server: Server, browser: Any, kubectl_ui: Kubectl
) -> None:
    open_view(ui_server, browser)
    kubectl_ui.run("apply", "-f", str(EXAMPLES / "shared-claim-statefulset.yaml"))
    group = wait_page(
        browser,
        "const k = [...gp.model.groups.keys()].find(k => k.startsWith('default/shard-server-'));"
        "return k && gp.gangFacts(k).bound === 4 && gp.claimsOfGroup(k).length === 1 && gp.rendered() && k;",
        timeout=60,
        what="the Story 4 gang bound with its claim",
    )
    browser.find_element("css selector", f'#gangs li[data-key="{group}"]').click()
    claim = wait_page(
        browser,
        "const li = document.querySelector('#selection .claims li'); return li && li.textContent;",
        what="the gang's ResourceClaim in the selection",
    )
    claims = json.loads(kubectl_ui.run("get", "resourceclaims", "-o", "json").stdout)["items"]
    mine = [
        c
        for c in claims
        if any(
            r.get("resource") == "podgroups" and r["name"] == group.split("/")[1]
            for r in c.get("status", {}).get("reservedFor", [])
        )
    ]
    assert len(mine) == 1
    result = mine[0]["status"]["allocation"]["devices"]["results"][0]
    assert claim == (
        f"default/{mine[0]['metadata']['name']}: {result['driver']}/{result['pool']}/{result['device']}"
    )
    kubectl_ui.run("delete", "statefulset", "shard-server", "--wait=false")


def test_a_request_from_another_origin_is_refused(
    ui_server: Server, browser: Any, kubectl_ui: Kubectl
) -> None:
    open_view(ui_server, browser)
    session = next(c for c in browser.get_cookies() if c["name"] == "gangplane-session")["value"]
    cookie = {"Cookie": f"gangplane-session={session}"}
    path = "/api/v1/namespaces/default/configmaps"
    with http(ui_server) as c:
        assert c.get(path, headers=cookie).status_code == 200  # the cookie alone is a login
        own = c.get(path, headers={**cookie, "Origin": ui_server.url, "Sec-Fetch-Site": "same-origin"})
        assert own.status_code == 200
        for hostile in (
            {"Origin": "https://evil.example"},
            {"Sec-Fetch-Site": "cross-site"},
            {"Sec-Fetch-Site": "same-site"},
            {"Origin": "http://127.0.0.1:1"},
        ):
            r = c.post(
                path,
                headers={**cookie, **hostile, "Content-Type": "application/json"},
                json={"metadata": {"name": "from-evil"}},
            )
            assert r.status_code == 403, (hostile, r.text)
            status = r.json()
            assert status["kind"] == "Status" and status["reason"] == "Forbidden"
            # a write meets the front door's cross-site guard first; a read, the cookie's own
            assert any(
                m in status["message"]
                for m in ("session cookie is not accepted", "cross-site request refused")
            )
        assert c.get(path, headers={"Cookie": "gangplane-session=forged"}).status_code == 401
    # and a real page on another origin, in the logged-in browser, gets nothing written
    page = _serve_page(
        f"""<script>
fetch('{ui_server.url}{path}', {{method: 'POST', mode: 'no-cors', credentials: 'include',
  headers: {{'Content-Type': 'text/plain'}}, body: JSON.stringify({{metadata: {{name: 'from-evil'}}}})}})
  .finally(() => {{ document.title = 'sent'; }});
</script>"""
    )
    try:
        browser.get(page.url)
        wait_page_title(browser, "sent")
    finally:
        page.close()
    got = kubectl_ui.run("get", "configmap", "from-evil", check=False)
    assert got.returncode != 0 and "NotFound" in got.stderr
    browser.get(ui_server.url + "/ui/")  # back to the view for the tests after this one
    # the page left behind ended its watches (pagehide): the new one gets connections at once,
    # where it used to wait a minute for the browser's six per origin
    wait_page(
        browser,
        "return gp.reflectors.every(r => r.state === 'live');",
        timeout=10,
        what="the view live again",
    )


def wait_page_title(browser: Any, title: str, timeout: float = 20) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, timeout).until(lambda d: d.title == title)


class _Page:
    def __init__(self, html: str) -> None:
        body = html.encode()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://localhost:{self._httpd.server_address[1]}/"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _serve_page(html: str) -> _Page:
    return _Page(html)


def test_login_urls_are_minted_only_for_a_bearer_token(ui_server: Server) -> None:
    with http(ui_server) as c:
        assert c.post("/ui/login-urls").status_code == 401
        r = c.post("/ui/login-urls", headers={"Authorization": f"Bearer {bearer(ui_server)}"})
        assert r.status_code == 201 and r.json()["user"] == "kubernetes-admin"
        assert r.json()["loginURL"].startswith(ui_server.url + "/ui/login?token=")
        assert c.post("/ui/login-urls", headers={"Authorization": "Bearer wrong"}).status_code == 401
        page = c.get("/ui/")
        assert page.status_code == 200 and "default-src 'self'" in page.headers["content-security-policy"]
        assert page.headers["x-frame-options"] == "DENY" and page.headers["referrer-policy"] == "no-referrer"


def test_a_dropped_watch_resumes_and_an_expired_one_relists(
    ui_server: Server, browser: Any, kubectl_ui: Kubectl
) -> None:
    open_view(ui_server, browser)
    nodes = "gp.reflectors.find(r => r.kind === 'nodes')"
    before = browser.execute_script(f"const gp = gangplane, r = {nodes}; return [r.relists, r.resumes];")
    # a dropped connection: the watch resumes from its last resourceVersion, no relist
    browser.execute_script(f"const gp = gangplane; {nodes}.drop();")
    kubectl_ui.run("label", "node", "cpu-zone-a-0", "seen=after-drop")
    wait_page(
        browser,
        f"return {nodes}.state === 'live' && gp.model.nodes.get('cpu-zone-a-0').labels.seen === 'after-drop';",
        what="the label set while the watch was down",
    )
    after = browser.execute_script(f"const gp = gangplane, r = {nodes}; return [r.relists, r.resumes];")
    assert after[0] == before[0] and after[1] == before[1] + 1, (before, after)
    # a resourceVersion the server no longer has: 410 Expired, then a relist
    browser.execute_script(f"const gp = gangplane, r = {nodes}; r.rv = '1'; r.drop();")
    kubectl_ui.run("label", "node", "cpu-zone-a-0", "seen=after-expiry", "--overwrite")
    wait_page(
        browser,
        f"return {nodes}.relists === {before[0] + 1} && {nodes}.state === 'live' && "
        "gp.model.nodes.get('cpu-zone-a-0').labels.seen === 'after-expiry';",
        what="a relist after 410",
    )


def test_under_rbac_the_view_shows_what_its_user_may_see(
    tmp_path_factory: pytest.TempPathFactory, kubectl137: Path
) -> None:
    server = _start_server(tmp_path_factory.mktemp("ui-rbac"), ["--authorization-mode=RBAC"])
    try:
        kubectl = Kubectl(kubectl137, server, "1.37")
        kubectl.run("create", "serviceaccount", "viewer")
        kubectl.run("create", "clusterrole", "node-viewer", "--verb=get,list,watch", "--resource=nodes")
        kubectl.run(
            "create",
            "clusterrolebinding",
            "viewer-nodes",
            "--clusterrole=node-viewer",
            "--serviceaccount=default:viewer",
        )
        token = kubectl.run("create", "token", "viewer").stdout.strip()
        with http(server) as c:
            minted = c.post("/ui/login-urls", headers={"Authorization": f"Bearer {token}"})
        assert minted.status_code == 201 and minted.json()["user"] == "system:serviceaccount:default:viewer"
        with chromium() as driver:
            driver.get(minted.json()["loginURL"])
            wait_page(
                driver, "return gp.model.nodes.size === 22 && gp.rendered();", what="the nodes it may list"
            )
            refused = wait_page(
                driver,
                "const t = document.getElementById('problems').textContent; return t.includes('pods') && t;",
                what="the refusal of pods",
            )
            assert (
                'pods is forbidden: User "system:serviceaccount:default:viewer" cannot list resource "pods"'
                in refused
            )
            assert driver.execute_script("return gangplane.model.pods.size") == 0
            # the session carries the account's rights and no more: a write is refused
            status = driver.execute_async_script(
                "const done = arguments[arguments.length - 1];"
                "fetch('/api/v1/namespaces/default/configmaps', {method: 'POST', credentials: 'same-origin',"
                " headers: {'Content-Type': 'application/json'}, body: JSON.stringify({metadata: {name: 'x'}})})"
                ".then(r => done(r.status));"
            )
            assert status == 403
            # a namespaced Role: the view confined to that namespace (?namespace=) lists its pods
            kubectl.run("create", "role", "pod-reader", "--verb=get,list,watch", "--resource=pods,events")
            kubectl.run(
                "create", "rolebinding", "viewer-pods", "--role=pod-reader", "--serviceaccount=default:viewer"
            )
            driver.get(server.url + "/ui/?namespace=default")
            states = wait_page(
                driver,
                "const s = Object.fromEntries(gp.reflectors.map(r => [r.kind, r.state]));"
                "return s.pods === 'live' && s.events === 'live' && s.nodes === 'live' && s;",
                what="pods and events of default listed",
            )
            assert states["podgroups"] == "refused" and states["resourceclaims"] == "refused"
    finally:
        _stop(server)


def test_pause_queues_watch_events_and_step_applies_them_one_by_one(
    ui_server: Server, browser: Any, kubectl_ui: Kubectl
) -> None:
    open_view(ui_server, browser)
    browser.find_element("id", "pause").click()
    assert browser.execute_script("return gangplane.paused") is True
    kubectl_ui.run("label", "node", "cpu-zone-b-1", "step=one")
    kubectl_ui.run("label", "node", "cpu-zone-b-2", "step=two")
    queued = wait_page(
        browser,
        "const q = gp.queue.filter(e => e.kind === 'nodes' && ['cpu-zone-b-1', 'cpu-zone-b-2'].includes(e.object.metadata.name));"
        "return q.length === 2 && gp.queue.length;",
        what="two node updates queued while paused",
    )
    assert browser.find_element("id", "queued").text == f"{queued} queued"
    labels = (
        "return ['cpu-zone-b-1', 'cpu-zone-b-2'].map(n => gangplane.model.nodes.get(n).labels.step || null)"
    )
    assert browser.execute_script(labels) == [None, None]  # nothing applied while paused
    step = browser.find_element("id", "step")
    for _ in range(queued):
        before = browser.execute_script("return gangplane.queue.length")
        step.click()
        wait_page(browser, f"return gp.queue.length === {before - 1};", what="one event applied")
    assert browser.execute_script(labels) == ["one", "two"]
    browser.find_element("id", "pause").click()  # resume
    assert browser.execute_script("return gangplane.paused") is False
