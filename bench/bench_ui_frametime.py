"""Main-thread cost of the live view (``/ui/``) at 5,000 nodes and 50,000 pods, in real headless Chromium.

The view's files are served as they ship (``gangplane/ui/static``) from a loopback file server and
opened with ``?offline=1`` (no API calls); the cluster is generated in the page with the shapes
``gangplane serve`` answers (Nodes with allocatable and topology labels, Pods with requests and
``spec.schedulingGroup``, PodGroups with gang policy and a rack topology constraint), fed through
the same entry points as a watch: a relist, then watch-event lines (``{"type":…,"object":…}``
text, parsed by the page as a streamed line is). What is timed with ``performance.now()`` is what
the page does on its main thread for an update: the JSON parse of the lines, applying them to the
model and redrawing (the canvas and the panels) — one update per animation frame.

Updates measured: one pod event per frame (a pod bound / turning Running / terminating), a gang
binding at once (10 events in one frame), a PodGroup status update (the gangs panel), a node
turning NotReady and back, a node joining (a relayout and full redraw), a gang selection (full redraw with highlighting). Chromium's
CPU seconds over the run are printed beside (``/proc`` of its processes); the machine is shared,
so wall figures are upper bounds. Numbers go in notes and docs, never into assertions.

    python bench/bench_ui_frametime.py                       # 5,000 nodes, 50,000 pods
    python bench/bench_ui_frametime.py --nodes 500 --pods 5000 --json out.json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any

FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1600,1000",
)

# Builds the cluster inside the page (sending 50,000 pods over WebDriver would measure WebDriver).
GENERATE = r"""
const [nNodes, nPods, gang] = [arguments[0], arguments[1], arguments[2]];
const zones = 10, racksPerZone = Math.max(1, Math.round(nNodes / zones / 50));
const nodes = [], pods = [], groups = [];
for (let i = 0; i < nNodes; i++) {
  const z = i % zones, r = Math.floor(i / zones) % racksPerZone;
  nodes.push({apiVersion: 'v1', kind: 'Node', metadata: {name: `node-${String(i).padStart(5, '0')}`, resourceVersion: '1',
    labels: {'kubernetes.io/hostname': `node-${i}`, 'topology.kubernetes.io/region': 'region-1',
             'topology.kubernetes.io/zone': `zone-${z}`, 'topology.kubernetes.io/rack': `zone-${z}-rack-${r}`}},
    spec: {}, status: {capacity: {cpu: '96', memory: '768Gi', pods: '110', 'nvidia.com/gpu': '8'},
      allocatable: {cpu: '96', memory: '768Gi', pods: '110', 'nvidia.com/gpu': '8'},
      conditions: [{type: 'Ready', status: 'True', reason: 'KubeletReady'}]}});
}
const nGroups = Math.ceil(nPods / gang);
for (let g = 0; g < nGroups; g++) {
  groups.push({apiVersion: 'scheduling.k8s.io/v1beta1', kind: 'PodGroup', metadata: {name: `job-${g}`, namespace: 'default', resourceVersion: '1'},
    spec: {schedulingPolicy: {gang: {minCount: gang}}, schedulingConstraints: {topology: [{key: 'topology.kubernetes.io/rack'}]}, disruptionMode: {single: {}}},
    status: {conditions: [{type: 'PodGroupInitiallyScheduled', status: 'True', reason: 'Scheduled', message: ''}]}});
}
const pod = (i, node, phase) => ({apiVersion: 'v1', kind: 'Pod',
  metadata: {name: `job-${Math.floor(i / gang)}-${i % gang}`, namespace: 'default', uid: `uid-${i}`, resourceVersion: String(i + 2),
    labels: {app: `job-${Math.floor(i / gang)}`}},
  spec: {nodeName: node, schedulingGroup: {podGroupName: `job-${Math.floor(i / gang)}`}, priority: 0,
    containers: [{name: 'c', image: 'img', resources: {requests: {cpu: '4', memory: '8Gi', 'nvidia.com/gpu': '1'}, limits: {'nvidia.com/gpu': '1'}}}]},
  status: {phase, conditions: [{type: 'PodScheduled', status: 'True'}]}});
