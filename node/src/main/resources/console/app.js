'use strict';
/*
 * Ratchet web console: plain JavaScript over this node's own /v1 API (docs/HTTP.md).
 *
 * - Every write is conditioned: an edit or delete on the index the page loaded (If-Match: "N"),
 *   a create on absence (If-None-Match: *). There is no blind write anywhere.
 * - Server text only ever enters the page as text (text nodes, textContent, attribute values),
 *   never as HTML.
 * - Expiry and lease times count down on cluster time: the highest clusterTime of /v1/status,
 *   kept as an offset to the browser's clock.
 */

// ---------------------------------------------------------------- DOM helpers

/** Makes an element; attributes starting with "on" are listeners, children are nodes or text. */
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value == null || value === false) continue;
    if (name.startsWith('on')) el.addEventListener(name.slice(2), value);
    else if (name === 'value') el.value = value;
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child == null || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

const byId = (id) => document.getElementById(id);

function setView(...children) {
  byId('view').replaceChildren(...children);
}

// ---------------------------------------------------------------- JSON that keeps big numbers

/** A number JavaScript cannot hold exactly (say 2^63-1): kept as its source text. */
class RawNumber {
  constructor(source) { this.source = source; }
}

/**
 * JSON.parse, except that numbers a double would round are kept as their source text (where the
 * browser gives revivers the source, as Chromium and Firefox do), so showing and editing a value
 * never changes it.
 */
function parseJson(text) {
  return JSON.parse(text, function (key, value, context) {
    if (typeof value === 'number' && context && typeof context.source === 'string'
        && String(value) !== context.source && !Number.isSafeInteger(value) && /[0-9]{16,}/.test(context.source)) {
      return new RawNumber(context.source);
    }
    return value;
  });
}

/** JSON text of a parsed value: indented with two spaces, or compact. */
function toJson(value, indent = '  ', depth = '') {
  if (value instanceof RawNumber) return value.source;
  const inner = depth + indent;
  const sep = indent ? ',\n' : ',';
  const open = indent ? '\n' : '';
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return '[' + open + value.map((v) => (indent ? inner : '') + toJson(v, indent, inner)).join(sep)
        + open + (indent ? depth : '') + ']';
  }
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value);
    if (keys.length === 0) return '{}';
    return '{' + open + keys.map((k) => (indent ? inner : '') + JSON.stringify(k) + (indent ? ': ' : ':')
        + toJson(value[k], indent, inner)).join(sep) + open + (indent ? depth : '') + '}';
  }
  return JSON.stringify(value);
}

const pretty = (value) => toJson(value);
const compact = (value) => toJson(value, '');

function preview(value, max = 80) {
  const text = compact(value);
  return text.length > max ? text.slice(0, max - 1) + '…' : text;
}

// ---------------------------------------------------------------- the API

/**
 * The bearer token the user gave (a cluster with authentication on answers 401 without one); kept for
 * this tab only, never in a cookie, so no other site's page can make the browser send it.
 */
const TOKEN_KEY = 'ratchet-token';
const token = () => sessionStorage.getItem(TOKEN_KEY);

function askToken(event) {
  event.preventDefault();
  const given = prompt('Bearer token (from ratchet user add); empty to forget it', token() || '');
  if (given === null) return;
  if (given.trim()) sessionStorage.setItem(TOKEN_KEY, given.trim()); else sessionStorage.removeItem(TOKEN_KEY);
  location.reload();
}

/** One call to this node's API; answers {status, ok, json, text, headers}. Never throws on HTTP status. */
async function api(method, path, { body, headers } = {}) {
  const init = { method, cache: 'no-store', headers: { Accept: 'application/json', ...headers } };
  if (token()) init.headers.Authorization = 'Bearer ' + token();
  if (body !== undefined) {
    init.body = body;
    init.headers['Content-Type'] = 'application/json';
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    const message = `could not reach this node (${e.message})`;
    return { status: 0, ok: false, json: { error: 'network', message }, text: '', headers: new Headers() };
  }
  const text = await res.text();
  let json = null;
  if (text) {
    try { json = parseJson(text); } catch (e) { json = null; }
  }
  return { status: res.status, ok: res.ok, json, text, headers: res.headers };
}

/** Path segments encoded one by one: the API takes the key as the rest of the path, slashes included. */
const encodeKey = (key) => key.split('/').map(encodeURIComponent).join('/');
const itemPath = (key) => '/v1/items/' + encodeKey(key);
const itemHash = (key) => '#/item/' + encodeKey(key);

