// Strand web console: plain JS, no build step, nothing fetched but this server's own API.
'use strict';

const TOKEN_KEY = 'strand.token';
const PAGE = 50;          // list page size and history page size
const TAIL_START = 20;    // entries shown before the live tail when a log opens
const MAX_ROWS = 2000;    // entries kept on the page; older ones are dropped (page back to see them again)

const $ = id => document.getElementById(id);
const token = () => sessionStorage.getItem(TOKEN_KEY);

// ------------------------------------------------------------------ formatting

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v; else if (k === 'text') e.textContent = v; else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
}
function bytes(n) {
  if (n == null) return '–';
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i === 0 ? n : n.toFixed(1)) + ' ' + u[i];
}
function num(n) { return n == null ? '–' : Number(n).toLocaleString('en-US'); }
function time(ms) {
  if (!ms) return '–';
  const d = new Date(ms);
  return d.toISOString().replace('T', ' ').replace('Z', ' UTC');
}
function ago(ms) {
  if (!ms) return '–';
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  const rel = s < 60 ? s + ' s ago' : s < 3600 ? Math.round(s / 60) + ' min ago' : s < 86400 ? Math.round(s / 3600) + ' h ago' : Math.round(s / 86400) + ' d ago';
  return rel;
}
/**
 * Text with its bidirectional controls (U+202A–202E, U+2066–2069, LRM/RLM/ALM) shown as JSON escapes:
 * one inside a string must not reorder what is drawn after it, so data cannot pass for other fields.
 */
