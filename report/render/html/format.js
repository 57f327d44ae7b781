/* format.js — shared helpers of the HTML report: byte and time formatting,
 * frame names (as the text report writes them), category colours, and a
 * small DOM builder that only ever sets text (never parses data as HTML).
 * The report's scripts are concatenated in this order: format, model,
 * timeline, flame, panels, app; each adds its part to the GL object. */
'use strict';

const GL = {};

GL.fmt = (function () {
  const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB']; // as gl_fmt_bytes

  /* "1.50 GiB", as gl_fmt_bytes */
  function bytes(n) {
    const neg = n < 0;
    let v = Math.abs(n);
    let u = 0;
    while (v >= 1024 && u < UNITS.length - 1) {
      v /= 1024;
      u++;
    }
    const s = u === 0 ? String(v) + ' B' : v.toFixed(2) + ' ' + UNITS[u];
    return neg ? '-' + s : s;
  }

  function signedBytes(n) {
    return (n > 0 ? '+' : '') + bytes(n);
  }

  /* "+1.234s"; with µs when the whole run is shorter than a second */
  function time(ns, spanNs) {
    const digits = spanNs < 1e9 ? 6 : 3;
    return '+' + (ns / 1e9).toFixed(digits) + 's';
  }

  /* axis label: short */
  function tick(ns, stepNs) {
    if (stepNs >= 1e9) return (ns / 1e9).toFixed(stepNs >= 1e10 ? 0 : 1) + ' s';
    if (stepNs >= 1e6) return (ns / 1e6).toFixed(stepNs >= 1e7 ? 0 : 1) + ' ms';
    if (stepNs >= 1e3) return (ns / 1e3).toFixed(stepNs >= 1e4 ? 0 : 1) + ' µs';
    return ns.toFixed(0) + ' ns';
  }

  /* "1 event", "3 events": the count and its noun, as the text report's
   * gl_s writes them */
  function count(n, noun) {
    return n + ' ' + noun + (n === 1 ? '' : 's');
  }

  function pct(part, whole) {
    return whole > 0 ? ((100 * part) / whole).toFixed(1) + '%' : '';
  }

  /* a Python file as people say it: from site-packages/ on (frames.c) */
  function shortPyPath(file) {
    for (const root of ['/site-packages/', '/dist-packages/']) {
      const i = file.indexOf(root);
      if (i >= 0) return file.slice(i + root.length);
    }
    const i = file.indexOf('/lib/python3');
    if (i >= 0) {
      const j = file.indexOf('/', i + 12);
      if (j >= 0) return file.slice(j + 1);
    }
    return file;
  }

  function basename(path) {
    const i = path.lastIndexOf('/');
    return i >= 0 ? path.slice(i + 1) : path;
  }

  /* frame = [symbol, module, file, line, python, offset]; as gl_frame_name */
  function frameName(f) {
    if (f[7]) return f[7]; /* the report's own text: C++ names shortened */
    const [sym, mod, file, line, py, off] = f;
    if (py && sym && file) return sym + ' (' + shortPyPath(file) + ':' + line + ')';
    if (sym && file && line > 0) return sym + ' (' + file + ':' + line + ')';
    if (sym) return sym;
    return (mod ? basename(mod) : '?') + '+0x' + Number(off || 0).toString(16);
  }

  /* Colours by category name, the same from run to run. */
  const PALETTE = ['#4e79a7', '#f28e2c', '#e15759', '#76b7b2', '#59a14f', '#edc949', '#af7aa1', '#ff9da7',
    '#9c755f', '#bab0ab', '#86bcb6', '#d4a6c8', '#8cd17d', '#b6992d', '#499894', '#e49444'];
  /* the built-in rules' categories get colours that read well together;
   * any other name (a rule file's, a tag's) one from the palette by its name */
  const NAMED = {parameters: '#4e79a7', gradients: '#f28e2c', optimizer: '#af7aa1', activations: '#59a14f',
    kv_cache: '#edc949', workspace: '#76b7b2', allocator_cache: '#9c755f', nccl: '#e15759', static: '#bab0ab',
    pinned_host: '#ff9da7', other: '#c7c7c7'};
  function color(name) {
    if (NAMED[name]) return NAMED[name];
    let h = 0;
    for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
    return PALETTE[h % PALETTE.length];
  }

  /* el('td', {class: 'n', dataset: {x: 1}}, 'text', child, ...) */
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    if (attrs) {
      for (const [k, v] of Object.entries(attrs)) {
        if (v === undefined || v === null) continue;
        if (k === 'dataset') Object.assign(e.dataset, v);
        else if (k === 'style') e.style.cssText = v;
        else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
        else e.setAttribute(k, v);
      }
    }
    for (const c of children) {
      if (c === undefined || c === null || c === false) continue;
      e.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  /* replace a node's children, leaving out null/false (replaceChildren
   * would write them as text) */
  function fill(node, ...children) {
    node.replaceChildren(...children.filter((c) => c !== null && c !== undefined && c !== false));
    return node;
  }

  return {bytes, signedBytes, time, tick, count, pct, frameName, shortPyPath, basename, color, el, fill};
})();