function query(params) {
  const parts = Object.entries(params)
      .filter(([, v]) => v !== undefined && v !== null && v !== '')
      .map(([k, v]) => `${k}=${encodeURIComponent(v)}`);
  return parts.length ? '?' + parts.join('&') : '';
}

const quoted = (index) => `"${index}"`;

/**
 * Whether a key has a "." or ".." path segment: a browser resolves those in every URL it fetches
 * (even percent-encoded), so this page could only ever reach some other key.
 */
const unreachableByUrl = (key) => key.split('/').some((s) => s === '.' || s === '..');
const DOT_SEGMENT = 'has a "." or ".." segment, which a browser resolves away in any URL: the console cannot address it (use the command line or a client).';

// ---------------------------------------------------------------- errors and notices

function showError(message, title) {
  const el = byId('error');
  el.replaceChildren(
      title ? h('strong', {}, title + ': ') : '',
      h('span', { id: 'error-message' }, message),
      h('button', { type: 'button', class: 'close', title: 'Dismiss', onclick: clearError }, '×'));
  el.hidden = false;
}

/** Shows a failed call: the message of the JSON error body. */
function showFailure(res, doing) {
  const body = res.json && typeof res.json === 'object' ? res.json : {};
  let message = body.message || res.text || `HTTP ${res.status}`;
  if (res.status === 504) message += ' — the write may have been applied: reload before you try again.';
  if (res.status === 503) message += ' — nothing was written.';
  const code = res.status ? `${res.status} ${body.error || ''}`.trim() : 'network';
  showError(message, doing ? `${doing} failed (${code})` : code);
}

function clearError() {
  const el = byId('error');
  el.hidden = true;
  el.replaceChildren();
}

// ---------------------------------------------------------------- cluster time

const clock = { offset: null, syncedAt: 0 };

/** Learns cluster time from a /v1/status answer: the highest clusterTime among the nodes. */
function noteStatus(status) {
  if (!status || !Array.isArray(status.nodes)) return;
  const times = status.nodes.map((n) => n.clusterTime).filter((t) => typeof t === 'number' && t > 0);
  if (times.length) {
    clock.offset = Math.max(...times) - Date.now();
    clock.syncedAt = Date.now();
  }
  if (status.node) byId('node-id').textContent = status.node;
}

async function syncClock(force) {
  if (!force && clock.offset !== null && Date.now() - clock.syncedAt < 30000) return;
  const res = await api('GET', '/v1/status');
  if (res.ok) noteStatus(res.json);
}

const clusterNow = () => Date.now() + (clock.offset ?? 0);

