// The operator page. Everything from the server is put on the page with
// textContent or as SVG attributes, never as HTML: run input and output are
// whatever clients sent and models wrote.
'use strict';

const $ = (sel) => document.querySelector(sel);

// el builds an element; string children become text nodes.
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v; else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(c == null ? '' : String(c)));
  return e;
}

function svg(tag, attrs) {
  const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  return e;
}

// api reads a JSON endpoint; a lost session goes back to the login form.
async function api(path) {
  const res = await fetch(path, { credentials: 'same-origin', headers: { Accept: 'application/json' } });
  if (res.status === 401) { location.assign('/ui/login'); throw new Error('logged out'); }
  const body = await res.json();
  if (!res.ok) throw new Error((body.error && body.error.message) || res.statusText);
  return body;
}

const fmtTime = (s) => (s ? new Date(s * 1000).toLocaleString() : '—');
const fmtMs = (ms) => (ms == null ? '—' : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(2)} s`);
const short = (id) => (id && id.length > 18 ? id.slice(0, 18) + '…' : id || '');

// ---- views ----------------------------------------------------------------

const views = ['runs', 'run', 'charts', 'usage', 'plugins'];
let statsTimer = null;
let usageTimer = null;
let pluginsTimer = null;

function route() {
  const h = location.hash.replace(/^#/, '');
  const [name, arg] = h.startsWith('run/') ? ['run', decodeURIComponent(h.slice(4))] : [h || 'runs'];
  const view = views.includes(name) ? name : 'runs';
  for (const v of views) $(`#view-${v}`).hidden = v !== view;
  for (const a of document.querySelectorAll('header nav a')) a.classList.toggle('active', a.id === `nav-${view === 'run' ? 'runs' : view}`);
  clearInterval(statsTimer); clearInterval(pluginsTimer); clearInterval(usageTimer);
  if (view === 'run') showRun(arg);
  if (view === 'charts') { loadStats(); statsTimer = setInterval(loadStats, 2000); }
  if (view === 'plugins') { loadPlugins(); pluginsTimer = setInterval(loadPlugins, 5000); }
  if (view === 'usage') { loadUsage(); usageTimer = setInterval(loadUsage, 5000); }
}

// ---- run history ----------------------------------------------------------

const rows = new Map(); // run id → tr
let lastID = null;

function filters() {
  return { tenant_id: $('#f-tenant').value.trim(), status: $('#f-status').value,
    endpoint: $('#f-endpoint').value, session_id: $('#f-session').value.trim() };
}

function matches(run) {
  const f = filters();
  return (!f.tenant_id || run.tenant_id === f.tenant_id) && (!f.status || run.status === f.status) &&
    (!f.endpoint || run.endpoint === f.endpoint) && (!f.session_id || run.session_id === f.session_id);
}

function runRow(run) {
  const tokens = run.usage ? `${run.usage.input_tokens ?? 0} → ${run.usage.output_tokens ?? 0}` : '—';
  const tr = el('tr', { class: 'run', 'data-id': run.id, 'data-created': run.created_at },
    el('td', { class: 'mono', title: run.id }, short(run.id)),
    el('td', { class: `status status-${run.status}` }, run.status + (run.status_reason ? ` (${run.status_reason})` : '')),
    el('td', {}, run.endpoint),
    el('td', {}, run.tenant_id),
    el('td', { title: `${run.actor.type}: ${run.actor.id}` }, run.actor.name || run.actor.id),
    el('td', { class: 'mono', title: run.session_id }, short(run.session_id)),
    el('td', {}, fmtTime(run.created_at)),
    el('td', {}, fmtMs(run.duration_ms)),
    el('td', {}, fmtMs(run.time_to_first_token_ms)),
    el('td', {}, tokens));
  tr.addEventListener('click', () => { location.hash = `#run/${encodeURIComponent(run.id)}`; });
  return tr;
}