for (let i = 0; i < nPods; i++) pods.push(pod(i, nodes[(Math.floor(i / gang) * gang + (i % gang)) % nNodes].metadata.name, 'Running'));
window.__bench = {nodes, pods, groups, pod};
gangplane.relist('nodes', nodes); gangplane.relist('podgroups', groups); gangplane.relist('pods', pods);
for (const k of ['resourceclaims', 'resourceslices', 'events']) gangplane.relist(k, []);
"""

# Runs `steps` updates, one per animation frame, and returns the page's own measure of each.
RUN = r"""
const [kind, count, done] = [arguments[0], arguments[1], arguments[arguments.length - 1]];
const b = window.__bench, gp = window.gangplane, out = [];
let i = 0;
const nextFrame = () => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)));
const line = (type, object) => JSON.stringify({type, object});
(async () => {
  await nextFrame();
  for (; i < count; i++) {
    const n = b.nodes.length, p = b.pods.length;
    if (kind === 'pod') {
      const j = (i * 7919) % p, o = b.pod(j, b.nodes[(j * 31 + i) % n].metadata.name, i % 3 ? 'Running' : 'Pending');
      if (i % 5 === 0) o.metadata.deletionTimestamp = '2026-12-05T00:00:00Z';
      gp.ingest('pods', line('MODIFIED', o));
    } else if (kind === 'gang') {
      const g = (i * 131) % Math.floor(p / 10), node0 = (i * 17) % (n - 10);
      for (let k = 0; k < 10; k++) gp.ingest('pods', line('MODIFIED', b.pod(g * 10 + k, b.nodes[node0 + k].metadata.name, 'Running')));
    } else if (kind === 'podgroup') {
      const g = JSON.parse(JSON.stringify(b.groups[(i * 37) % b.groups.length]));
      g.status.conditions[0].status = i % 2 ? 'True' : 'False';
      gp.ingest('podgroups', line('MODIFIED', g));
    } else if (kind === 'node') {
      const o = JSON.parse(JSON.stringify(b.nodes[(i * 13) % n]));
      o.metadata.labels.team = `t-${i}`;
      o.status.conditions[0].status = i % 2 ? 'True' : 'False';
      gp.ingest('nodes', line('MODIFIED', o));
    } else if (kind === 'node-join') {
      const o = JSON.parse(JSON.stringify(b.nodes[i % n]));
      o.metadata.name = `joined-${i}`;
      gp.ingest('nodes', line('ADDED', o));
    } else if (kind === 'select') {
      gp.select(i % 2 ? null : {kind: 'group', key: `default/job-${(i * 11) % b.groups.length}`});
    }
    await nextFrame();
    out.push(gp.stats.last);
  }
  done(out);
})();
"""


def _cpu_seconds(root_pid: int) -> float:
    """User+system CPU of ``root_pid`` and its descendants (Chromium's browser, renderer, GPU…)."""
    tick = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    stats: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry.name))
            stats[int(entry.name)] = (int(fields[11]) + int(fields[12])) / tick
    total, todo = 0.0, [root_pid]
    while todo:
        pid = todo.pop()
        total += stats.get(pid, 0.0)
        todo.extend(children.get(pid, []))
    return total


@contextlib.contextmanager
def _static_server() -> Iterator[str]:
    root = resources.files("gangplane.ui").joinpath("static")

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _summary(values: list[float]) -> dict[str, float]:
    s = sorted(values)
    return {
        "n": len(s),
        "median_ms": round(statistics.median(s), 2),
        "p95_ms": round(s[max(0, int(len(s) * 0.95) - 1)], 2),
        "max_ms": round(s[-1], 2),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nodes", type=int, default=5000)
    p.add_argument("--pods", type=int, default=50000)
    p.add_argument("--gang", type=int, default=10, help="pods per PodGroup")
    p.add_argument("--steps", type=int, default=100, help="updates per kind")
    p.add_argument("--json", default="", help="also write the figures to this file")
    args = p.parse_args(argv)
    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if not chromium or not driver_path:
        print("needs Debian's chromium and chromium-driver: apt-get install chromium chromium-driver")
        return 2
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="gangplane-bench-chromium-")
    options = webdriver.ChromeOptions()
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.binary_location = chromium
    service = Service(driver_path)
    driver = webdriver.Chrome(options=options, service=service)
    result: dict[str, Any] = {"nodes": args.nodes, "pods": args.pods, "pods_per_group": args.gang}
    try:
        browser_pid = service.process.pid
        with _static_server() as base:
            driver.set_script_timeout(600)
            driver.get(f"{base}/index.html?offline=1")
            cpu0, wall0 = _cpu_seconds(browser_pid), time.monotonic()
            driver.execute_script(GENERATE, args.nodes, args.pods, args.gang)
            first = driver.execute_async_script(
                "const done = arguments[arguments.length - 1];"
                "const wait = () => gangplane.rendered() ? done(gangplane.stats.last) : requestAnimationFrame(wait);"
                "wait();"
            )
            result["initial_relist_ms"] = round(first, 1)
            result["initial_cpu_s"] = round(_cpu_seconds(browser_pid) - cpu0, 2)
            result["initial_wall_s"] = round(time.monotonic() - wall0, 2)
            shown = driver.execute_script(
                "return [gangplane.model.nodes.size, gangplane.model.pods.size, gangplane.layout.domains.length]"
            )
            result["model"] = {"nodes": shown[0], "pods": shown[1], "domains": shown[2]}
            for kind, steps in (
                ("pod", args.steps),
                ("gang", args.steps),
                ("podgroup", args.steps),
                ("node", args.steps),
                ("node-join", max(6, args.steps // 10)),
                ("select", max(6, args.steps // 10)),
            ):
                cpu0, wall0 = _cpu_seconds(browser_pid), time.monotonic()
                values = driver.execute_async_script(RUN, kind, steps)
                result[kind] = {
                    **_summary(values),
                    **(
                        {"last_full_draw": driver.execute_script("return gangplane.stats.fullDraw")}
                        if kind == "select"
                        else {}
                    ),
                    **(
                        {"last_layout_ms": driver.execute_script("return gangplane.stats.layoutMs")}
                        if kind == "node-join"
                        else {}
                    ),
                    "chromium_cpu_s": round(_cpu_seconds(browser_pid) - cpu0, 2),
                    "wall_s": round(time.monotonic() - wall0, 2),
                }
            result["chromium"] = driver.capabilities.get("browserVersion", "")
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
    print(json.dumps(result, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
