/* panels.js — the tables of the HTML report: a ledger (rows of bytes,
 * count, category and the full stack, Python lines first), and the panels
 * for leaks, growth per step, out-of-memory failures, pool holes and the
 * heaps of the program's own pools. */
'use strict';

GL.panels = (function () {
  const el = GL.fmt.el;
  const PAGE = 100;

  function catChip(proc, catId) {
    const name = proc.categories[catId];
    return el('span', {class: 'cat', style: 'border-left-color:' + GL.fmt.color(name)}, name);
  }

  /* a stack: its one-line chain (with frame `must`, which tells it from
   * the other rows), unfolding to every frame, Python first */
  function stack(proc, ids, must, label) {
    if (label) return el('details', {class: 'stack'}, el('summary', null, label));
    const {py, native} = proc.orderedFrames(ids);
    const item = (id) => {
      const f = proc.frames[id];
      return el('li', {dataset: {sym: f[0] === null ? '' : f[0], name: proc.names[id]}, value: ids.indexOf(id)},
        proc.names[id],
        f[1] && !f[4] ? el('span', {class: 'muted'}, '  ' + GL.fmt.basename(f[1])) : null);
    };
    return el('details', {class: 'stack'}, el('summary', null, proc.chain(ids, 4, must)),
      py.length ? el('div', {class: 'st-h'}, 'Python') : null,
      py.length ? el('ol', {class: 'st'}, ...py.map(item)) : null,
      native.length ? el('div', {class: 'st-h'}, py.length ? 'native' : 'frames') : null,
      native.length ? el('ol', {class: 'st'}, ...native.map(item)) : null,
      ids.length ? null : el('div', {class: 'muted'}, 'no stack recorded'));
  }

  /* rows: [{row, bytes, count, extra?}]; signed: growth */
  function ledgerTable(proc, rows, total, opts) {
    opts = opts || {};
    const table = el('table', {class: 'ledger'});
    const head = el('tr', null, el('th', null, opts.signed ? 'change' : 'bytes'), el('th', null, 'share'),
      el('th', null, 'count'), el('th', null, 'category'));
    for (const h of opts.extraHeads || []) head.appendChild(el('th', null, h));
    head.appendChild(el('th', null, 'allocated at'));
    table.appendChild(head);
    let shown = 0;
    let must = [];
    const more = () => {
      const end = Math.min(rows.length, shown + (shown ? rows.length : PAGE));
      /* which frame tells each row from the others shown */
      if (end <= 2000) must = proc.distinct(rows.slice(0, end).map((r) => proc.rowFrames(r.row)));
      for (; shown < end; shown++) {
        const r = rows[shown];
        const cat = proc.rows[r.row][0];
        const tr = el('tr', {class: 'lrow', dataset: {row: r.row, bytes: r.bytes, count: r.count,
          cat: proc.categories[cat]}},
        el('td', {class: 'n'}, opts.signed ? GL.fmt.signedBytes(r.bytes) : GL.fmt.bytes(r.bytes)),
        el('td', {class: 'n'}, GL.fmt.pct(Math.abs(r.bytes), total)),
        el('td', {class: 'n'}, (opts.signed && r.count > 0 ? '+' : '') + r.count + '×'),
        el('td', null, catChip(proc, cat)));
        for (const x of r.extra || []) tr.appendChild(el('td', {class: 'n'}, x));
        tr.appendChild(el('td', null, stack(proc, proc.rowFrames(r.row), must[shown], proc.rowLabel(r.row))));
        if (opts.onRow) tr.addEventListener('click', (e) => {
          if (e.target.tagName !== 'SUMMARY' && !e.target.closest('details[open]')) opts.onRow(r.row);
        });
        table.insertBefore(tr, button.parentNode === table ? button : null);
      }
      if (shown >= rows.length && button.parentNode) button.remove();
      else button.firstChild.firstChild.textContent = 'show all ' + GL.fmt.count(rows.length, 'row');
    };
    const button = el('tr', {class: 'more'}, el('td', {colspan: 8},
      el('button', {type: 'button', onclick: () => more()}, '')));
    table.appendChild(button);
    more();
    if (!rows.length) {
      button.remove();
      table.appendChild(el('tr', null, el('td', {colspan: 8, class: 'muted'}, opts.empty || 'nothing')));
    }
    return table;
  }

  /* categories of a ledger as a bar of shares and a line of text */
  function categoryBar(proc, rows, total) {
    const by = new Map();
    for (const r of rows) {
      const c = proc.rows[r.row][0];
      by.set(c, (by.get(c) || 0) + r.bytes);
    }
    const list = [...by.entries()].filter((x) => x[1] !== 0).sort((a, b) => b[1] - a[1]);
    const bar = el('div', {class: 'catbar'});
    const text = el('div', {class: 'cats'});
    for (const [c, b] of list) {
      const name = proc.categories[c];
      if (b > 0 && total > 0) bar.appendChild(el('span', {style: 'width:' + (100 * b) / total + '%;background:' +
        GL.fmt.color(name), title: name + ' ' + GL.fmt.bytes(b)}));
      text.appendChild(el('span', {class: 'catline', dataset: {cat: name, bytes: b}}, catChip(proc, c),
        ' ' + GL.fmt.bytes(b) + ' (' + GL.fmt.pct(b, total) + ')'));
    }
    return el('div', null, bar, text);
  }

  function leaks(proc, dev, onRow) {
    const d = dev.d;
    const span = proc.p.span_ns;
    const isHeld = (x) => (x.length > 5 ? x[5] : proc.cached.has(proc.rows[x[0]][0]));
    const real = d.leaks.filter((x) => !isHeld(x));
    const held = d.leaks.filter(isHeld);
    const rows = (list) => list.map((x) => ({row: x[0], bytes: x[1], count: x[2],
      extra: [x[3] === null ? '—' : GL.fmt.time(x[3], span), x[4] === null ? '—' : GL.fmt.time(x[4], span)]}));
    const out = el('div', null,
      el('p', null, GL.fmt.bytes(d.leak_bytes) + (proc.p.finished === false ?
        ' live when the recording stopped (it did not finish: not known to be leaks) in ' + real.length + ' chain' :
        ' never freed in ' + real.length + ' leak chain') +
        (real.length === 1 ? '' : 's') + (d.cached_bytes ? ', ' + GL.fmt.bytes(d.cached_bytes) +
        ' held at exit by design (a caching allocator, module globals, tensors tagged as what they are: not leaks)' : '') + '. Click a row to follow it on the timeline.'),
      ledgerTable(proc, rows(real), d.leak_bytes, {extraHeads: ['first', 'last'], onRow, empty: 'no leaks'}));
    if (held.length) {
      out.append(el('h4', null, 'held at exit by design'),
        ledgerTable(proc, rows(held), d.cached_bytes, {extraHeads: ['first', 'last'], onRow}));
    }
    return out;
  }

  /* live bytes at the end of each step, as a row of bars */
  function stepBars(values) {
    const max = Math.max(1, ...values);
    return el('span', {class: 'bars'}, ...values.map((v, i) =>
      el('span', {style: 'height:' + Math.max(1, Math.round((18 * v) / max)) + 'px',
        title: 'step ' + (i + 1) + ': ' + GL.fmt.bytes(v)})));
  }

  function growth(proc, dev, onRow) {
    const g = dev.d.growth;
    const how = g.by_marks ? GL.fmt.count(g.steps, 'step') + ' ended by the program\'s marks'
      : GL.fmt.count(g.steps, 'slice') + ' of the run holding equal numbers of allocations (the program made no marks)';
    const table = ledgerTable(proc, g.rows.map((x) => ({row: x[0], bytes: x[1], count: 0, extra: ['']})),
      g.rows.reduce((s, x) => s + x[1], 0), {signed: true, extraHeads: ['live per step'], onRow,
        empty: 'nothing grows from step to step'});
    /* the per-step bars go in the extra column */
    const trs = table.querySelectorAll('tr.lrow');
    g.rows.forEach((x, k) => {
      if (!trs[k]) return;
      trs[k].children[2].textContent = '';
      trs[k].children[4].appendChild(stepBars(x[2]));
    });
    return el('div', null, el('p', null, 'Stacks whose live bytes never fall from step to step and rise in at ' +
      'least half of them, over ' + how + ' (as gpuledger leaks --steps).'), table);
  }

  function ooms(proc, dev, onSelect) {
    const d = dev.d;
    const span = proc.p.span_ns;
    if (!d.ooms.length) return el('p', {class: 'muted'}, 'no out-of-memory failure on this device');
    return el('div', null, ...d.ooms.map((o, k) => {
      const rows = o.ledger.map((x) => ({row: x[0], bytes: x[1], count: x[2]}));
      return el('div', {class: 'oom'},
        el('h4', {class: 'warn'}, 'out of memory #' + (k + 1) + ' at ' + GL.fmt.time(o.t, span) +
          (o.step === null || o.step === undefined ? '' : ' in step ' + o.step) + ': ' + o.api + ' of ' +
          GL.fmt.bytes(o.size) + ' failed (error ' + o.result + ') with ' + GL.fmt.bytes(o.live) + ' live ',
        el('button', {type: 'button', onclick: () => onSelect(dev.indexOfSeq(o.seq))}, 'select on the timeline')),
        el('div', null, 'the failing call: ', stack(proc, o.frames)),
        categoryBar(proc, rows, o.live),
        ledgerTable(proc, rows, o.live, {}));
    }));
  }

  /* a canvas of w x h CSS pixels drawn at the screen's resolution: the
   * canvas and its context, scaled so that drawing is in CSS pixels */
  function hiDpiCanvas(attrs, w, h) {
    const c = el('canvas', attrs);
    const dpr = window.devicePixelRatio || 1;
    c.width = w * dpr;
    c.height = h * dpr;
    c.style.width = w + 'px';
    c.style.height = h + 'px';
    const x = c.getContext('2d');
    x.setTransform(dpr, 0, 0, dpr, 0, 0);
    return [c, x];
  }

  function holeChart(h, span) {
    const w = 420;
    const ht = 90;
    const [c, x] = hiDpiCanvas({class: 'holes'}, w, ht);
    const max = Math.max(1, ...h.series.map((s) => s[2]));
    const X = (t) => 4 + ((w - 8) * t) / Math.max(1, span);
    const Y = (v) => ht - 4 - ((ht - 8) * v) / max;
    const line = (k, color) => {
      x.strokeStyle = color;
      x.beginPath();
      h.series.forEach((s, i) => (i ? x.lineTo(X(s[1]), Y(s[k])) : x.moveTo(X(s[1]), Y(s[k]))));
      x.stroke();
    };
    line(2, '#999');
    line(3, '#4e79a7');
    line(4, '#e15759');
    line(5, '#59a14f');
    return c;
  }

  function holes(proc, dev) {
    const span = proc.p.span_ns;
    const list = proc.p.holes.filter((h) => h.device === dev.device);
    if (!list.length) return el('p', {class: 'muted'}, 'no stream-ordered pool or reserved range on this device');
    return el('div', null, el('p', {class: 'muted'}, 'lines: reserved (grey), live (blue), free (red), largest ' +
      'free block (green). largest_free_ratio = largest free / free; external fragmentation = 1 − that.'),
    ...list.map((h) => {
      const w = h.series[h.worst];
      const ratio = w[4] ? w[5] / w[4] : 0;
      return el('div', {class: 'pool'}, el('h4', null, h.label), holeChart(h, span),
        el('p', null, 'worst at ' + GL.fmt.time(w[1], span) + ': ' + GL.fmt.bytes(w[4]) + ' free of ' +
          GL.fmt.bytes(w[2]) + ' in ' + GL.fmt.count(w[6], 'hole') + ', largest ' + GL.fmt.bytes(w[5]) + '; largest_free_ratio ' +
          ratio.toFixed(3) + ', external fragmentation ' + (w[4] ? (1 - ratio).toFixed(3) : '0.000') +
          (h.sampled_reserved ? '; the pool reported at most ' + GL.fmt.bytes(h.sampled_reserved) + ' reserved' : '')));
    }));
  }

  /* a heap's moment: [seq, t, used, free, holes, largest free, regions, region bytes, unused] */
  function heapFigures(h, p) {
    const page = h.page_size;
    const amount = (b) => (page ? Math.floor(b / page) + ' page' + (Math.floor(b / page) === 1 ? '' : 's') :
      GL.fmt.bytes(b));
    const ratio = p[3] ? p[5] / p[3] : 1;
    return [amount(p[2]), amount(p[3]), String(p[4]), amount(p[5]), (p[3] ? 1 - ratio : 0).toFixed(3),
      ratio.toFixed(3), h.has_used ? (p[7] ? p[8] / p[7] : 0).toFixed(3) : '–'];
  }

  /* an occupancy map: a square per cell (a page), 64 a row, darker = more in use */
  function occupancy(h, cells, title) {
    const perRow = 64;
    const px = cells.length > 2048 ? 5 : 9;
    const rows = Math.max(1, Math.ceil(cells.length / perRow));
    const [c, x] = hiDpiCanvas({class: 'occ', title}, perRow * px, rows * px);
    cells.forEach((p, i) => {
      x.fillStyle = p ? 'hsl(215,70%,' + (80 - Math.round((p * 45) / 100)) + '%)' : '#eee';
      x.fillRect((i % perRow) * px, Math.floor(i / perRow) * px, px - 1, px - 1);
    });
    return el('figure', {class: 'occ'}, el('figcaption', null, title + ' (' + cells.length + ' cells of ' +
      GL.fmt.bytes(h.cell_bytes) + ')'), c);
  }

  /* the series over its changes (x: the n-th point, not time: a pool's
   * changes come in bursts) */
  function heapChart(h) {
    const w = 420;
    const ht = 90;
    const [c, x] = hiDpiCanvas({class: 'holes'}, w, ht);
    const X = (i) => 4 + ((w - 8) * i) / Math.max(1, h.series.length - 1);
    const line = (k, max, color) => {
      x.strokeStyle = color;
      x.beginPath();
      const Y = (v) => ht - 4 - ((ht - 8) * v) / Math.max(1, max);
      h.series.forEach((s, i) => (i ? x.lineTo(X(i), Y(s[k])) : x.moveTo(X(i), Y(s[k]))));
      x.stroke();
    };
    line(2, h.size, '#4e79a7');
    line(5, h.size, '#59a14f');
    line(4, Math.max(...h.series.map((s) => s[4])), '#f28e2b');
    return c;
  }

  function heaps(proc) {
    const span = proc.p.span_ns;
    const list = proc.p.heaps || [];
    if (!list.length) return el('p', {class: 'muted'}, 'no heap described by the program (NVTX memory API, gpuledger.Pool)');
    return el('div', null, el('p', {class: 'muted'}, 'lines: bytes in use (blue), largest free run (green), holes ' +
      '(orange, own scale). external fragmentation = 1 − largest free / free; internal fragmentation = bytes of ' +
      'live regions not used / their bytes.'),
    ...list.map((h) => {
      const table = el('table', {class: 'ledger'}, el('tr', null, ...['', 'in use', 'free', 'holes', 'largest free',
        'external fragmentation', 'largest_free_ratio', 'internal fragmentation'].map((t) => el('th', null, t))));
      for (const [name, p] of [['peak', h.peak], ['worst', h.worst], ['end', h.end]])
        table.appendChild(el('tr', null, el('td', null, name + ' ' + GL.fmt.time(p[1], span)),
          ...heapFigures(h, p).map((t) => el('td', {class: 'n'}, t))));
      const rows = (g) => g.map((x) => ({row: x[0], bytes: x[1], count: x[2]}));
      const leaked = h.leaks.reduce((s, x) => s + x[1], 0);
      return el('div', {class: 'heap'},
        el('h4', null, h.label + ' — ' + GL.fmt.bytes(h.size) + (h.page_size ? ', ' + Math.floor(h.size / h.page_size) +
          ' pages of ' + GL.fmt.bytes(h.page_size) : '') + ', ' + h.regions + ' regions handed out' +
          (h.unregistered ? ', unregistered' : '')),
        heapChart(h), table,
        occupancy(h, h.occ_peak, 'occupancy at the peak'), occupancy(h, h.occ_worst, 'occupancy at the worst moment'),
        el('h4', null, 'live at the peak, by stack'), ledgerTable(proc, rows(h.peak_ledger), h.peak[7], {}),
        h.leaks.length ? el('h4', {class: 'warn'}, 'never given back: ' + GL.fmt.bytes(leaked)) : null,
        h.leaks.length ? ledgerTable(proc, rows(h.leaks), leaked, {}) : null);
    }));
  }

  return {ledgerTable, categoryBar, stack, leaks, growth, ooms, holes, heaps, catChip};
})();