async function loadRuns(append) {
  const q = new URLSearchParams(Object.entries(filters()).filter(([, v]) => v));
  q.set('limit', '50');
  if (append && lastID) q.set('after', lastID);
  const page = await api(`/ui/api/runs?${q}`);
  const body = $('#runs');
  if (!append) { body.replaceChildren(); rows.clear(); }
  for (const run of page.data) {
    if (rows.has(run.id)) continue;
    const tr = runRow(run);
    rows.set(run.id, tr);
    body.append(tr);
  }
  lastID = page.last_id || lastID;
  $('#more').hidden = !page.has_more;
}

// upsert puts a run from the live stream in its place: newest first.
function upsert(run) {
  const old = rows.get(run.id);
  if (!matches(run)) { if (old) { old.remove(); rows.delete(run.id); } return; }
  const tr = runRow(run);
  tr.classList.add('fresh');
  if (old) { old.replaceWith(tr); } else {
    const body = $('#runs');
    let before = null;
    for (const r of body.children) {
      if (Number(r.dataset.created) <= run.created_at) { before = r; break; }
    }
    body.insertBefore(tr, before);
  }
  rows.set(run.id, tr);
  if (location.hash === `#run/${encodeURIComponent(run.id)}`) showRun(run.id);
}

// ---- live stream ------------------------------------------------------------

let stream = null;

function connect() {
  stream = new EventSource('/ui/api/stream');
  const live = $('#live');
  stream.onopen = () => { live.textContent = 'live'; live.className = 'live on'; };
  stream.onerror = () => {
    live.textContent = 'reconnecting'; live.className = 'live off';
    // A closed session answers 401 and EventSource gives up: check it.
    if (stream.readyState === EventSource.CLOSED) api('/ui/api/session').then(() => setTimeout(connect, 2000), () => {});
  };
  for (const kind of ['run.started', 'run.ended']) {
    stream.addEventListener(kind, (e) => upsert(JSON.parse(e.data)));
  }
  // The server dropped this page for falling behind: catch up, then follow again.
  stream.addEventListener('reload', () => {
    stream.close();
    $('#reload-hint').hidden = false;
    loadRuns(false).finally(() => setTimeout(connect, 500));
  });
}

// ---- run detail -------------------------------------------------------------

function dl(target, pairs) {
  target.replaceChildren();
  for (const [k, v] of pairs) target.append(el('dt', {}, k), el('dd', {}, v == null || v === '' ? '—' : v));
}

function text(content) {
  if (typeof content === 'string') return content;
  return JSON.stringify(content, null, 2);
}

async function showRun(id) {
  let run, events;
  try {
    [run, events] = await Promise.all([api(`/ui/api/runs/${encodeURIComponent(id)}`),
      api(`/ui/api/runs/${encodeURIComponent(id)}/events`)]);
  } catch (e) {
    $('#run-id').textContent = `${id}: ${e.message}`;
    return;
  }
  $('#run-id').textContent = run.id;
  dl($('#run-attribution'), [['status', run.status + (run.status_reason ? ` (${run.status_reason})` : '')],
    ['actor', `${run.actor.name || ''} (${run.actor.type}: ${run.actor.id})`], ['tenant', run.tenant_id],
    ['session', run.session_id], ['thread', run.thread_id], ['endpoint', run.endpoint], ['model', run.model],
    ['host', run.host_id], ['request id', run.request_id], ['correlation id', run.correlation_id],
    ['trace id', run.trace_id]]);
  dl($('#run-timings'), [['created', fmtTime(run.created_at)], ['started', fmtTime(run.started_at)],
    ['ended', fmtTime(run.ended_at)], ['duration', fmtMs(run.duration_ms)],
    ['time to first token', fmtMs(run.time_to_first_token_ms)], ['provider attempts', run.attempts],
    ['drives', run.drives]]);
  const u = run.usage || {};
  dl($('#run-usage'), [['input tokens', u.input_tokens], ['output tokens', u.output_tokens], ['total tokens', u.total_tokens]]);
  $('#run-error-box').hidden = !run.error;
  $('#run-error').textContent = run.error ? `${run.error.code}: ${run.error.message}` : '';
  const input = $('#run-input');
  input.replaceChildren();
  if (!run.input) input.append(el('p', { class: 'hint' }, 'not stored (store: false, or deleted)'));
  for (const m of run.input || []) {
    input.append(el('div', { class: 'msg' }, el('div', { class: 'role' }, m.role), el('div', { class: 'content' }, text(m.content))));
  }
  $('#run-output').textContent = run.output ?? (run.status === 'running' || run.status === 'queued' ? '(running)' : '(not stored)');
  const tbody = $('#run-events tbody');
  tbody.replaceChildren();
  for (const ev of events.data) {
    tbody.append(el('tr', {}, el('td', {}, ev.seq), el('td', { class: 'mono' }, ev.name),
      el('td', { class: 'mono' }, ev.data !== undefined ? JSON.stringify(ev.data) : ev.text || '')));
  }
  if (!events.data.length) tbody.append(el('tr', {}, el('td', { colspan: 3, class: 'hint' }, 'no stored events (only stored responses keep their stream events)')));
}