function duration(ms) {
  const s = Math.ceil(ms / 1000);
  if (s < 120) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 120) return `${m} min ${s % 60} s`;
  const hours = Math.floor(m / 60);
  if (hours < 48) return `${hours} h ${m % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** Text for an expiry; "in" style: "expires in 12 s", "left" style: "12 s". */
function expiryText(expiresAt, style) {
  if (expiresAt == null || expiresAt === 0) return style === 'left' ? '—' : 'never';
  const left = expiresAt - clusterNow();
  if (left <= 0) return 'expired';
  const text = style === 'left' ? duration(left) : `expires in ${duration(left)}`;
  return clock.offset === null ? text + ' (browser clock)' : text;
}

/** An element that counts down to expiresAt, refreshed every second by tickExpiries. */
function countdown(expiresAt, attrs = {}, style = 'in') {
  const el = h('span', { ...attrs, class: 'countdown', 'data-style': style });
  if (expiresAt != null && expiresAt !== 0) {
    el.dataset.expires = String(expiresAt);
    el.title = new Date(expiresAt).toISOString() + ' (cluster time)';
  }
  el.textContent = expiryText(expiresAt, style);
  return el;
}

function tickExpiries() {
  for (const el of document.querySelectorAll('[data-expires]')) {
    const text = expiryText(Number(el.dataset.expires), el.dataset.style);
    if (el.textContent !== text) el.textContent = text;
    el.classList.toggle('expired', text === 'expired');
  }
}

// ---------------------------------------------------------------- routing

let generation = 0;   // bumped on every route: answers for a page that is gone are dropped
let flash = null;     // a notice for the next page
let handoff = null;   // {key, item} the next item page shows without reading it again

/** The current page's liveness check. */
function page() {
  const mine = ++generation;
  return () => mine === generation;
}

/** Repeats fn every ms while the page is open (the next run starts after the previous one ends). */
function poll(alive, ms, fn) {
  const tick = async () => {
    if (!alive()) return;
    try { await fn(); } finally { if (alive()) setTimeout(tick, ms); }
  };
  tick();
}

function go(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

function takeFlash() {
  const f = flash;
  flash = null;
  return f ? h('p', { id: 'notice', class: 'notice', role: 'status' }, f) : '';
}

function decodeHashKey(text) {
  try { return decodeURIComponent(text); } catch (e) { return text; }
}

function route() {
  clearError();
  const hash = location.hash || '#/items';
  let m;
  let nav;
  if ((m = /^#\/items(?:\?(.*))?$/.exec(hash))) { nav = 'items'; itemsView(new URLSearchParams(m[1] || '')); }
  else if ((m = /^#\/item\/(.+)$/.exec(hash))) { nav = 'items'; itemView(decodeHashKey(m[1])); }
  else if ((m = /^#\/new(?:\?(.*))?$/.exec(hash))) { nav = 'new'; newView(new URLSearchParams(m[1] || '')); }
  else if (hash === '#/cluster') { nav = 'cluster'; clusterView(); }
  else if (hash === '#/locks') { nav = 'locks'; locksView(); }
  else if (hash === '#/hotkeys') { nav = 'hotkeys'; hotkeysView(); }
  else { page(); setView(h('h1', {}, 'Not found'), h('p', {}, 'No such page: ', h('code', {}, hash))); }
  for (const a of document.querySelectorAll('#nav a')) a.classList.toggle('current', a.dataset.nav === nav);
}

// ---------------------------------------------------------------- items

const PAGE_SIZES = [25, 50, 100, 500];

function itemsView(params) {
  const alive = page();
  const prefix = params.get('prefix') || '';
  const start = Math.max(0, parseInt(params.get('start') || '0', 10) || 0);
  const pageSize = PAGE_SIZES.includes(Number(params.get('pageSize'))) ? Number(params.get('pageSize')) : 50;

  const prefixBox = h('input', { id: 'prefix', type: 'search', value: prefix, placeholder: 'all keys', autocomplete: 'off', spellcheck: 'false' });
  const sizeBox = h('select', { id: 'page-size' }, PAGE_SIZES.map((n) => h('option', { value: n, selected: n === pageSize }, n)));
  const listHash = (s) => '#/items' + query({ prefix: prefixBox.value, start: s || undefined, pageSize: Number(sizeBox.value) === 50 ? undefined : sizeBox.value });
  const form = h('form', { id: 'items-form', class: 'bar', onsubmit: (e) => { e.preventDefault(); go(listHash(0)); } },
      h('label', { for: 'prefix' }, 'Key prefix'), prefixBox,
      h('label', { for: 'page-size' }, 'Page size'), sizeBox,
      h('button', { type: 'submit', id: 'list' }, 'List'),
      h('a', { class: 'button', href: '#/new' + query({ key: prefix }) }, 'New item'));
  sizeBox.addEventListener('change', () => go(listHash(0)));

  const body = h('tbody', {}, h('tr', {}, h('td', { colspan: 5, class: 'muted' }, 'Loading…')));
  const table = h('table', { id: 'items-table', class: 'grid' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Key'), h('th', { class: 'num' }, 'Index'), h('th', { class: 'num' }, 'Created index'),
          h('th', {}, 'Expiry'), h('th', { class: 'col-value' }, 'Value'))),
      body);
  const prev = h('button', { type: 'button', id: 'prev', disabled: start === 0, onclick: () => go(listHash(Math.max(0, start - pageSize))) }, '← Previous');
  const next = h('button', { type: 'button', id: 'next', disabled: true }, 'Next →');
  const info = h('span', { id: 'page-info', class: 'muted' });
  setView(h('h1', {}, 'Items'), takeFlash(), form, table, h('div', { class: 'pager' }, prev, info, next));

  (async () => {
    const res = await api('GET', '/v1/items' + query({ prefix, start, pageSize }));
    if (!alive()) return;
    if (!res.ok) {
      body.replaceChildren(h('tr', {}, h('td', { colspan: 5, class: 'muted' }, 'Could not list items.')));
      showFailure(res, 'Listing');
      return;
    }
    const items = res.json.items || [];
    if (items.length === 0) {
      body.replaceChildren(h('tr', {}, h('td', { colspan: 5, class: 'muted' },
          prefix ? `No items with a key starting with "${prefix}"` : 'No items', start ? ' on this page.' : '.')));
    } else {
      body.replaceChildren(...items.map((item) => h('tr', { 'data-key': item.key },
          h('td', {}, h('a', { href: itemHash(item.key), class: 'key' }, item.key)),
          h('td', { class: 'num' }, item.index),
          h('td', { class: 'num' }, item.createdIndex),
          h('td', { class: 'when' }, countdown(item.expiresAt)),
          h('td', { class: 'preview' }, h('code', {}, preview(item.value))))));
    }
    info.textContent = items.length ? `${start + 1}–${start + items.length}` : '';
    if (res.json.next != null) {
      next.disabled = false;
      next.addEventListener('click', () => go(listHash(res.json.next)));
    }
    syncClock(false).then(() => alive() && tickExpiries());
  })();
}

// ---------------------------------------------------------------- one item

/** The value editor's text as a request body, or undefined (and an error shown) when it is not JSON. */
function readValue(text) {
  try {
    if (JSON.parse(text) === null) {
      showError('The value must be JSON other than null.', 'Not saved');
      return undefined;
    }
    return text.trim();
  } catch (e) {
    showError(`The value is not valid JSON: ${e.message}`, 'Not saved');
    return undefined;
  }
}

/** Metadata text (a JSON object, or empty for none) as compact text or null; undefined when invalid. */
function readMetadata(text, dropExpiry) {
  if (!text.trim()) return null;
  let meta;
  try {
    meta = parseJson(text);
  } catch (e) {
    showError(`The metadata is not valid JSON: ${e.message}`, 'Not saved');
    return undefined;
  }
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) {
    showError('The metadata must be a JSON object, such as {"owner": "me"}.', 'Not saved');
    return undefined;
  }
  if (dropExpiry) delete meta['@expires'];
  return Object.keys(meta).length ? compact(meta) : null;
}

async function itemView(key) {
  const alive = page();
  if (unreachableByUrl(key)) {
    setView(h('h1', {}, 'Item ', h('code', { id: 'item-key' }, key)));
    showError(`The key ${DOT_SEGMENT}`, 'Cannot open');
    return;
  }
  if (handoff && handoff.key === key) {
    const { item } = handoff;
    handoff = null;
    renderItem(alive, key, item);
    return;
  }
  setView(h('h1', {}, 'Item ', h('code', {}, key)), h('p', { class: 'muted' }, 'Loading…'));
  const res = await api('GET', itemPath(key));
  if (!alive()) return;
  if (res.status === 404) {
    setView(h('h1', {}, 'Item ', h('code', { id: 'item-key' }, key)), takeFlash(),
        h('p', { id: 'absent' }, 'There is no item under this key.'),
        h('p', {}, h('a', { class: 'button', href: '#/new' + query({ key }) }, 'Create it'), ' ',
            h('a', { href: '#/items' }, 'Back to items')));
    return;
  }
  if (!res.ok) {
    setView(h('h1', {}, 'Item ', h('code', {}, key)));
    showFailure(res, 'Reading');
    return;
  }
  renderItem(alive, key, res.json);
}

function metaList(item) {
  return h('dl', { class: 'facts' },
      h('dt', {}, 'Index'), h('dd', {}, h('span', { id: 'item-index' }, item.index)),
      h('dt', {}, 'Created index'), h('dd', {}, h('span', { id: 'item-created' }, item.createdIndex)),
      h('dt', {}, 'Expiry'), h('dd', {}, countdown(item.expiresAt, { id: 'item-expiry' }),
          item.expiresAt ? h('span', { class: 'muted' }, ' at ' + new Date(item.expiresAt).toISOString()) : ''),
      h('dt', {}, 'Metadata'), h('dd', {}, item.metadata == null
          ? h('span', { id: 'item-metadata', class: 'muted' }, 'none')
          : h('code', { id: 'item-metadata' }, compact(item.metadata))));
}

/** Rows for a textarea holding text: its lines, within min and max. */
const fit = (text, min, max) => Math.max(min, Math.min(max, text.split('\n').length + 1));

function renderItem(alive, key, item) {
  const valueEditor = h('textarea', { id: 'value-editor', rows: 10, spellcheck: 'false' });
  valueEditor.value = pretty(item.value);
  valueEditor.rows = fit(valueEditor.value, 6, 20);
  const metaEditor = h('textarea', { id: 'metadata-editor', rows: 2, spellcheck: 'false', placeholder: 'none' });
  metaEditor.value = item.metadata == null ? '' : pretty(item.metadata);
  metaEditor.rows = fit(metaEditor.value, 2, 8);
  const ttlBox = h('input', { id: 'edit-ttl', autocomplete: 'off', placeholder: item.expiresAt ? 'keep the expiry' : 'never expires' });
  const conflictSlot = h('div', { id: 'conflict-slot' });
  const confirmBox = h('div', { id: 'delete-confirm', class: 'confirm', hidden: true },
      `Delete ${item.key} if it is still at index ${item.index}? `,
      h('button', { type: 'button', id: 'confirm-delete', class: 'danger', onclick: () => doDelete() }, 'Delete'),
      ' ',
      h('button', { type: 'button', onclick: () => { confirmBox.hidden = true; } }, 'Cancel'));
  const buttons = () => [...byId('view').querySelectorAll('button')];

  /** Runs one write with the buttons disabled, so a double click cannot send it twice. */
  async function busy(fn) {
    clearError();
    const all = buttons();
    all.forEach((b) => { b.disabled = true; });
    try { await fn(); } finally { if (alive()) all.forEach((b) => { b.disabled = false; }); }
  }

  function edited() {
    const ttl = ttlBox.value.trim();
    const body = readValue(valueEditor.value);
    if (body === undefined) return undefined;
    const metadata = readMetadata(metaEditor.value, Boolean(ttl));
    if (metadata === undefined) return undefined;
    return { body, metadata, ttl };
  }

  const save = () => busy(async () => {
    const mine = edited();
    if (!mine) return;
    await putAt(alive, key, mine, item.index, item.index, conflictSlot);
  });

  const doDelete = () => busy(async () => {
    await deleteAt(alive, key, item.index, item.index, conflictSlot);
  });

  setView(
      h('p', { class: 'crumbs' }, h('a', { href: '#/items' + query({ prefix: key.includes('/') ? key.slice(0, key.lastIndexOf('/') + 1) : '' }) }, '← Items')),
      h('h1', {}, 'Item ', h('code', { id: 'item-key' }, item.key)),
      takeFlash(),
      metaList(item),
      conflictSlot,
      h('div', { class: 'item-grid' },
          h('section', {},
              h('h2', {}, `Value at index ${item.index}`),
              h('pre', { id: 'item-value', class: 'json' }, pretty(item.value))),
          h('section', {},
              h('h2', {}, 'Edit'),
              h('form', { id: 'edit-form', class: 'stack', onsubmit: (e) => { e.preventDefault(); save(); } },
                  h('label', { for: 'value-editor' }, 'Value (JSON)'), valueEditor,
                  h('label', { for: 'metadata-editor' }, 'Metadata (a JSON object, or empty for none; ', h('code', {}, '@expires'), ' is the expiry)'), metaEditor,
                  h('label', { for: 'edit-ttl' }, 'New time to live (30s, 10m, …: replaces the expiry)'), ttlBox,
                  h('p', { class: 'hint' }, `Save and Delete apply only if the item is still at index ${item.index}; if it moved, you see its current value and choose.`),
                  h('div', { class: 'actions' },
                      h('button', { type: 'submit', id: 'save', class: 'primary' }, 'Save'),
                      h('button', { type: 'button', id: 'delete', class: 'danger', onclick: () => { confirmBox.hidden = false; } }, 'Delete…')),
                  confirmBox))));
  syncClock(false).then(() => alive() && tickExpiries());
}

function writeQuery(mine) {
  return query({ ttl: mine.ttl || undefined, metadata: mine.metadata ?? undefined });
}

/** A conditioned put: If-Match at index, or If-None-Match: * when index is 0. */
async function putAt(alive, key, mine, index, loadedIndex, slot) {
  const headers = index === 0 ? { 'If-None-Match': '*' } : { 'If-Match': quoted(index) };
  const res = await api('PUT', itemPath(key) + writeQuery(mine), { body: mine.body, headers });
  if (!alive()) return;
  if (res.status === 200 || res.status === 201) {
    const verb = index === 0 ? 'Created' : (index === loadedIndex ? 'Saved' : 'Overwrote');
    flash = `${verb} at index ${res.json.index}.`;
    handoff = { key, item: res.json };
    go(itemHash(key));
  } else if (res.status === 412 && res.json && 'current' in res.json) {
    renderConflict(alive, key, slot, { kind: 'save', mine, loadedIndex: index, current: res.json.current });
  } else {
    showFailure(res, 'Saving');
  }
}

async function deleteAt(alive, key, index, loadedIndex, slot) {
  const res = await api('DELETE', itemPath(key), { headers: { 'If-Match': quoted(index) } });
  if (!alive()) return;
  if (res.status === 204 || res.status === 200) {
    page();
    setView(h('h1', {}, 'Item ', h('code', { id: 'item-key' }, key)),
        h('p', { id: 'notice', class: 'notice', role: 'status' }, `Deleted ${key} (it was at index ${index}).`),
        h('p', {}, h('a', { href: '#/items' }, '← Items'), ' · ', h('a', { href: '#/new' + query({ key }) }, 'Create it again')));
  } else if (res.status === 412 && res.json && 'current' in res.json) {
    renderConflict(alive, key, slot, { kind: 'delete', loadedIndex: index, current: res.json.current });
  } else {
    showFailure(res, 'Deleting');
  }
}

/**
 * The 412 panel: what is stored now beside what the user wanted, and the two ways on: Reload
 * (discard the edit) or do it again, conditioned on the current index.
 */
function renderConflict(alive, key, slot, { kind, mine, loadedIndex, current }) {
  const run = (fn) => async () => {
    clearError();
    const all = [...byId('view').querySelectorAll('button')];
    all.forEach((b) => { b.disabled = true; });
    try { await fn(); } finally { if (alive()) all.forEach((b) => { b.disabled = false; }); }
  };
  const reload = h('button', { type: 'button', id: 'reload', onclick: () => { handoff = null; go(itemHash(key)); } }, 'Reload');
  const what = kind === 'delete' ? 'delete' : 'save';
  let theirs;
  let actions;
  if (current) {
    theirs = h('div', { class: 'side' },
        h('h3', {}, 'Stored now, at index ', h('span', { id: 'conflict-index' }, current.index)),
        h('pre', { id: 'conflict-current', class: 'json' }, pretty(current.value)),
        current.metadata == null ? '' : h('p', { class: 'muted' }, 'metadata ', h('code', {}, compact(current.metadata))));
    const again = kind === 'delete'
        ? h('button', { type: 'button', id: 'overwrite', class: 'danger', onclick: run(() => deleteAt(alive, key, current.index, loadedIndex, slot)) }, `Delete at index ${current.index}`)
        : h('button', { type: 'button', id: 'overwrite', class: 'danger', onclick: run(() => putAt(alive, key, mine, current.index, loadedIndex, slot)) }, `Overwrite at index ${current.index}`);
    actions = [reload, again];
  } else {
    theirs = h('div', { class: 'side' },
        h('h3', {}, 'Stored now'),
        h('p', { id: 'conflict-deleted' }, 'Nothing: the item was deleted meanwhile.'));
    actions = kind === 'delete'
        ? [reload]
        : [reload, h('button', { type: 'button', id: 'create-instead', class: 'primary', onclick: run(() => putAt(alive, key, mine, 0, loadedIndex, slot)) }, 'Create it with your value')];
  }
  const yours = h('div', { class: 'side' },
      h('h3', {}, kind === 'delete' ? 'Yours' : 'Your value'),
      kind === 'delete'
          ? h('p', { id: 'conflict-mine' }, 'Delete the item.')
          : h('pre', { id: 'conflict-mine', class: 'json' }, pretty(parseJson(mine.body))));
  const panel = h('section', { id: 'conflict', class: 'conflict', role: 'alert' },
      h('h2', {}, 'Conflict'),
      h('p', {}, `Your ${what} was refused: the item is no longer at index ${loadedIndex}`,
          current ? ` (it is at index ${current.index} now)` : ' (it is gone)', '. Nothing was written.'),
      h('div', { class: 'sides' }, theirs, yours),
      h('div', { class: 'actions' }, actions));
  slot.replaceChildren(panel);
  panel.scrollIntoView({ block: 'nearest' });
}

// ---------------------------------------------------------------- create

function newView(params) {
  const alive = page();
  const keyBox = h('input', { id: 'new-key', value: params.get('key') || '', autocomplete: 'off', spellcheck: 'false', required: true, placeholder: 'emails/ada@example.com' });
  const valueBox = h('textarea', { id: 'new-value', rows: 6, spellcheck: 'false', placeholder: '{"user": 7}' });
  const ttlBox = h('input', { id: 'new-ttl', autocomplete: 'off', placeholder: 'never expires (or 500ms, 30s, 2m, 1h)' });
  const metaBox = h('textarea', { id: 'new-metadata', rows: 3, spellcheck: 'false', placeholder: 'none (or a JSON object such as {"owner": "signup"})' });
  const existsSlot = h('div', { id: 'exists-slot' });
  const create = h('button', { type: 'submit', id: 'create', class: 'primary' }, 'Create');

  async function submit() {
    clearError();
    existsSlot.replaceChildren();
    const key = keyBox.value;
    if (!key) {
      showError('Give a key.', 'Not created');
      return;
    }
    if (unreachableByUrl(key)) {
      showError(`The key ${DOT_SEGMENT}`, 'Not created');
      return;
    }
    const body = readValue(valueBox.value);
    if (body === undefined) return;
    const ttl = ttlBox.value.trim();
    const metadata = readMetadata(metaBox.value, false);
    if (metadata === undefined) return;
    create.disabled = true;
    try {
      const res = await api('PUT', itemPath(key) + writeQuery({ ttl, metadata }), { body, headers: { 'If-None-Match': '*' } });
      if (!alive()) return;
      if (res.status === 201 || res.status === 200) {
        flash = `Created at index ${res.json.index}.`;
        handoff = { key, item: res.json };
        go(itemHash(key));
      } else if (res.status === 412) {
        const current = res.json && res.json.current;
        existsSlot.replaceChildren(h('section', { id: 'exists', class: 'conflict' },
            h('h2', {}, 'That key exists'),
            h('p', {}, 'Nothing was written: create only writes an absent key.'),
            current ? [metaList(current), h('pre', { id: 'exists-value', class: 'json' }, pretty(current.value)),
              h('p', {}, h('a', { class: 'button', href: itemHash(current.key) }, 'Open it'))] : ''));
        existsSlot.scrollIntoView({ block: 'nearest' });
      } else {
        showFailure(res, 'Creating');
      }
    } finally {
      if (alive()) create.disabled = false;
    }
  }

  setView(h('h1', {}, 'New item'),
      existsSlot,
      h('form', { id: 'create-form', class: 'stack', onsubmit: (e) => { e.preventDefault(); submit(); } },
          h('label', { for: 'new-key' }, 'Key'), keyBox,
          h('label', { for: 'new-value' }, 'Value (JSON)'), valueBox,
          h('label', { for: 'new-ttl' }, 'Time to live (optional)'), ttlBox,
          h('label', { for: 'new-metadata' }, 'Metadata (optional JSON object)'), metaBox,
          h('p', { class: 'hint' }, 'Create writes only if the key is absent (If-None-Match: *).'),
          h('div', { class: 'actions' }, create)));
  (keyBox.value ? valueBox : keyBox).focus();
}

// ---------------------------------------------------------------- cluster

function clusterView() {
  const alive = page();
  const summary = h('p', { id: 'cluster-summary', class: 'summary' }, 'Loading…');
  const body = h('tbody');
  const updated = h('span', { id: 'updated', class: 'muted' });
  const cols = ['Node', 'Address', 'Role', 'Term', 'Commit index', 'Applied index', 'Lag', 'Error'];
  setView(h('h1', {}, 'Cluster'), summary,
      h('table', { id: 'cluster-table', class: 'grid' },
          h('thead', {}, h('tr', {}, cols.map((c, i) => h('th', { class: i >= 3 && i <= 6 ? 'num' : null }, c)))), body),
      h('p', {}, updated));

  poll(alive, 2000, async () => {
    const res = await api('GET', '/v1/status');
    if (!alive()) return;
    if (!res.ok) {
      showFailure(res, 'Status');
      updated.textContent = `Could not refresh at ${new Date().toLocaleTimeString()}; showing the last answer.`;
      return;
    }
    clearError();
    const s = res.json;
    noteStatus(s);
    const nodes = Array.isArray(s.nodes) ? s.nodes : [];
    const leaders = nodes.filter((n) => n.role === 'LEADER').map((n) => n.id);
    summary.replaceChildren(
        'Leader ', h('b', { id: 'leader' }, leaders.length ? leaders.join(', ') : 'none'),
        ' · items ', h('b', { id: 'item-count' }, s.items),
        ' · sessions ', h('b', { id: 'session-count' }, s.sessions),
        ' · answered by ', h('b', {}, s.node));
    body.replaceChildren(...nodes.map((n) => {
      const up = n.role !== 'UNREACHABLE';
      const num = (v) => h('td', { class: 'num' }, up && v != null ? v : '—');
      return h('tr', { 'data-node': n.id, class: n.role === 'LEADER' ? 'leader' : (up ? null : 'down') },
          h('td', {}, h('b', {}, n.id), n.role === 'LEADER' ? h('span', { class: 'badge' }, 'leader') : ''),
          h('td', {}, h('code', {}, n.address)),
          h('td', { 'data-role': n.role }, h('span', { class: 'role role-' + String(n.role).toLowerCase() }, n.role)),
          num(n.term), num(n.commitIndex), num(n.appliedIndex),
          h('td', { class: 'num' + (up && n.lag > 0 ? ' lagging' : '') }, up && n.lag != null ? n.lag : '—'),
          h('td', { class: 'err' }, n.error || ''));
    }));
    updated.textContent = `Refreshed every 2 s; last at ${new Date().toLocaleTimeString()}.`;
  });
}

// ---------------------------------------------------------------- locks

function locksView() {
  const alive = page();
  const body = h('tbody', {}, h('tr', {}, h('td', { colspan: 5, class: 'muted' }, 'Loading…')));
  setView(h('h1', {}, 'Locks'),
      h('table', { id: 'locks-table', class: 'grid narrow' },
          h('thead', {}, h('tr', {}, h('th', {}, 'Name'), h('th', {}, 'Owner'), h('th', { class: 'num' }, 'Fencing token'),
              h('th', { class: 'num' }, 'Index'), h('th', {}, 'Time left'))), body),
      h('p', { class: 'muted' }, 'Refreshed every 2 s; time left is on cluster time.'));
  poll(alive, 2000, async () => {
    const [res] = await Promise.all([api('GET', '/v1/locks'), syncClock(false)]);
    if (!alive()) return;
    if (!res.ok) { showFailure(res, 'Listing locks'); return; }
    clearError();
    const locks = res.json.locks || [];
    body.replaceChildren(...(locks.length ? locks.map((l) => h('tr', { 'data-lock': l.name },
        h('td', {}, h('b', {}, l.name)), h('td', {}, l.owner),
        h('td', { class: 'num' }, l.fencingToken), h('td', { class: 'num' }, l.index),
        h('td', {}, countdown(l.expiresAt, {}, 'left'))))
      : [h('tr', {}, h('td', { colspan: 5, class: 'muted' }, 'No lock is held.'))]));
    tickExpiries();
  });
}

// ---------------------------------------------------------------- hot keys

function hotkeysView() {
  const alive = page();
  const body = h('tbody', {}, h('tr', {}, h('td', { colspan: 5, class: 'muted' }, 'Loading…')));
  const since = h('p', { class: 'muted', id: 'hotkeys-since' });
  const load = async () => {
    const res = await api('GET', '/v1/hotkeys?limit=50');
    if (!alive()) return;
    if (!res.ok) { showFailure(res, 'Hot keys'); return; }
    clearError();
    const keys = res.json.keys || [];
    since.textContent = `Refused conditions counted by node ${res.json.node} since ${new Date(res.json.since).toLocaleString()}.`;
    body.replaceChildren(...(keys.length ? keys.map((k) => h('tr', { 'data-key': k.key },
        h('td', {}, h('a', { href: itemHash(k.key), class: 'key' }, k.key)),
        h('td', { class: 'num' }, k.refused), h('td', { class: 'num' }, k.attempts), h('td', { class: 'num' }, k.commits),
        h('td', { class: 'num' }, k.attemptsPerCommit == null ? 'never committed' : Number(k.attemptsPerCommit).toFixed(2))))
      : [h('tr', {}, h('td', { colspan: 5, class: 'muted' }, 'No condition has been refused.'))]));
  };
  setView(h('h1', {}, 'Hot keys'),
      h('p', {}, 'Keys whose conditions were refused most: many attempts per commit means writers contend for them. ',
          h('button', { type: 'button', id: 'refresh', onclick: load }, 'Refresh')),
      h('table', { id: 'hotkeys-table', class: 'grid narrow' },
          h('thead', {}, h('tr', {}, h('th', {}, 'Key'), h('th', { class: 'num' }, 'Refused'), h('th', { class: 'num' }, 'Attempts'),
              h('th', { class: 'num' }, 'Commits'), h('th', { class: 'num' }, 'Attempts per commit'))), body),
      since);
  load();
}

// ---------------------------------------------------------------- start

window.addEventListener('hashchange', route);
byId('token').addEventListener('click', askToken);
byId('token').textContent = token() ? 'Token ✓' : 'Token';
setInterval(tickExpiries, 1000);
route();
syncClock(true);