function visible(text) {
  return text.replace(/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, c => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}
/** Pretty-printed JSON: short values on one spaced line, longer ones indented. */
function pretty(json) {
  const oneLine = JSON.stringify(json, null, 1).replace(/\n\s*/g, ' ');
  return visible(oneLine.length <= 100 ? oneLine : JSON.stringify(json, null, 2));
}
/** A log's retention policy in words: "unlimited", or its limits ("7 d · 1,000 entries · 64.0 MiB"). */
function retentionText(r) {
  if (!r) return 'unlimited';
  const parts = [];
  if (r.maxAgeSeconds != null) parts.push(duration(r.maxAgeSeconds));
  if (r.maxEntries != null) parts.push(num(r.maxEntries) + ' entries');
  if (r.maxBytes != null) parts.push(bytes(r.maxBytes));
  return parts.length ? parts.join(' · ') : 'unlimited';
}
function duration(s) {
  for (const [unit, size] of [['d', 86400], ['h', 3600], ['min', 60]]) if (s >= size && s % size === 0) return (s / size) + ' ' + unit;
  return num(s) + ' s';
}
function dl(target, pairs) {
  target.replaceChildren();
  for (const [k, v] of pairs) target.append(el('dt', { text: k }), el('dd', { text: v == null ? '–' : String(v) }));
}

// ------------------------------------------------------------------ REST

class ApiError extends Error {
  constructor(status, code, message) { super(status + ' ' + code + ': ' + message); this.status = status; this.code = code; }
}

async function api(path) {
  let res;
  try {
    res = await fetch(path, { headers: { Authorization: 'Bearer ' + token() } });
  } catch (e) {
    throw new Error('cannot reach the server (' + e.message + '); try again once it is back');
  }
  const text = await res.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch (e) { /* not JSON */ }
  if (!res.ok) {
    const err = body && body.error ? body.error : { code: 'http_' + res.status, message: text || res.statusText };
    throw new ApiError(res.status, err.code, err.message);
  }
  return body;
}
const enc = encodeURIComponent;
const wsPath = ws => '/v1/ws/' + enc(ws);
const logPath = (ws, log) => wsPath(ws) + '/logs/' + enc(log);

function showError(e) {
  if (e instanceof ApiError && e.status === 401) { logout(e.message); return; }
  $('error').textContent = e.message || String(e);
  $('error').hidden = false;
}
/** A user action starts: the last action's error banner goes. */
function clearError() { $('error').hidden = true; }

// ------------------------------------------------------------------ login

function showLogin(message) {
  document.querySelectorAll('.view').forEach(v => { v.hidden = true; });
  $('login').hidden = false;
  $('logout').hidden = true;
  $('login-error').hidden = !message;
  $('login-error').textContent = message || '';
}

function logout(message) {
  sessionStorage.removeItem(TOKEN_KEY);
  tail.stop();
  showLogin(message);
}

$('login-form').addEventListener('submit', async ev => {
  ev.preventDefault();
  const t = $('token').value.trim();
  if (!t) return;
  sessionStorage.setItem(TOKEN_KEY, t);
  try {
    await api('/v1/ws'); // checks the token before anything else is shown
    $('token').value = '';
    $('login').hidden = true;
    route();
  } catch (e) {
    sessionStorage.removeItem(TOKEN_KEY);
    showLogin(e instanceof ApiError ? e.message : 'cannot reach the server: ' + e.message);
  }
});
$('logout').addEventListener('click', () => { logout(); history.replaceState(null, '', '#/'); });

// ------------------------------------------------------------------ views

function show(view, crumbs) {
  document.querySelectorAll('.view').forEach(v => { v.hidden = v.id !== view; });
  $('error').hidden = true;
  $('logout').hidden = false;
  const nav = $('crumbs');
  nav.replaceChildren();
  crumbs.forEach(([label, href], i) => {
    if (i > 0) nav.append(el('span', { class: 'sep', text: '/' }));
    nav.append(href ? el('a', { href, text: label }) : el('span', { text: label }));
  });
}

async function workspacesView() {
  show('view-workspaces', [['workspaces']]);
  const body = await api('/v1/ws');
  const rows = $('ws-rows');
  rows.replaceChildren();
  for (const w of body.workspaces) {
    rows.append(el('tr', {},
      el('td', {}, el('a', { href: '#/ws/' + enc(w.ws), text: w.ws })),
      el('td', { class: 'num', text: num(w.logs) }), el('td', { class: 'num', text: num(w.entries) }),
      el('td', { class: 'num', text: bytes(w.logBytes) }), el('td', { class: 'num', text: num(w.docs) }),
      el('td', { class: 'num', text: bytes(w.docBytes) })));
  }
  if (!body.workspaces.length) rows.append(el('tr', {}, el('td', { class: 'empty', colspan: 6, text: 'no workspaces yet' })));
}

async function logRow(ws, name) {
  const [info, cold, last] = await Promise.all([
    api(logPath(ws, name)).catch(() => null),
    api(logPath(ws, name) + '/cold').catch(() => null),
    api(logPath(ws, name) + '/entries?before=end&limit=1').catch(() => null)]);
  const lastEntry = last && last.entries.length ? last.entries[last.entries.length - 1] : null;
  const retention = info ? retentionText(info.retention) : '–';
  return el('tr', { 'data-log': name },
    el('td', {}, el('a', { href: '#/ws/' + enc(ws) + '/log/' + enc(name), text: name })),
    el('td', { class: 'num', text: num(info && info.entries) }),
    el('td', { class: 'num', text: info ? info.first + '–' + info.head : '–' }),
    el('td', { class: 'num', text: bytes(info && info.bytes) }),
    el('td', { class: 'num', text: bytes(cold && cold.bytes) }),
    el('td', { class: 'num', text: num(cold && cold.segments) }),
    el('td', { title: lastEntry ? time(lastEntry.ts) : '', text: lastEntry ? ago(lastEntry.ts) : '–' }),
    el('td', { text: retention }));
}

async function docRow(ws, name) {
  const doc = await api(wsPath(ws) + '/docs/' + enc(name)).catch(() => null);
  const size = doc ? new TextEncoder().encode(JSON.stringify(doc.value)).length : null;
  return el('tr', { 'data-doc': name },
    el('td', {}, el('a', { href: '#/ws/' + enc(ws) + '/doc/' + enc(name), text: name })),
    el('td', { class: 'num', text: num(doc && doc.version) }),
    el('td', { class: 'num', text: bytes(size) }));
}

/** Fills a table page by page: the "more" button fetches the next page from the list's `after`. */
async function pagedTable(tbody, more, listUrl, field, row, emptyText, columns) {
  tbody.replaceChildren();
  let after = null;
  const load = async () => {
    const page = await api(listUrl + '?limit=' + PAGE + (after ? '&after=' + enc(after) : ''));
    const rows = await Promise.all(page[field].map(row));
    tbody.append(...rows);
    after = page.after || null;
    more.hidden = !after;
    if (!tbody.children.length) tbody.append(el('tr', {}, el('td', { class: 'empty', colspan: columns, text: emptyText })));
  };
  more.onclick = () => load().catch(showError);
  await load();
}

async function workspaceView(ws) {
  show('view-workspace', [['workspaces', '#/'], [ws]]);
  $('ws-title').textContent = 'Workspace ' + ws;
  await Promise.all([
    pagedTable($('log-rows'), $('logs-more'), wsPath(ws) + '/logs', 'logs', n => logRow(ws, n), 'no logs', 8),
    pagedTable($('doc-rows'), $('docs-more'), wsPath(ws) + '/docs', 'docs', n => docRow(ws, n), 'no docs', 3)]);
}

async function docView(ws, name) {
  show('view-doc', [['workspaces', '#/'], [ws, '#/ws/' + enc(ws)], ['doc ' + name]]);
  $('doc-title').textContent = name;
  for (const id of ['doc-version', 'doc-size', 'doc-json']) $(id).textContent = '';
  const doc = await api(wsPath(ws) + '/docs/' + enc(name));
  $('doc-version').textContent = doc.version;
  $('doc-size').textContent = bytes(new TextEncoder().encode(JSON.stringify(doc.value)).length);
  $('doc-json').textContent = visible(JSON.stringify(doc.value, null, 2));
}

// ------------------------------------------------------------------ log view: live tail over the socket

/**
 * The open log view's subscription; one at a time. A socket that drops (the server restarting, the
 * network) is reopened with a growing delay (1 s, 2 s, … 10 s) and the subscription resumes from the
 * next seq not yet shown, so nothing is missed or shown twice.
 */
const tail = {
  socket: null, ws: null, log: null, sub: 0, next: 1, lowest: null, paused: false, caughtUp: false, start: 1, ids: 0, replayHead: null,
  retry: null, retryMs: 0, note: '',

  open(ws, log, from) {
    this.stop();
    Object.assign(this, { ws, log, paused: false, lowest: null, next: from, retryMs: 0, note: '' });
    $('entries').replaceChildren();
    $('tail-toggle').textContent = 'Pause';
    this.connect(from);
  },

  /** Opens the socket; once it is open, subscribes from {@code from} unless paused. */
  connect(from) {
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const url = proto + '//' + location.host + wsPath(this.ws) + '/socket?token=' + enc(token());
    const socket = new WebSocket(url);
    this.socket = socket;
    socket.onopen = () => {
      this.retryMs = 0;
      if (this.paused) this.state('paused at seq ' + num(this.next - 1), false);
      else this.subscribe(from);
    };
    socket.onmessage = m => this.frame(JSON.parse(m.data));
    socket.onclose = ev => {
      if (this.socket !== socket) return; // closed on purpose (another log, a jump)
      this.socket = null;
      if (ev.code === 4001) { logout('401 unauthorized: the token expired or was revoked'); return; }
      this.retryMs = Math.min(10000, this.retryMs ? this.retryMs * 2 : 1000);
      this.state('disconnected (' + (ev.code || 'no answer') + (ev.reason ? ': ' + ev.reason : '') + '); reconnecting in '
        + this.retryMs / 1000 + ' s…', false);
      this.retry = setTimeout(() => { this.retry = null; this.connect(this.next); }, this.retryMs);
    };
  },

  subscribe(from) {
    this.sub++;
    this.caughtUp = false;
    document.querySelectorAll('#caught-up').forEach(m => m.removeAttribute('id'));
    this.start = from;
    this.replayHead = null;
    if (this.lowest == null) this.lowest = from;
    this.send({ op: 'subscribe', log: this.log, from, sub: 't' + this.sub });
    this.state('replaying…', false);
  },

  send(frame) {
    if (this.socket && this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify({ id: ++this.ids, ...frame }));
  },

  frame(f) {
    if (f.id != null) {
      if (!f.ok) showError(new ApiError('', f.error.code, f.error.message));
      else if (f.sub === 't' + this.sub && f.head != null) { this.start = f.from; this.replayHead = f.head; this.progress(f.from, f.head); }
      return;
    }
    if (f.sub !== 't' + this.sub) return; // a frame of a subscription already ended
    switch (f.type) {
      case 'entries':
        this.next = f.next;
        f.entries.forEach(e => $('entries').append(entryItem(e, this.caughtUp)));
        trim();
        if (this.caughtUp) window.scrollTo(0, document.body.scrollHeight);
        else this.progress(f.next, this.replayHead);
        break;
      case 'progress':
        this.replayHead = f.head;
        this.progress(f.next, f.head, (f.rate ? ' · ' + num(Math.round(f.rate)) + ' entries/s' : '')
          + (f.etaMs > 0 ? ' · ' + Math.ceil(f.etaMs / 1000) + ' s left' : ''));
        break;
      case 'caughtUp':
        this.caughtUp = true;
        this.next = f.next;
        $('progress-bar').style.width = '100%';
        $('progress-text').textContent = (f.next - 1 < this.start ? 'caught up at seq ' + num(f.next - 1) + ': nothing to replay'
          : 'caught up: replayed seqs ' + num(this.start) + ' – ' + num(f.next - 1)) + (this.note ? ' (' + this.note + ')' : '');
        $('entries').append(el('li', { class: 'marker', id: 'caught-up', text: 'caught up at seq ' + num(f.next - 1) + ' · live' }));
        this.state('live', true);
        break;
      case 'closed':
        this.next = f.next;
        this.state('subscription closed: ' + f.reason + (f.error ? ' (' + f.error.message + ')' : ''), false);
        break;
      default: // heartbeat, gap
    }
  },

  /** The replay bar: how far from the subscription's start to the head it had when last told. */
  progress(next, head, extra = '') {
    if (head == null) return;
    const total = Math.max(1, head + 1 - this.start);
    const done = Math.max(0, Math.min(total, next - this.start));
    $('progress').hidden = false;
    $('progress-bar').style.width = (100 * done / total).toFixed(1) + '%';
    $('progress-text').textContent = 'replay ' + num(next - 1) + ' / ' + num(head) + extra;
  },

  pause() {
    this.paused = true;
    this.send({ op: 'unsubscribe', sub: 't' + this.sub });
    this.sub++; // frames still in flight for the old subscription are dropped
    $('tail-toggle').textContent = 'Resume';
    this.state('paused at seq ' + num(this.next - 1), false);
  },

  resume() {
    this.paused = false;
    $('tail-toggle').textContent = 'Pause';
    if (this.socket && this.socket.readyState === WebSocket.OPEN) this.subscribe(this.next);
    else if (!this.socket && !this.retry) this.connect(this.next);
    else this.state('reconnecting…', false); // the socket being opened subscribes once it is open
  },

  stop() {
    if (this.retry) { clearTimeout(this.retry); this.retry = null; }
    if (this.socket) { const s = this.socket; this.socket = null; s.close(); }
    $('progress').hidden = true;
  },

  state(text, live) {
    $('tail-state').textContent = text;
    $('tail-state').className = 'state' + (live ? ' live' : '');
  },
};

function entryItem(e, fresh) {
  const head = el('div', { class: 'head' }, el('span', { class: 'seq', text: '#' + e.seq }),
    el('span', { title: String(e.ts), text: time(e.ts) }));
  if (e.key != null) head.append(el('span', { class: 'key', text: 'key ' + visible(e.key) }));
  return el('li', { class: 'entry' + (fresh ? ' new' : ''), 'data-seq': e.seq }, head, el('pre', { text: pretty(e.data) }));
}

function trim() {
  const list = $('entries');
  while (list.children.length > MAX_ROWS) list.firstElementChild.remove();
  const first = list.querySelector('li.entry');
  if (first) tail.lowest = Number(first.dataset.seq);
  $('older').hidden = tail.lowest <= 1;
}

/** Pages backwards (hot and cold alike: the server reads across the boundary) from the oldest entry shown; one page at a time. */
let loadingOlder = false;
async function loadOlder() {
  if (loadingOlder) return;
  loadingOlder = true;
  $('older').disabled = true;
  try {
    clearError();
    const { ws, log } = tail;
    const page = await api(logPath(ws, log) + '/entries?before=' + tail.lowest + '&limit=' + PAGE);
    if (tail.ws !== ws || tail.log !== log) return; // the view moved on meanwhile
    const list = $('entries');
    const anchor = list.firstElementChild;
    for (const e of page.entries) list.insertBefore(entryItem(e, false), anchor);
    if (page.entries.length) tail.lowest = page.entries[0].seq; else tail.lowest = page.prev;
    $('older').hidden = tail.lowest <= 1;
  } finally {
    loadingOlder = false;
    $('older').disabled = false;
  }
}

/**
 * Replays from a seq or a time: digits are a seq (a 12-digit-or-longer number past the head is taken as
 * epoch milliseconds), anything else a time the browser can read (2026-12-01T10:00:00Z, 2026-12-01;
 * without a zone, local time).
 */
async function jump(to) {
  clearError();
  const info = await api(logPath(tail.ws, tail.log)).catch(() => ({ head: 0 }));
  let from;
  let note = '';
  if (/^\d+$/.test(to) && !(to.length >= 12 && Number(to) > info.head + 1)) {
    from = Number(to);
  } else {
    const at = new Date(/^\d+$/.test(to) ? Number(to) : to);
    if (isNaN(at.getTime())) throw new Error("'" + to + "' is neither a seq nor a time (2026-12-01T10:00:00Z, 2026-12-01)");
    const page = await api(logPath(tail.ws, tail.log) + '/entries?fromTime=' + enc(at.toISOString()) + '&limit=1');
    from = page.entries.length ? page.entries[0].seq : page.next;
    if (!page.entries.length) note = 'no entry at or after ' + time(at.getTime()) + ' yet';
  }
  if (from > info.head + 1) note = 'seq ' + num(from) + ' is past the head, ' + num(info.head);
  tail.open(tail.ws, tail.log, Math.max(1, Math.min(from, info.head + 1)));
  tail.note = note;
}

async function logView(ws, log) {
  show('view-log', [['workspaces', '#/'], [ws, '#/ws/' + enc(ws)], ['log ' + log]]);
  $('log-title').textContent = log;
  $('jump-to').value = '';
  tail.stop(); // nothing of the last log stays on screen, even if this one cannot be read
  for (const id of ['entries', 'log-info', 'log-cold']) $(id).replaceChildren();
  $('tail-state').textContent = '';
  $('older').hidden = true;
  const [info, cold] = await Promise.all([api(logPath(ws, log)).catch(e => (e.status === 404 ? null : Promise.reject(e))),
    api(logPath(ws, log) + '/cold').catch(e => ({ error: e.message }))]);
  dl($('log-info'), info ? [['entries', num(info.entries)], ['seqs', info.first + ' – ' + info.head], ['hot from seq', info.hotFirst],
    ['bytes', bytes(info.bytes)], ['created', time(info.created)], ['retention', retentionText(info.retention)]]
    : [['state', 'no entries yet (waiting for the first append)']]);
  dl($('log-cold'), cold.error ? [['error', cold.error]] : [['store', cold.store], ['segments', num(cold.segments)],
    ['cold seqs', cold.entries ? cold.firstSeq + ' – ' + cold.lastSeq : 'none'], ['cold bytes', bytes(cold.bytes)],
    ['generation', cold.generation], ['pending deletes', num(cold.pendingDeletes)],
    ['node rolls / failures', cold.node ? cold.node.rolls + ' / ' + cold.node.rollFailures : '–'],
    ['last roll error', cold.node && cold.node.lastError ? cold.node.lastError : 'none']]);
  const head = info ? info.head : 0;
  tail.open(ws, log, Math.max(1, head - TAIL_START + 1));
}

$('tail-toggle').addEventListener('click', () => (tail.paused ? tail.resume() : tail.pause()));
$('older').addEventListener('click', () => loadOlder().catch(showError));
$('jump-form').addEventListener('submit', ev => {
  ev.preventDefault();
  const to = $('jump-to').value.trim();
  if (to) jump(to).catch(showError);
});

// ------------------------------------------------------------------ metrics bar

/** Sums every series of a Prometheus metric (any labels). */
function metric(text, name) {
  let sum = null;
  const re = new RegExp('^' + name + '(?:\\{[^}]*\\})?\\s+([-+0-9.eEInfa]+)', 'gm');
  for (const m of text.matchAll(re)) sum = (sum || 0) + Number(m[1]);
  return sum;
}

const metricsState = { at: 0, appends: null, syncSum: null, syncCount: null, ackSum: null, ackCount: null };

/** Mean milliseconds of a timer over the last interval ('idle' when nothing was timed). */
function meanMs(sum, count, prevSum, prevCount) {
  return count != null && prevCount != null && count > prevCount ? (1000 * (sum - prevSum) / (count - prevCount)).toFixed(2) : 'idle';
}

async function refreshMetrics() {
  try {
    const res = await fetch('/observe/metrics', { headers: { Accept: 'text/plain' } });
    const text = await res.text();
    const now = performance.now();
    const appends = metric(text, 'strand_appends_total');
    const syncSum = metric(text, 'strand_commit_sync_seconds_sum');
    const syncCount = metric(text, 'strand_commit_sync_seconds_count');
    const ackSum = metric(text, 'strand_append_latency_seconds_sum');
    const ackCount = metric(text, 'strand_append_latency_seconds_count');
    const p = metricsState;
    if (p.at && appends != null) $('m-rate').textContent = num(Math.round((appends - p.appends) / ((now - p.at) / 1000)));
    if (p.at) {
      $('m-commit').textContent = meanMs(syncSum, syncCount, p.syncSum, p.syncCount);
      $('m-ack').textContent = meanMs(ackSum, ackCount, p.ackSum, p.ackCount);
    }
    Object.assign(p, { at: now, appends, syncSum, syncCount, ackSum, ackCount });
    const subs = metric(text, 'strand_subscribers');
    $('m-subs').textContent = num(subs == null ? 0 : subs);
  } catch (e) { // the server is away: no figure stays up as if it were current
    for (const id of ['m-rate', 'm-ack', 'm-commit', 'm-subs']) $(id).textContent = '?';
    metricsState.at = 0;
  }
  try {
    const res = await fetch('/observe/health');
    const h = await res.json();
    const disk = (h.checks || []).find(c => c.name === 'diskSpace');
    $('m-disk').textContent = disk && disk.data ? bytes(disk.data.freeBytes) : '–';
    $('m-health').textContent = h.status;
    $('m-health').className = h.status === 'UP' ? 'up' : 'down';
  } catch (e) {
    $('m-disk').textContent = '?';
    $('m-health').textContent = '?';
    $('m-health').className = '';
  }
}

// ------------------------------------------------------------------ routing

async function route() {
  if (!token()) { showLogin(); return; }
  $('login').hidden = true;
  const parts = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  if (parts[0] !== 'ws' || !parts[1]) tail.stop();
  try {
    if (parts[0] === 'ws' && parts[1] && parts[2] === 'log' && parts[3]) await logView(parts[1], parts[3]);
    else if (parts[0] === 'ws' && parts[1] && parts[2] === 'doc' && parts[3]) { tail.stop(); await docView(parts[1], parts[3]); }
    else if (parts[0] === 'ws' && parts[1]) { tail.stop(); await workspaceView(parts[1]); }
    else await workspacesView();
  } catch (e) { showError(e); }
}

window.addEventListener('hashchange', route);
refreshMetrics();
setInterval(refreshMetrics, 2000);
route();