// ---- charts -----------------------------------------------------------------

const W = 420, H = 160, PAD = { l: 40, r: 8, t: 18, b: 20 };

function axes(box, maxY, unit) {
  box.replaceChildren();
  box.append(svg('line', { class: 'axis', x1: PAD.l, y1: H - PAD.b, x2: W - PAD.r, y2: H - PAD.b }),
    svg('line', { class: 'axis', x1: PAD.l, y1: PAD.t, x2: PAD.l, y2: H - PAD.b }));
  const top = svg('text', { x: 2, y: PAD.t + 8 }); top.textContent = `${+maxY.toPrecision(3)}${unit}`;
  const zero = svg('text', { x: 2, y: H - PAD.b }); zero.textContent = `0${unit}`;
  box.append(top, zero);
}

function lineChart(box, points, unit) {
  const maxY = Math.max(1e-9, ...points.map((p) => p.y)) * 1.1;
  axes(box, maxY, unit);
  if (points.length < 2) {
    const t = svg('text', { x: W / 2 - 40, y: H / 2 }); t.textContent = 'collecting…'; box.append(t);
    return;
  }
  const x0 = points[0].x, x1 = points[points.length - 1].x;
  const sx = (x) => PAD.l + ((x - x0) / Math.max(1, x1 - x0)) * (W - PAD.l - PAD.r);
  const sy = (y) => H - PAD.b - (y / maxY) * (H - PAD.t - PAD.b);
  box.append(svg('polyline', { class: 'line', points: points.map((p) => `${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join(' ') }));
  const span = svg('text', { x: W - 80, y: H - 4 }); span.textContent = `last ${Math.round((x1 - x0) / 1000)} s`; box.append(span);
}

// histChart draws per-bucket counts (Prometheus keeps them cumulative).
function histChart(box, h) {
  const counts = h.buckets.map((b, i) => ({ le: b.le, n: b.count - (i ? h.buckets[i - 1].count : 0) }));
  const maxY = Math.max(1, ...counts.map((c) => c.n));
  axes(box, maxY, '');
  const bw = (W - PAD.l - PAD.r) / Math.max(1, counts.length);
  counts.forEach((c, i) => {
    const bh = (c.n / maxY) * (H - PAD.t - PAD.b);
    const r = svg('rect', { class: 'bar', x: PAD.l + i * bw + 1, y: H - PAD.b - bh, width: Math.max(1, bw - 2), height: bh });
    const tip = svg('title', {}); tip.textContent = `≤ ${c.le * 1000} ms: ${c.n}`; r.append(tip);
    box.append(r);
    if (i % 3 === 0) { const t = svg('text', { x: PAD.l + i * bw, y: H - 6 }); t.textContent = c.le < 1 ? `${c.le * 1000}ms` : `${c.le}s`; box.append(t); }
  });
  const t = svg('text', { x: W - 130, y: 10 }); t.textContent = `n=${h.count}, mean ${h.count ? ((h.sum / h.count) * 1000).toFixed(1) : 0} ms`; box.append(t);
}

async function loadStats() {
  const st = await api('/ui/api/stats');
  const s = st.samples;
  const rate = [], lat = [];
  for (let i = 1; i < s.length; i++) {
    const dt = (s[i].t - s[i - 1].t) / 1000;
    if (dt <= 0) continue;
    rate.push({ x: s[i].t, y: (s[i].requests - s[i - 1].requests) / dt });
    const dn = s[i].duration_count - s[i - 1].duration_count;
    lat.push({ x: s[i].t, y: dn > 0 ? ((s[i].duration_sum - s[i - 1].duration_sum) / dn) * 1000 : 0 });
  }
  lineChart($('#chart-rate'), rate, '/s');
  lineChart($('#chart-latency'), lat, 'ms');
  histChart($('#hist-duration'), st.duration);
  histChart($('#hist-ttft'), st.ttft);
  const last = s[s.length - 1] || {};
  const pairs = [['requests', last.requests], ['4xx', last.client_errors], ['5xx', last.server_errors], ['runs in flight', last.in_flight]];
  for (const [k, v] of Object.entries(st.requests_by_endpoint)) pairs.push([`requests: ${k}`, v]);
  for (const [k, v] of Object.entries(st.runs_by_status)) pairs.push([`runs ${k}`, v]);
  dl($('#totals'), pairs);
}

// ---- usage and budgets -----------------------------------------------------

// seriesChart draws one polyline per tenant over the buckets from..to
// (a missing bucket is 0), colour by the tenant's place in the legend.
function seriesChart(box, series, from, to, step, unit) {
  let maxY = 1e-9;
  for (const pts of series.values()) for (const p of pts.values()) maxY = Math.max(maxY, p);
  maxY *= 1.1;
  axes(box, maxY, unit);
  if (!series.size) {
    const t = svg('text', { x: W / 2 - 50, y: H / 2 }); t.textContent = 'no usage yet'; box.append(t);
    return;
  }
  const x0 = Math.floor(from / step) * step, x1 = Math.floor(to / step) * step;
  const sx = (x) => PAD.l + ((x - x0) / Math.max(1, x1 - x0)) * (W - PAD.l - PAD.r);
  const sy = (y) => H - PAD.b - (y / maxY) * (H - PAD.t - PAD.b);
  let i = 0;
  for (const [tenant, pts] of series) {
    const coords = [];
    for (let x = x0; x <= x1; x += step) coords.push(`${sx(x).toFixed(1)},${sy(pts.get(x) || 0).toFixed(1)}`);
    const line = svg('polyline', { class: `line series-${i % 6}`, points: coords.join(' '), 'data-tenant': tenant });
    const tip = svg('title', {}); tip.textContent = tenant; line.append(tip);
    box.append(line);
    i++;
  }
  const span = svg('text', { x: W - 110, y: H - 4 }); span.textContent = `${new Date(x0 * 1000).toLocaleDateString()} →`; box.append(span);
}

const fmtNum = (n) => (Number.isInteger(n) ? n.toLocaleString() : n.toPrecision(4));

async function loadUsage() {
  const bucket = $('#usage-bucket').value;
  const [u, b] = await Promise.all([api(`/ui/api/usage?bucket=${bucket}`), api('/ui/api/budgets')]);
  const step = bucket === 'day' ? 86400 : 3600;
  const tokens = new Map(), cost = new Map(), totals = new Map();
  for (const p of u.points) {
    if (!tokens.has(p.tenant)) { tokens.set(p.tenant, new Map()); cost.set(p.tenant, new Map()); totals.set(p.tenant, { tokens: 0, cost: 0, runs: 0 }); }
    tokens.get(p.tenant).set(p.start, p.tokens);
    cost.get(p.tenant).set(p.start, p.cost);
    const t = totals.get(p.tenant); t.tokens += p.tokens; t.cost += p.cost; t.runs += p.runs;
  }
  seriesChart($('#chart-usage-tokens'), tokens, u.from, u.to, step, '');
  seriesChart($('#chart-usage-cost'), cost, u.from, u.to, step, '');
  let i = 0;
  $('#usage-legend').replaceChildren(...[...totals].map(([tenant, t]) => el('li', { class: `series-${i++ % 6}` },
    `${tenant}: ${fmtNum(t.tokens)} tokens, ${fmtNum(t.cost)} cost, ${t.runs} runs`)));
  const budgets = b.budgets;
  const bt = $('#budgets-table tbody');
  bt.replaceChildren(...budgets.map((x) => el('tr', { class: x.share >= 1 ? 'over' : '' }, el('td', {}, x.name), el('td', {}, x.tenant),
    el('td', {}, x.scope), el('td', {}, x.window), el('td', {}, `${fmtNum(x.used)} ${x.unit}`), el('td', {}, fmtNum(x.limit)),
    el('td', {}, `${fmtNum(x.left)} (${Math.max(0, 100 - x.share * 100).toFixed(0)}%)`), el('td', {}, fmtTime(x.reset)))));
  if (!budgets.length) bt.append(el('tr', {}, el('td', { colspan: 8, class: 'hint' }, 'no budgets configured (usage.budgets)')));
  // A tenant is as near its limit as its nearest budget (the list is sorted).
  const seen = new Set(), nearest = [];
  for (const x of budgets) if (!seen.has(x.tenant) && nearest.length < 5) { seen.add(x.tenant); nearest.push(x); }
  $('#nearest').replaceChildren(...nearest.map((x) => el('li', {}, `${x.tenant}: ${(x.share * 100).toFixed(0)}% of ${x.name} used, resets ${fmtTime(x.reset)}`)));
  if (!nearest.length) $('#nearest').append(el('li', { class: 'hint' }, 'no budgets'));
}

// ---- plugins ----------------------------------------------------------------

function plugRef(p) { return p ? `${p.plugin} ${p.version}${p.sha256 ? ` (${p.sha256.slice(0, 12)})` : ''}` : '—'; }

async function loadPlugins() {
  const { plugins, swaps } = await api('/ui/api/plugins');
  const pt = $('#plugins-table tbody');
  pt.replaceChildren(...plugins.map((p) => el('tr', {}, el('td', {}, p.stage), el('td', {}, p.plugin), el('td', {}, p.version),
    el('td', { class: 'mono', title: p.sha256 }, p.sha256 ? p.sha256.slice(0, 16) + '…' : 'built in (native)'), el('td', {}, fmtTime(p.since)),
    el('td', {}, p.hooks.join(', ')), el('td', {}, `${p.instances} (${p.idle} idle)`))));
  const st = $('#swaps-table tbody');
  st.replaceChildren(...swaps.map((s) => {
    const changes = el('td', {});
    for (const c of s.changes || []) changes.append(el('div', {}, `${c.stage}: ${plugRef(c.old)} → ${plugRef(c.new)}`));
    if (!(s.changes || []).length) changes.append(el('span', { class: 'hint' }, 'no plugin changed'));
    return el('tr', {}, el('td', {}, new Date(s.time).toLocaleString()), el('td', {}, s.trigger), el('td', {}, s.what),
      el('td', { class: s.ok ? 'status status-completed' : 'status status-failed' }, s.ok ? 'ok' : `failed: ${s.error}`), changes);
  }));
  if (!swaps.length) st.append(el('tr', {}, el('td', { colspan: 5, class: 'hint' }, 'no swaps since start')));
}

// ---- start ------------------------------------------------------------------

window.addEventListener('hashchange', route);
document.addEventListener('DOMContentLoaded', () => {
  $('#filters').addEventListener('submit', (e) => { e.preventDefault(); loadRuns(false); });
  $('#filters').addEventListener('reset', () => setTimeout(() => loadRuns(false), 0));
  $('#more').addEventListener('click', () => loadRuns(true));
  $('#usage-bucket').addEventListener('change', () => loadUsage());
  api('/ui/api/session').then((s) => { $('#who').textContent = `token: ${s.token}`; }, () => {});
  loadRuns(false).catch((e) => { $('#reload-hint').textContent = e.message; $('#reload-hint').hidden = false; });
  connect();
  route();
});
