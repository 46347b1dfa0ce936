// gangplane live view: the cluster's topology, nodes, pods and gangs on one <canvas>, fed by the
// Kubernetes API's list + watch (the same API and authorization kubectl uses; the session cookie
// authenticates). No polling: one watch per resource, resumed from its last resourceVersion after
// a drop, re-listed after 410 Gone, kept fresh by bookmarks.
'use strict';
(() => {
  const GPU_RESOURCE = /(^|\/)gpu$/;
  const PAGE = 500;
  const WATCH_TIMEOUT = 290;
  const EVENTS_KEPT = 1500;
  const TIMELINE_SHOWN = 300;
  const SCHED_REASONS = new Set([
    'Scheduled', 'FailedScheduling', 'GangUnschedulable', 'Preempted', 'Killing', 'Evicted',
    'NodeNotReady', 'TaintManagerEviction', 'DeletingPod', 'NodeNotSchedulable', 'RemovingNode',
  ]);
  const params = new URLSearchParams(location.search);
  const NAMESPACE = params.get('namespace') || '';
  const $ = (id) => document.getElementById(id);

  // ------------------------------------------------------------------ quantities
  const SUFFIX = {
    n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
    Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
  };
  function qty(s) {
    if (s === undefined || s === null) return 0;
    if (typeof s === 'number') return s;
    const m = /^([+-]?[0-9.]+)(?:[eE]([+-]?\d+))?([a-zA-Z]*)$/.exec(String(s).trim());
    if (!m) return 0;
    const f = SUFFIX[m[3]];
    return f === undefined ? 0 : parseFloat(m[1]) * (m[2] ? 10 ** parseInt(m[2], 10) : 1) * f;
  }
  function fmtBytes(b) {
    const u = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi'];
    let i = 0;
    while (b >= 1024 && i < u.length - 1) { b /= 1024; i++; }
    return `${Math.round(b * 10) / 10}${u[i]}`;
  }
  const fmtNum = (x) => String(Math.round(x * 100) / 100);

  // ------------------------------------------------------------------ colours
  const colorCache = new Map();
  function groupColor(key) {
    if (!key) return '#7d8696';
    let c = colorCache.get(key);
    if (!c) {
      let h = 2166136261;
      for (let i = 0; i < key.length; i++) { h ^= key.charCodeAt(i); h = Math.imul(h, 16777619); }
      c = `hsl(${(h >>> 0) % 360},70%,${58 + ((h >>> 9) % 3) * 6}%)`;
      colorCache.set(key, c);
    }
    return c;
  }

  // ------------------------------------------------------------------ the model
  const model = {
    nodes: new Map(), pods: new Map(), groups: new Map(), claims: new Map(), slices: new Map(), events: new Map(),
    podsByNode: new Map(), podsByGroup: new Map(), pending: new Set(), gangEvent: new Map(),
  };
  const dirty = { nodes: new Set(), gangKeys: new Set(), layout: true, full: true, tray: true, gangs: true, timeline: true, selection: true };
  let selection = null; // {kind: 'group'|'pod'|'node', key}

  function meta(o) { return o.metadata || {}; }
  function keyOf(o) { const m = meta(o); return m.namespace ? `${m.namespace}/${m.name}` : m.name; }

  function podRequests(spec) {
    const out = { cpu: 0, memory: 0, gpu: 0 };
    const add = (target, res) => {
      for (const [k, v] of Object.entries(res || {})) {
        if (k === 'cpu') target.cpu += qty(v); else if (k === 'memory') target.memory += qty(v);
        else if (GPU_RESOURCE.test(k)) target.gpu += qty(v);
      }
    };
    for (const c of spec.containers || []) add(out, (c.resources || {}).requests || (c.resources || {}).limits);
    const init = { cpu: 0, memory: 0, gpu: 0 };
    for (const c of spec.initContainers || []) {
      const one = { cpu: 0, memory: 0, gpu: 0 };
      add(one, (c.resources || {}).requests);
      if (c.restartPolicy === 'Always') { out.cpu += one.cpu; out.memory += one.memory; out.gpu += one.gpu; continue; }
      init.cpu = Math.max(init.cpu, one.cpu); init.memory = Math.max(init.memory, one.memory); init.gpu = Math.max(init.gpu, one.gpu);
    }
    out.cpu = Math.max(out.cpu, init.cpu); out.memory = Math.max(out.memory, init.memory); out.gpu = Math.max(out.gpu, init.gpu);
    return out;
  }

  function podInfo(o) {
    const m = meta(o), spec = o.spec || {}, st = o.status || {};
    const sg = spec.schedulingGroup || {};
    const claimNames = (st.resourceClaimStatuses || []).map((c) => c.resourceClaimName).filter(Boolean);
    return {
      key: keyOf(o), ns: m.namespace || '', name: m.name, uid: m.uid, node: spec.nodeName || '',
      group: sg.podGroupName ? `${m.namespace}/${sg.podGroupName}` : '',
      phase: st.phase || 'Pending', terminating: !!m.deletionTimestamp, nominated: st.nominatedNodeName || '',
      req: podRequests(spec), claims: claimNames, priority: spec.priority || 0,
      disrupted: (st.conditions || []).some((c) => c.type === 'DisruptionTarget' && c.status === 'True'),
    };
  }
  const counts = (p) => p.phase !== 'Succeeded' && p.phase !== 'Failed';

  function nodeInfo(o) {
    const m = meta(o), st = o.status || {}, alloc = st.allocatable || st.capacity || {};
    let gpu = 0;
    for (const [k, v] of Object.entries(alloc)) if (GPU_RESOURCE.test(k)) gpu += qty(v);
    const ready = (st.conditions || []).find((c) => c.type === 'Ready');
    return {
      name: m.name, labels: m.labels || {}, ready: !!ready && ready.status === 'True',
      unschedulable: !!(o.spec || {}).unschedulable, taints: ((o.spec || {}).taints || []).length,
      alloc: { cpu: qty(alloc.cpu), memory: qty(alloc.memory), gpu, pods: qty(alloc.pods) },
    };
  }

  function setIndex(map, key, member, add) {
    if (!key) return;
    let s = map.get(key);
    if (add) { if (!s) map.set(key, (s = new Set())); s.add(member); } else if (s) { s.delete(member); if (!s.size) map.delete(key); }
  }

  function putPod(o) {
    const p = podInfo(o);
    const old = model.pods.get(p.key);
    if (old) dropPodIndexes(old);
    model.pods.set(p.key, p);
    setIndex(model.podsByNode, p.node, p.key, true);
    nodePodCache.delete(p.node);
    setIndex(model.podsByGroup, p.group, p.key, true);
    if (!p.node && counts(p)) { model.pending.add(p.key); dirty.tray = true; }
    if (p.node) dirty.nodes.add(p.node);
    if (p.group) dirty.gangKeys.add(p.group);
    if (selection) dirty.selection = true;
  }
  function dropPodIndexes(p) {
    setIndex(model.podsByNode, p.node, p.key, false);
    nodePodCache.delete(p.node);
    setIndex(model.podsByGroup, p.group, p.key, false);
    if (model.pending.delete(p.key)) dirty.tray = true;
    if (p.node) dirty.nodes.add(p.node);
    if (p.group) dirty.gangKeys.add(p.group);
  }
  function deletePod(o) {
    const p = model.pods.get(keyOf(o));
    if (!p) return;
    dropPodIndexes(p);
    model.pods.delete(p.key);
    if (selection) dirty.selection = true;
  }

  function putNode(o) {
    const n = nodeInfo(o);
    const old = model.nodes.get(n.name);
    model.nodes.set(n.name, n);
    // only the topology labels place a node: any other change redraws just the node
    if (!old || [...topologyKeySet].some((k) => old.labels[k] !== n.labels[k])) dirty.layout = true;
    else dirty.nodes.add(n.name);
  }
  function deleteNode(o) { model.nodes.delete(meta(o).name); dirty.layout = true; }

  function putGroup(o) {
    const k = keyOf(o);
    if (model.groups.has(k)) dirty.gangKeys.add(k); else dirty.gangs = true;
    model.groups.set(k, o);
    gangCache.delete(k);
    dirty.layout = dirty.layout || topologyChanged(o);
    if (selection) dirty.selection = true;
  }
  function deleteGroup(o) { model.groups.delete(keyOf(o)); gangCache.delete(keyOf(o)); dirty.gangs = true; }
  function topologyChanged(o) {
    const topo = ((o.spec || {}).schedulingConstraints || {}).topology || [];
    return topo.some((t) => t && t.key && !topologyKeySet.has(t.key));
  }

  // devices: a ResourceSlice's pool belongs to one node (spec.nodeName) or to the nodes its
  // nodeSelector picks (a rack's shared device); claims' allocation results name the pool
  function putSlice(o) { model.slices.set(keyOf(o), o); dirty.full = true; }
  function deleteSlice(o) { model.slices.delete(keyOf(o)); dirty.full = true; }
  function putClaim(o) { model.claims.set(keyOf(o), o); dirty.full = true; if (selection) dirty.selection = true; }
  function deleteClaim(o) { model.claims.delete(keyOf(o)); dirty.full = true; }

  function eventTime(e) { return e.lastTimestamp || e.eventTime || (e.series || {}).lastObservedTime || e.firstTimestamp || meta(e).creationTimestamp || ''; }
  // newest first: by time, then (same second) by resourceVersion, which orders writes
  function rvOf(e) { const rv = meta(e).resourceVersion || ''; return rv.padStart(24, '0'); }
  function newerFirst(a, b) {
    const ta = eventTime(a), tb = eventTime(b);
    if (ta !== tb) return ta < tb ? 1 : -1;
    return rvOf(a) < rvOf(b) ? 1 : -1;
  }
  function putEvent(o) {
    const m = meta(o);
    model.events.set(m.uid || keyOf(o), o);
    if (o.reason === 'GangUnschedulable' && o.involvedObject) {
      const k = `${o.involvedObject.namespace}/${o.involvedObject.name}`;
      const prev = model.gangEvent.get(k);
      if (!prev || newerFirst(prev, o) >= 0) { model.gangEvent.set(k, o); dirty.gangKeys.add(k); }
    }
    if (model.events.size > EVENTS_KEPT * 1.2) {
      const sorted = [...model.events.entries()].sort((a, b) => newerFirst(b[1], a[1]));
      for (const [k] of sorted.slice(0, model.events.size - EVENTS_KEPT)) model.events.delete(k);
    }
    dirty.timeline = true;
  }
  function deleteEvent(o) { model.events.delete(meta(o).uid || keyOf(o)); dirty.timeline = true; }

  const KINDS = {
    nodes: { path: '/api/v1/nodes', put: putNode, del: deleteNode, all: () => model.nodes, clear: () => { model.nodes.clear(); dirty.layout = true; } },
    pods: {
      path: '/api/v1/pods', ns: true, put: putPod, del: deletePod,
      clear: () => { model.pods.clear(); model.podsByNode.clear(); nodePodCache.clear(); model.podsByGroup.clear(); model.pending.clear(); dirty.full = dirty.tray = dirty.gangs = true; },
    },
    podgroups: { path: '/apis/scheduling.k8s.io/v1beta1/podgroups', ns: true, put: putGroup, del: deleteGroup, clear: () => { model.groups.clear(); dirty.gangs = true; } },
    resourceclaims: { path: '/apis/resource.k8s.io/v1/resourceclaims', ns: true, put: putClaim, del: deleteClaim, clear: () => model.claims.clear() },
    // Listed, not watched: a browser opens at most 6 HTTP/1.1 connections to one origin, and a
    // watch holds one for its life. Five watches leave one for lists, relists and navigation.
    // gangplane publishes a node's ResourceSlices with the node, so a node added or deleted
    // (seen by the nodes watch) re-lists them: driven by events, never by a timer.
    resourceslices: { path: '/apis/resource.k8s.io/v1/resourceslices', watch: false, put: putSlice, del: deleteSlice, clear: () => model.slices.clear() },
    events: { path: '/api/v1/events', ns: true, put: putEvent, del: deleteEvent, clear: () => { model.events.clear(); model.gangEvent.clear(); dirty.timeline = true; } },
  };
  function collectionPath(kind) {
    const k = KINDS[kind];
    if (!k.ns || !NAMESPACE) return k.path;
    return k.path.replace(/\/([a-z]+)$/, `/namespaces/${encodeURIComponent(NAMESPACE)}/$1`);
  }

  function apply(ev) {
    const k = KINDS[ev.kind];
    if (ev.kind === 'nodes' && (ev.type === 'ADDED' || ev.type === 'DELETED')) refreshListed();
    if (ev.type === 'RELIST') {
      k.clear();
      for (const o of ev.items) k.put(o);
    } else if (ev.type === 'DELETED') k.del(ev.object);
    else k.put(ev.object);
  }

  // ------------------------------------------------------------------ watch machinery
  const queue = [];
  let paused = false;
  const stats = { updates: [], last: 0, parseMs: 0 };
  class HTTPError extends Error { constructor(status, text) { super(`${status}: ${text}`); this.status = status; } }

  async function getJSON(url, signal) {
    const r = await fetch(url, { credentials: 'same-origin', headers: { Accept: 'application/json' }, signal });
    if (!r.ok) throw new HTTPError(r.status, await statusMessage(r));
    return r.json();
  }
  async function statusMessage(r) {
    try { const s = await r.json(); return s.message || r.statusText; } catch { return r.statusText; }
  }

  class Reflector {
    constructor(kind) {
      this.kind = kind; this.rv = ''; this.failures = 0; this.state = 'listing';
      this.relists = 0; this.resumes = 0; this.bookmarks = 0; this.fromList = false; this.controller = null;
    }

    // ends the current watch as a dropped connection would (the view's tests use it)
    drop() { if (this.controller) this.controller.abort(); if (this.listController) this.listController.abort(); }

    async run() {
      for (;;) {
        try {
          if (KINDS[this.kind].watch === false) {
            await this.list();
            this.state = 'live';
            connection();
            await new Promise((ok) => { this.wake = ok; });
            continue;
          }
          if (!this.rv) await this.list();
          await this.watch();
          this.failures = 0;
        } catch (e) {
          if (leaving) return;
          if (e instanceof HTTPError && e.status === 410) { this.rv = ''; continue; } // Expired: relist
          if (e instanceof HTTPError && (e.status === 401 || e.status === 403 || e.status === 404)) {
            problem(this.kind, e.status === 401
              ? 'Not logged in (or the server restarted): open the login link gangplane printed.'
              : `${this.kind}: ${e.message}`);
            this.state = 'refused';
            connection();
            return; // a refusal does not go away by asking again
          }
          this.failures++;
          this.state = 'retrying';
          connection();
          await new Promise((ok) => setTimeout(ok, Math.min(8000, 250 * 2 ** this.failures)));
        }
      }
    }

    async list() {
      this.state = 'listing';
      const items = [];
      let cont = '';
      let rv = '';
      do {
        const q = new URLSearchParams({ limit: String(PAGE) });
        if (cont) q.set('continue', cont);
        this.listController = new AbortController();
        const page = await getJSON(`${collectionPath(this.kind)}?${q}`, this.listController.signal);
        for (const it of page.items || []) items.push(it);
        cont = (page.metadata || {}).continue || '';
        rv = (page.metadata || {}).resourceVersion || rv;
      } while (cont);
      this.rv = rv;
      this.relists++;
      this.fromList = true;
      enqueue({ kind: this.kind, type: 'RELIST', items });
    }

    async watch() {
      const q = new URLSearchParams({
        watch: '1', allowWatchBookmarks: 'true', resourceVersion: this.rv, timeoutSeconds: String(WATCH_TIMEOUT),
      });
      this.controller = new AbortController();
      const r = await fetch(`${collectionPath(this.kind)}?${q}`, {
        credentials: 'same-origin', headers: { Accept: 'application/json' }, signal: this.controller.signal,
      });
      if (!r.ok) throw new HTTPError(r.status, await statusMessage(r));
      if (!this.fromList) this.resumes++; // resumed from the last resourceVersion seen, no relist
      this.fromList = false;
      this.state = 'live';
      connection();
      const reader = r.body.getReader();
      const decoder = new TextDecoder();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true });
        let nl;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (line.trim()) this.line(line);
        }
      }
    }

    line(text) {
      const t0 = performance.now();
      const ev = JSON.parse(text);
      stats.parseMs += performance.now() - t0;
      const o = ev.object || {};
      if (ev.type === 'ERROR') {
        if (o.code === 410) throw new HTTPError(410, o.message || 'Expired');
        throw new HTTPError(o.code || 500, o.message || 'watch error');
      }
      const rv = meta(o).resourceVersion;
      if (rv) this.rv = rv;
      if (ev.type === 'BOOKMARK') { this.bookmarks++; return; }
      enqueue({ kind: this.kind, type: ev.type, object: o });
    }
  }

  let refreshTimer = 0;
  function refreshListed() {
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(() => { for (const r of reflectors) if (r.wake) { const w = r.wake; r.wake = null; w(); } }, 300);
  }

  let scheduled = false;
  function enqueue(ev) {
    queue.push(ev);
    if (!paused) schedule();
    else $('queued').textContent = `${queue.length} queued`;
  }
  function schedule() {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(flush);
  }
  // everything a batch of watch events costs on the main thread: their JSON parse (counted as it
  // happens), applying them to the model and redrawing what changed
  function flush() {
    scheduled = false;
    const t0 = performance.now();
    const n = paused ? Math.min(1, queue.length) : queue.length;
    for (const ev of queue.splice(0, n)) {
      try { apply(ev); } catch (e) { console.error('gangplane: cannot show', ev.kind, ev.type, e); } // one odd object must not stop the view
    }
    try { render(); } catch (e) { console.error('gangplane: drawing failed', e); }
    const ms = performance.now() - t0 + stats.parseMs;
    stats.parseMs = 0;
    stats.last = ms;
    stats.updates.push(ms);
    if (stats.updates.length > 1000) stats.updates.splice(0, 500);
    $('frame').textContent = `update ${ms.toFixed(1)} ms`;
    $('queued').textContent = paused ? `${queue.length} queued` : '';
  }

  // ------------------------------------------------------------------ layout
  let layoutKeys = [];
  const layout = { nodes: new Map(), domains: [], tray: null, width: 0, height: 0, dims: null };
  const CANDIDATE_KEYS = ['topology.kubernetes.io/region', 'topology.kubernetes.io/zone', 'topology.kubernetes.io/rack'];

  let topologyKeySet = new Set(CANDIDATE_KEYS);
  function topologyKeys() {
    const keys = new Set(CANDIDATE_KEYS);
    for (const g of model.groups.values()) {
      for (const t of ((g.spec || {}).schedulingConstraints || {}).topology || []) if (t.key) keys.add(t.key);
    }
    topologyKeySet = keys;
    const distinct = new Map();
    for (const k of keys) distinct.set(k, new Set());
    for (const n of model.nodes.values()) for (const k of keys) if (k in n.labels) distinct.get(k).add(n.labels[k]);
    let used = [...keys].filter((k) => distinct.get(k).size > 0);
    if (used.length > 1) used = used.filter((k) => distinct.get(k).size > 1);
    const canon = (k) => { const i = CANDIDATE_KEYS.indexOf(k); return i < 0 ? 1.5 : i; };
    used.sort((a, b) => distinct.get(a).size - distinct.get(b).size || canon(a) - canon(b));
    return used;
  }

  function dimsFor(count) {
    if (count <= 64) return { nodeW: 150, nodeH: 50, pod: 11, gap: 4, perCol: 16, label: true };
    if (count <= 600) return { nodeW: 88, nodeH: 28, pod: 5, gap: 3, perCol: 24, label: true };
    return { nodeW: 30, nodeH: 16, pod: 3, gap: 2, perCol: 50, label: false };
  }
  const HEADER = 18;
  const COL_LABEL = 14;
  const BARS = 3;

  function doLayout() {
    layoutKeys = topologyKeys();
    const d = (layout.dims = dimsFor(model.nodes.size));
    const width = Math.max(600, $('board-scroll').clientWidth - 4);
    layout.nodes.clear();
    layout.domains = [];
    const nodes = [...model.nodes.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
    // the pending tray: pods not bound to a node, one square per pod, coloured by PodGroup
    const trayRows = Math.max(1, Math.ceil((model.pending.size + 40) / Math.floor((width - 20) / (d.pod + 1))));
    layout.tray = { x: 6, y: 6, w: width - 12, h: HEADER + trayRows * (d.pod + 1) + 6 };
    let y = layout.tray.y + layout.tray.h + 10;
    const levels = layoutKeys;
    const colW = d.nodeW + 10;
    // the width a domain needs with all its columns in one row (its sub-domains stacked)
    const natural = (group, depth) => {
      if (depth >= levels.length - 1) {
        const key = levels[depth];
        const groups = key ? splitBy(group, key) : [['', group]];
        return groups.reduce((a, [, m]) => a + Math.ceil(m.length / d.perCol), 0) * colW + 8;
      }
      return Math.max(...splitBy(group, levels[depth]).map(([, m]) => natural(m, depth + 1))) + 16;
    };
    // domains of one level flow left to right while they fit, then wrap to a new row
    const place = (group, depth, x0, y0, w, path) => {
      // group: nodes sharing the values of levels[0..depth)
      if (depth >= levels.length - 1) return placeColumns(group, depth, x0, y0, w, path);
      const key = levels[depth];
      let x = x0, yy = y0, rowBottom = y0;
      for (const [value, members] of splitBy(group, key)) {
        const dw = Math.min(w, natural(members, depth + 1) + 16);
        if (x > x0 && x + dw > x0 + w) { x = x0; yy = rowBottom + 8; }
        const dom = { key, value, depth, x, y: yy, w: dw, h: 0, nodes: members.map((n) => n.name), path: [...path, value] };
        layout.domains.push(dom);
        const inner = place(members, depth + 1, x + 8, yy + HEADER, dw - 16, dom.path);
        dom.h = inner - yy + 6;
        rowBottom = Math.max(rowBottom, yy + dom.h);
        x += dw + 8;
      }
      return rowBottom + 8;
    };
    const placeColumns = (group, depth, x0, y0, w, path) => {
      const key = levels[depth];
      const cols = [];
      for (const [value, members] of key ? splitBy(group, key) : [['', group]]) {
        for (let i = 0; i < members.length; i += d.perCol) cols.push({ value, members: members.slice(i, i + d.perCol), cont: i > 0 });
      }
      let x = x0, yy = y0, rowH = 0;
      const doms = new Map();
      for (const col of cols) {
        if (x + colW > x0 + w && x > x0) { x = x0; yy += rowH + 8; rowH = 0; }
        const h = COL_LABEL + col.members.length * (d.nodeH + d.gap);
        col.members.forEach((n, i) => layout.nodes.set(n.name, { x: x + 4, y: yy + COL_LABEL + i * (d.nodeH + d.gap), w: d.nodeW, h: d.nodeH }));
        let dom = doms.get(col.value);
        if (!dom) {
          dom = { key: key || '', value: col.value, depth, rects: [], nodes: [], path: [...path, col.value], label: [] };
          doms.set(col.value, dom);
          layout.domains.push(dom);
        }
        dom.rects.push({ x, y: yy, w: colW - 2, h });
        dom.nodes.push(...col.members.map((n) => n.name));
        dom.label.push(col.cont ? '' : col.value);
        rowH = Math.max(rowH, h);
        x += colW;
      }
      for (const dom of doms.values()) Object.assign(dom, dom.rects[0]);
      return yy + rowH + 4;
    };
    if (!levels.length) y = placeColumns(nodes, 0, 6, y, width - 12, []);
    else y = place(nodes, 0, 6, y, width - 12, []);
    layout.width = width;
    layout.height = y + 10;
    resizeCanvas(width, layout.height);
    renderLegend();
  }
  function splitBy(nodes, key) {
    const m = new Map();
    for (const n of nodes) {
      const v = key in n.labels ? n.labels[key] : `(no ${key.split('/').pop()})`;
      if (!m.has(v)) m.set(v, []);
      m.get(v).push(n);
    }
    return [...m.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1));
  }

  // ------------------------------------------------------------------ drawing
  // Rectangles are written into a pixel buffer (one Uint32 per pixel) and blitted with
  // putImageData: 50,000 pod squares cost array fills instead of 50,000 canvas state changes. A
  // watch event redraws only its nodes' rectangles (a dirty-rect blit); text is drawn on top.
  const canvas = $('board');
  const ctx = canvas.getContext('2d', { alpha: false });
  let img = null, fb = null, W = 0, H = 0;

  function rgba(r, g, b) { return ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0; }
  function hex(h) { const n = parseInt(h.slice(1), 16); return rgba((n >> 16) & 255, (n >> 8) & 255, n & 255); }
  const C = {
    bg: hex('#11151c'), domain: hex('#161b24'), frame: hex('#2a3140'), tray: hex('#1a1f2a'),
    node: hex('#222a38'), notReady: hex('#4a1f24'), cordoned: hex('#2b2b2b'), barBg: hex('#10141b'),
    cpu: hex('#5fa8ff'), mem: hex('#b28cff'), gpu: hex('#6bd68a'), over: hex('#ff6b6b'),
    accent: hex('#ffd54a'), gangFrame: hex('#e6e9ef'), none: hex('#7d8696'),
  };
  const pixelColor = new Map();
  function groupPixel(key) {
    let c = pixelColor.get(key);
    if (c === undefined) {
      if (!key) c = C.none;
      else {
        const m = /hsl\((\d+),(\d+)%,(\d+)%\)/.exec(groupColor(key));
        const h = +m[1] / 360, sat = +m[2] / 100, l = +m[3] / 100;
        const q = l < 0.5 ? l * (1 + sat) : l + sat - l * sat, p = 2 * l - q;
        const ch = (t) => { t = (t + 1) % 1; const v = t < 1 / 6 ? p + (q - p) * 6 * t : t < 1 / 2 ? q : t < 2 / 3 ? p + (q - p) * (2 / 3 - t) * 6 : p; return Math.round(v * 255); };
        c = rgba(ch(h + 1 / 3), ch(h), ch(h - 1 / 3));
      }
      pixelColor.set(key, c);
    }
    return c;
  }
  const mixed = new Map();
  function mix(c, under, a) {
    const k = `${c}|${under}|${a}`;
    let v = mixed.get(k);
    if (v === undefined) {
      const ch = (sh) => Math.round(((c >>> sh) & 255) * a + ((under >>> sh) & 255) * (1 - a));
      v = rgba(ch(0), ch(8), ch(16));
      mixed.set(k, v);
    }
    return v;
  }
  function fill(x, y, w, h, c) {
    let x0 = x | 0, y0 = y | 0, x1 = (x + w) | 0, y1 = (y + h) | 0;
    if (x0 < 0) x0 = 0; if (y0 < 0) y0 = 0; if (x1 > W) x1 = W; if (y1 > H) y1 = H;
    if (x1 - x0 <= 12) { // a pod square or a frame's side: plain stores beat a fill() call per row
      for (let yy = y0; yy < y1; yy++) { const o = yy * W; for (let xx = x0; xx < x1; xx++) fb[o + xx] = c; }
      return;
    }
    for (let yy = y0; yy < y1; yy++) fb.fill(c, yy * W + x0, yy * W + x1);
  }
  function frame(x, y, w, h, c, t = 1) {
    fill(x, y, w, t, c); fill(x, y + h - t, w, t, c); fill(x, y, t, h, c); fill(x + w - t, y, t, h, c);
  }
  function blit(x, y, w, h) {
    x = Math.max(0, x | 0); y = Math.max(0, y | 0);
    ctx.putImageData(img, 0, 0, x, y, Math.min(W - x, Math.ceil(w) + 1), Math.min(H - y, Math.ceil(h) + 1));
  }
  function resizeCanvas(width, height) {
    // heights in steps of 512 px: a node joining rarely reallocates the buffer (tens of MB at 5,000 nodes)
    height = Math.ceil(height / 512) * 512;
    if (img && width === W && height === H) return;
    canvas.width = W = width;
    canvas.height = H = height;
    canvas.style.width = `${width}px`;
    canvas.style.height = `${height}px`;
    img = ctx.createImageData(W, H);
    fb = new Uint32Array(img.data.buffer);
  }

  function render() {
    if (dirty.layout) { const t = performance.now(); doLayout(); stats.layoutMs = performance.now() - t; dirty.layout = false; dirty.full = true; }
    if (dirty.full) {
      drawAll();
      dirty.full = false; dirty.tray = false; dirty.nodes.clear();
    } else {
      if (dirty.tray) { drawTray(); const t = layout.tray; blit(t.x, t.y, t.w, t.h); trayText(); dirty.tray = false; }
      for (const name of dirty.nodes) {
        const n = model.nodes.get(name), r = layout.nodes.get(name);
        if (!n || !r) continue;
        drawNode(n);
        blit(r.x, r.y, r.w, r.h);
        nodeText(n, r);
      }
      dirty.nodes.clear();
    }
    if (dirty.gangs || dirty.gangKeys.size) renderGangs();
    if (dirty.selection) { renderSelection(); dirty.selection = false; }
    if (dirty.timeline) { renderTimeline(); dirty.timeline = false; }
  }

  function drawAll() {
    if (!fb) return;
    const t0 = performance.now();
    fb.fill(C.bg);
    for (const dom of layout.domains) {
      if (dom.rects) for (const r of dom.rects) fill(r.x, r.y, r.w, r.h, C.domain);
      else frame(dom.x, dom.y, dom.w, dom.h, C.frame);
    }
    drawTray();
    const t1 = performance.now();
    for (const n of model.nodes.values()) drawNode(n);
    drawHighlights();
    const t2 = performance.now();
    ctx.putImageData(img, 0, 0);
    const t3 = performance.now();
    ctx.textBaseline = 'top';
    for (const dom of layout.domains) {
      if (dom.rects) {
        ctx.fillStyle = '#8791a3';
        ctx.font = '10px system-ui, sans-serif';
        dom.rects.forEach((r, i) => { if (dom.label[i]) ctx.fillText(clip(dom.label[i], r.w), r.x + 3, r.y + 2); });
      } else {
        ctx.fillStyle = '#aab3c3';
        ctx.font = '12px system-ui, sans-serif';
        ctx.fillText(`${dom.key.split('/').pop()}: ${dom.value}`, dom.x + 6, dom.y + 3);
      }
    }
    if (layout.dims.label) for (const n of model.nodes.values()) { const r = layout.nodes.get(n.name); if (r) nodeText(n, r); }
    trayText();
    // where a full redraw goes (the frame-time bench reports it)
    stats.fullDraw = { clear: t1 - t0, nodes: t2 - t1, blit: t3 - t2, text: performance.now() - t3, pixels: W * H };
  }
  function clip(text, w) { const max = Math.floor(w / 5.5); return text.length > max ? `${text.slice(0, max - 1)}…` : text; }

  function drawTray() {
    const t = layout.tray, d = layout.dims;
    if (!t || !fb) return;
    fill(t.x, t.y, t.w, t.h, C.tray);
    const pods = [...model.pending].map((k) => model.pods.get(k)).sort(podOrder);
    const per = Math.floor((t.w - 12) / (d.pod + 1));
    pods.forEach((p, i) => {
      const x = t.x + 6 + (i % per) * (d.pod + 1), y = t.y + HEADER + Math.floor(i / per) * (d.pod + 1);
      if (y + d.pod <= t.y + t.h) drawPod(p, x, y, d.pod, C.tray);
    });
  }
  function trayText() {
    const t = layout.tray;
    if (!t) return;
    ctx.fillStyle = model.pending.size ? '#ffb3b3' : '#8791a3';
    ctx.font = '12px system-ui, sans-serif';
    ctx.textBaseline = 'top';
    ctx.fillText(`Pending: ${model.pending.size} pod${model.pending.size === 1 ? '' : 's'} not bound to a node`, t.x + 6, t.y + 3);
  }
  function podOrder(a, b) { return a.group === b.group ? (a.name < b.name ? -1 : 1) : (a.group < b.group ? -1 : 1); }

  function dimmed(p) {
    if (!selection) return false;
    if (selection.kind === 'group') return p.group !== selection.key;
    if (selection.kind === 'pod') { const s = model.pods.get(selection.key); return !s || (s.group ? p.group !== s.group : p.key !== s.key); }
    return false;
  }

  // a pod: its PodGroup's colour; faded while not running, faint when another gang is selected,
  // hollow while terminating
  function drawPod(p, x, y, s, under) {
    const a = dimmed(p) ? 0.18 : p.phase === 'Running' || p.phase === 'Succeeded' ? 1 : 0.55;
    const c = a === 1 ? groupPixel(p.group) : mix(groupPixel(p.group), under, a);
    if (p.terminating) frame(x, y, s, s, c);
    else fill(x, y, s, s, c);
  }

  // a node's pods in drawing order, kept until one of them changes (the node is then dirty)
  const nodePodCache = new Map();
  function nodePods(name) {
    let out = nodePodCache.get(name);
    if (out) return out;
    const keys = model.podsByNode.get(name);
    out = [];
    if (keys) for (const k of keys) { const p = model.pods.get(k); if (p && counts(p)) out.push(p); }
    if (out.length > 1) out.sort(podOrder);
    nodePodCache.set(name, out);
    return out;
  }

  function drawNode(n) {
    const r = layout.nodes.get(n.name), d = layout.dims;
    if (!r || !fb) return;
    const pods = nodePods(n.name);
    const req = { cpu: 0, memory: 0, gpu: 0 };
    for (const p of pods) { if (p.terminating) continue; req.cpu += p.req.cpu; req.memory += p.req.memory; req.gpu += p.req.gpu; }
    const dev = devicesOf(n.name);
    const bg = !n.ready ? C.notReady : n.unschedulable ? C.cordoned : C.node;
    fill(r.x, r.y, r.w, r.h, bg);
    // allocatable vs requested: cpu, memory, then GPUs (extended resource) or DRA devices
    const gpuAlloc = n.alloc.gpu || dev.total, gpuUsed = n.alloc.gpu ? req.gpu : dev.used;
    const bars = [[req.cpu, n.alloc.cpu, C.cpu], [req.memory, n.alloc.memory, C.mem], [gpuUsed, gpuAlloc, C.gpu]];
    const bw = r.w - 4;
    for (let i = 0; i < 3; i++) {
      const [used, alloc, col] = bars[i];
      const y = r.y + 2 + i * (BARS + 1);
      fill(r.x + 2, y, bw, BARS, C.barBg);
      if (!alloc) continue;
      const f = used / alloc;
      fill(r.x + 2, y, Math.max(used > 0 ? 1 : 0, Math.round(Math.min(1, f) * bw)), BARS, f > 1 ? C.over : col);
    }
    const top = r.y + 2 + 3 * (BARS + 1) + 1 + (d.label ? 10 : 0);
    const s = d.pod, per = Math.max(1, Math.floor((r.w - 4) / (s + 1)));
    let runStart = -1;
    for (let i = 0; i < pods.length; i++) {
      const p = pods[i];
      const x = r.x + 2 + (i % per) * (s + 1), y = top + Math.floor(i / per) * (s + 1);
      if (y + s > r.y + r.h) break;
      drawPod(p, x, y, s, bg);
      // gang members outlined together: one frame around each run of a gang's pods in a row
      if (runStart < 0) runStart = i;
      const next = pods[i + 1];
      const endOfRun = !next || next.group !== p.group || (i + 1) % per === 0;
      if (endOfRun) {
        if (p.group && s >= 3 && isGang(p.group) && !dimmed(p)) {
          const x0 = r.x + 2 + (runStart % per) * (s + 1);
          frame(x0 - 1, y - 1, x - x0 + s + 2, s + 2, C.gangFrame);
        }
        runStart = -1;
      }
    }
    if (selection && selection.kind === 'node' && selection.key === n.name) frame(r.x, r.y, r.w, r.h, C.accent, 2);
  }
  function nodeText(n, r) {
    if (!layout.dims.label) return;
    ctx.fillStyle = n.ready ? '#9aa4b5' : '#ff9a9a';
    ctx.font = '9px system-ui, sans-serif';
    ctx.textBaseline = 'top';
    ctx.fillText(clip(n.name, r.w - 4), r.x + 2, r.y + 2 + 3 * (BARS + 1) + 1);
  }
  const gangCache = new Map();
  function isGang(groupKey) {
    let v = gangCache.get(groupKey);
    if (v === undefined) {
      const g = model.groups.get(groupKey);
      v = !!(g && ((g.spec || {}).schedulingPolicy || {}).gang);
      if (g) gangCache.set(groupKey, v);
    }
    return v;
  }

  let poolNodes = null; // pool -> node name (node-local slices), recomputed on full draws
  function devicesOf(node) {
    if (dirty.full || !poolNodes) {
      poolNodes = { total: new Map(), used: new Map(), pool: new Map() };
      for (const s of model.slices.values()) {
        const sp = s.spec || {};
        if (!sp.nodeName) continue;
        poolNodes.pool.set(`${sp.driver}/${(sp.pool || {}).name}`, sp.nodeName);
        poolNodes.total.set(sp.nodeName, (poolNodes.total.get(sp.nodeName) || 0) + (sp.devices || []).length);
      }
      for (const c of model.claims.values()) {
        for (const res of ((((c.status || {}).allocation || {}).devices || {}).results) || []) {
          const nn = poolNodes.pool.get(`${res.driver}/${res.pool}`);
          if (nn) poolNodes.used.set(nn, (poolNodes.used.get(nn) || 0) + 1);
        }
      }
    }
    return { total: poolNodes.total.get(node) || 0, used: poolNodes.used.get(node) || 0 };
  }

  // the selected gang's placement domain (the domains of its topology key holding its pods), or
  // its nodes when it has no topology constraint
  function drawHighlights() {
    const g = selectedGroup();
    if (!g) return;
    for (const r of gangDomains(g).rects) frame(r.x - 3, r.y - 3, r.w + 6, r.h + 6, C.accent, 2);
  }
  function selectedGroup() {
    if (!selection) return '';
    if (selection.kind === 'group') return selection.key;
    if (selection.kind === 'pod') { const p = model.pods.get(selection.key); return p ? p.group : ''; }
    return '';
  }
  function gangDomains(groupKey) {
    const g = model.groups.get(groupKey);
    const topo = (((g || {}).spec || {}).schedulingConstraints || {}).topology || [];
    const nodes = new Set();
    for (const k of model.podsByGroup.get(groupKey) || []) { const p = model.pods.get(k); if (p && p.node) nodes.add(p.node); }
    const out = { key: topo.length ? topo[0].key : '', values: [], rects: [] };
    if (out.key) {
      const values = new Set([...nodes].map((n) => (model.nodes.get(n) || { labels: {} }).labels[out.key]).filter((v) => v !== undefined));
      out.values = [...values];
      for (const dom of layout.domains) {
        if (dom.key === out.key && values.has(dom.value)) out.rects.push(...(dom.rects || [dom]));
      }
    } else {
      for (const n of nodes) { const r = layout.nodes.get(n); if (r) out.rects.push(r); }
    }
    return out;
  }

  function renderLegend() {
    const keys = layoutKeys.map((k) => k.split('/').pop()).join(' → ') || 'no topology labels';
    $('legend').innerHTML = '';
    $('legend').append(`${model.nodes.size} nodes by ${keys} → node. Bars: `);
    for (const [name, col] of [['cpu', '#5fa8ff'], ['memory', '#b28cff'], ['GPUs / devices', '#6bd68a']]) {
      const i = document.createElement('i'); i.style.background = col; $('legend').append(i, name);
    }
    $('legend').append('. Squares: pods by PodGroup; faded = not running; hollow = terminating; white frame = gang.');
    canvas.setAttribute('aria-label', `${model.nodes.size} nodes grouped by ${keys}; the panels list the gangs and events`);
  }

  // ------------------------------------------------------------------ panels
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') e.className = v; else if (k.startsWith('on')) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
    }
    for (const c of kids) if (c !== null && c !== undefined) e.append(c);
    return e;
  }
  function condition(o, type) { return (((o || {}).status || {}).conditions || []).find((c) => c.type === type); }

  function gangFacts(key) {
    const g = model.groups.get(key), spec = g.spec || {}, pol = spec.schedulingPolicy || {};
    const members = [...(model.podsByGroup.get(key) || [])].map((k) => model.pods.get(k)).filter((p) => p && counts(p));
    const bound = members.filter((p) => p.node).length;
    const cond = condition(g, 'PodGroupInitiallyScheduled');
    const dm = spec.disruptionMode || {};
    return {
      policy: pol.gang ? 'gang' : pol.basic ? 'basic' : Object.keys(pol)[0] || '—',
      minCount: pol.gang ? pol.gang.minCount : '—',
      bound, total: members.length,
      topology: ((spec.schedulingConstraints || {}).topology || []).map((t) => t.key).join(', ') || '—',
      disruption: Object.keys(dm)[0] || 'single',
      cond, scheduled: !!cond && cond.status === 'True',
      waitingReason: (model.gangEvent.get(key) || {}).message || (cond && cond.status !== 'True' ? cond.message : ''),
    };
  }

  // The panel lists waiting gangs first. A change to one gang rewrites its row in place; a gang
  // added, deleted or changing between waiting and scheduled re-sorts the list, at most every
  // 250 ms (a scheduling wave flips thousands of gangs; the rows catch up a frame later).
  const GANG_ROWS = 150;
  const gangRows = new Map();
  let lastGangSort = -1e9, gangSortTimer = 0;
  function gangRow(key, f) {
    const state = f.cond ? 'PodGroupInitiallyScheduled' : 'waiting';
    const li = el('li', { class: `gang ${f.scheduled ? 'scheduled' : 'waiting'}${selection && selection.kind === 'group' && selection.key === key ? ' selected' : ''}`, 'data-key': key, onclick: () => select({ kind: 'group', key }) },
      el('div', { class: 'name' }, key),
      el('div', { class: 'facts' },
        `${f.policy}${f.policy === 'gang' ? ` minCount=${f.minCount}` : ''} · scheduled ${f.bound}/${f.total} · topology ${f.topology} · disruptionMode ${f.disruption} · `,
        el('span', { class: 'state' }, f.cond ? `${state}=${f.cond.status} (${f.cond.reason})` : state)));
    li.style.borderLeftColor = groupColor(key);
    if (!f.scheduled && f.waitingReason) li.append(el('div', { class: 'reason' }, f.waitingReason));
    return li;
  }
  function renderGangs() {
    let resort = dirty.gangs;
    if (!resort) {
      for (const key of dirty.gangKeys) {
        const row = gangRows.get(key);
        if (!model.groups.has(key)) continue;
        const f = gangFacts(key);
        if (!row) { if (!f.scheduled || gangRows.size < GANG_ROWS) resort = true; continue; }
        if (row.scheduled !== f.scheduled) { resort = true; continue; }
        const li = gangRow(key, f);
        row.li.replaceWith(li);
        row.li = li;
      }
    }
    dirty.gangKeys.clear();
    if (!resort) return;
    const now = performance.now();
    if (now - lastGangSort < 250) {
      if (!gangSortTimer) gangSortTimer = setTimeout(() => { gangSortTimer = 0; dirty.gangs = true; schedule(); }, 250 - (now - lastGangSort));
      return;
    }
    lastGangSort = now;
    dirty.gangs = false;
    // order by the condition alone (cheap for thousands of gangs); full facts for the rows shown
    const isScheduled = (g) => { const c = condition(g, 'PodGroupInitiallyScheduled'); return c && c.status === 'True' ? 1 : 0; };
    const rows = [...model.groups].map(([k, g]) => [k, isScheduled(g)]);
    rows.sort((a, b) => (a[1] - b[1]) || (a[0] < b[0] ? -1 : 1));
    $('gang-count').textContent = `(${rows.length})`;
    gangRows.clear();
    const frag = document.createDocumentFragment();
    for (const [key] of rows.slice(0, GANG_ROWS)) {
      const f = gangFacts(key);
      const li = gangRow(key, f);
      gangRows.set(key, { li, scheduled: f.scheduled });
      frag.append(li);
    }
    if (rows.length > GANG_ROWS) frag.append(el('li', { class: 'muted' }, `… and ${rows.length - GANG_ROWS} more`));
    $('gangs').replaceChildren(frag);
  }

  function claimsOfGroup(groupKey) {
    const [ns, name] = groupKey.split('/');
    const podNames = new Set([...(model.podsByGroup.get(groupKey) || [])].map((k) => k.split('/')[1]));
    const out = [];
    for (const [k, c] of model.claims) {
      if (meta(c).namespace !== ns) continue;
      const reserved = (c.status || {}).reservedFor || [];
      if (reserved.some((r) => (r.resource === 'podgroups' && r.name === name) || (r.resource === 'pods' && podNames.has(r.name)))) out.push([k, c]);
    }
    return out;
  }
  function allocationText(c) {
    const res = ((((c.status || {}).allocation || {}).devices || {}).results) || [];
    return res.length ? res.map((r) => `${r.driver}/${r.pool}/${r.device}`).join(', ') : 'not allocated';
  }

  function renderSelection() {
    const box = $('selection');
    if (!selection) { box.replaceChildren(el('p', { class: 'muted' }, 'Click a gang, a pod or a node.')); return; }
    const dl = el('dl');
    const row = (k, v) => dl.append(el('dt', {}, k), el('dd', {}, v));
    if (selection.kind === 'node') {
      const n = model.nodes.get(selection.key);
      if (!n) { box.replaceChildren(el('p', { class: 'muted' }, `${selection.key} is gone`)); return; }
      const pods = [...(model.podsByNode.get(n.name) || [])].map((k) => model.pods.get(k)).filter((p) => p && counts(p));
      const req = pods.reduce((a, p) => ({ cpu: a.cpu + p.req.cpu, memory: a.memory + p.req.memory, gpu: a.gpu + p.req.gpu }), { cpu: 0, memory: 0, gpu: 0 });
      const dev = devicesOf(n.name);
      row('node', n.name);
      for (const k of layoutKeys) row(k.split('/').pop(), n.labels[k] || '—');
      row('ready', n.ready ? 'True' : 'False');
      row('cpu', `${fmtNum(req.cpu)} / ${fmtNum(n.alloc.cpu)}`);
      row('memory', `${fmtBytes(req.memory)} / ${fmtBytes(n.alloc.memory)}`);
      row('GPUs', `${fmtNum(req.gpu)} / ${fmtNum(n.alloc.gpu)}`);
      if (dev.total) row('DRA devices', `${dev.used} / ${dev.total} allocated`);
      row('pods', String(pods.length));
      box.replaceChildren(dl);
      return;
    }
    let groupKey = selection.kind === 'group' ? selection.key : '';
    if (selection.kind === 'pod') {
      const p = model.pods.get(selection.key);
      if (!p) { box.replaceChildren(el('p', { class: 'muted' }, `${selection.key} is gone`)); return; }
      row('pod', p.key); row('node', p.node || '(pending)'); row('phase', p.terminating ? `${p.phase}, terminating` : p.phase);
      if (p.nominated) row('nominated', p.nominated);
      if (p.disrupted) row('DisruptionTarget', 'True');
      groupKey = p.group;
      if (groupKey) row('PodGroup', groupKey);
    }
    if (groupKey && model.groups.has(groupKey)) {
      const f = gangFacts(groupKey);
      const dom = gangDomains(groupKey);
      if (selection.kind === 'group') row('PodGroup', groupKey);
      row('policy', f.policy === 'gang' ? `gang, minCount ${f.minCount}` : f.policy);
      row('scheduled', `${f.bound}/${f.total}`);
      row('placement', dom.key ? `${dom.key.split('/').pop()}: ${dom.values.join(', ') || '—'}` : 'no topology constraint');
      row('disruptionMode', f.disruption);
      const claims = claimsOfGroup(groupKey);
      const ul = el('ul', { class: 'claims' });
      for (const [k, c] of claims) ul.append(el('li', { 'data-claim': k }, `${k}: ${allocationText(c)}`));
      row('ResourceClaims', claims.length ? ul : '—');
      if (!f.scheduled && f.waitingReason) row('waiting', f.waitingReason);
    }
    box.replaceChildren(dl);
  }

  function renderTimeline() {
    const all = $('all-events').checked;
    const evs = [...model.events.values()].filter((e) => all || e.type === 'Warning' || SCHED_REASONS.has(e.reason));
    evs.sort(newerFirst);
    // preemption: the victims of one preemptor (the event's related object) are one entry
    const items = [];
    const preemptions = new Map();
    for (const e of evs.slice(0, TIMELINE_SHOWN * 3)) {
      if (e.reason === 'Preempted' && e.related) {
        const k = `${e.related.kind}/${e.related.namespace || ''}/${e.related.name}`;
        let entry = preemptions.get(k);
        if (!entry) { entry = { e, preemptor: e.related, victims: [] }; preemptions.set(k, entry); items.push(entry); }
        entry.victims.push(e.involvedObject);
      } else items.push({ e });
      if (items.length >= TIMELINE_SHOWN) break;
    }
    const frag = document.createDocumentFragment();
    for (const it of items) {
      const e = it.e, io = e.involvedObject || {};
      const t = (eventTime(e) || '').replace(/^.*T/, '').replace(/(\.\d+)?Z$/, '');
      if (it.victims) {
        const p = it.preemptor;
        const victims = el('span', { class: 'victims' });
        it.victims.forEach((v, i) => victims.append(i ? ', ' : '', link(v)));
        frag.append(el('li', { class: 'preemption', 'data-reason': 'Preempted', 'data-preemptor': `${p.kind}/${p.name}` },
          el('span', { class: 't' }, t), el('span', { class: 'r' }, 'Preemption'),
          `${p.kind} `, link(p), ` preempted ${it.victims.length}: `, victims));
      } else {
        frag.append(el('li', { class: e.type || 'Normal', 'data-reason': e.reason || '', onclick: () => selectRef(io) },
          el('span', { class: 't' }, t), el('span', { class: 'r' }, e.reason || ''),
          `${io.kind || ''} ${io.namespace ? `${io.namespace}/` : ''}${io.name || ''}: ${e.message || ''}`));
      }
    }
    $('timeline').replaceChildren(frag);
  }
  function link(ref) {
    return el('a', { 'data-ref': `${ref.kind}/${ref.namespace || ''}/${ref.name}`, onclick: (ev) => { ev.stopPropagation(); selectRef(ref); } }, ref.name);
  }
  function selectRef(ref) {
    const key = ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
    if (ref.kind === 'PodGroup') select({ kind: 'group', key });
    else if (ref.kind === 'Pod') select({ kind: 'pod', key });
    else if (ref.kind === 'Node') select({ kind: 'node', key });
  }

  function select(sel) {
    selection = sel;
    for (const [key, row] of gangRows) row.li.classList.toggle('selected', !!sel && sel.kind === 'group' && sel.key === key);
    dirty.full = dirty.selection = true;
    schedule();
  }

  // ------------------------------------------------------------------ interaction
  function hitTest(x, y) {
    for (const [name, r] of layout.nodes) {
      if (x < r.x || y < r.y || x >= r.x + r.w || y >= r.y + r.h) continue;
      return { kind: 'node', key: name };
    }
    return null;
  }
  function podAt(x, y) {
    const hit = hitTest(x, y);
    if (!hit) return hit;
    const r = layout.nodes.get(hit.key), d = layout.dims;
    const top = r.y + 2 + 3 * (BARS + 1) + 1 + (d.label ? 10 : 0);
    const per = Math.max(1, Math.floor((r.w - 4) / (d.pod + 1)));
    const col = Math.floor((x - r.x - 2) / (d.pod + 1)), rowI = Math.floor((y - top) / (d.pod + 1));
    if (y >= top && col < per) {
      const pods = nodePods(hit.key);
      const p = pods[rowI * per + col];
      if (p) return { kind: 'pod', key: p.key };
    }
    return hit;
  }
  canvas.addEventListener('click', (ev) => {
    const b = canvas.getBoundingClientRect();
    select(podAt(ev.clientX - b.left, ev.clientY - b.top));
  });
  canvas.addEventListener('mousemove', (ev) => {
    const b = canvas.getBoundingClientRect();
    const hit = podAt(ev.clientX - b.left, ev.clientY - b.top);
    const tip = $('tip');
    if (!hit) { tip.hidden = true; return; }
    const p = hit.kind === 'pod' ? model.pods.get(hit.key) : null;
    tip.textContent = p ? `${p.key}\n${p.phase}${p.terminating ? ', terminating' : ''}${p.group ? `\nPodGroup ${p.group}` : ''}` : hit.key;
    const pane = $('board-pane').getBoundingClientRect();
    tip.style.left = `${ev.clientX - pane.left + 14}px`;
    tip.style.top = `${ev.clientY - pane.top + 14}px`;
    tip.hidden = false;
  });
  canvas.addEventListener('mouseleave', () => { $('tip').hidden = true; });
  $('pause').addEventListener('click', () => {
    paused = !paused;
    $('pause').textContent = paused ? 'Resume' : 'Pause';
    $('step').disabled = !paused;
    $('queued').textContent = paused ? `${queue.length} queued` : '';
    if (!paused) schedule();
  });
  $('step').addEventListener('click', () => { if (queue.length) schedule(); });
  $('all-events').addEventListener('change', () => { dirty.timeline = true; schedule(); });
  let resizeTimer = 0;
  window.addEventListener('resize', () => { clearTimeout(resizeTimer); resizeTimer = setTimeout(() => { dirty.layout = true; schedule(); }, 150); });

  const problems = new Map();
  function problem(key, text) {
    problems.set(key, text);
    $('problems').replaceChildren(...[...new Set(problems.values())].map((t) => el('p', {}, t)));
  }
  const reflectors = Object.keys(KINDS).map((k) => new Reflector(k));
  // Leaving the page ends its watches at once: each holds one of the six connections the browser
  // allows to this origin, and the next page (or the login link) needs them now.
  let leaving = false;
  window.addEventListener('pagehide', () => { leaving = true; for (const r of reflectors) r.drop(); });
  function connection() {
    const states = reflectors.map((r) => r.state);
    const c = $('conn');
    const live = states.filter((s) => s === 'live').length;
    c.className = `conn ${live === states.length ? 'live' : states.includes('retrying') ? 'down' : ''}`;
    c.textContent = live === states.length ? 'live (watching)' : states.includes('retrying') ? 'reconnecting…' : `${live}/${states.length} watches live`;
  }

  async function whoami() {
    try {
      const r = await fetch('/apis/authentication.k8s.io/v1/selfsubjectreviews', {
        method: 'POST', credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
      });
      if (r.ok) { const s = await r.json(); $('who').textContent = `as ${((s.status || {}).userInfo || {}).username || '?'}`; }
    } catch { /* the board works without it */ }
  }

  // the page's hooks for tests and the frame-time bench: the very model, layout and hit-testing
  // the canvas is drawn from, plus a way to feed watch lines without a server
  window.gangplane = {
    model, layout, stats, queue, reflectors,
    get layoutKeys() { return layoutKeys; },
    get paused() { return paused; },
    hitTest: podAt, select, gangFacts, gangDomains, claimsOfGroup,
    ingest(kind, line) { const r = new Reflector(kind); r.line(line); },
    relist(kind, items) { enqueue({ kind, type: 'RELIST', items }); },
    rendered: () => !scheduled && !queue.length && !gangSortTimer,
  };

  if (params.get('offline') !== '1') {
    whoami();
    for (const r of reflectors) r.run();
  }
  connection();
  schedule();
})();
