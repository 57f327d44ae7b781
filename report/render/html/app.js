/* app.js — the HTML report's page: a process and device picker, the
 * timeline with its legend and top stacks, the ledger of the selected
 * moment (or what grew across the selected window), the flame graph, and
 * the leak, growth, OOM and hole panels. The first moment shown is the one
 * given with `report --at`, else the device's peak.
 *
 * For tests and for people who script the page: window.gpuledger =
 * {select(seq), selected(), ledger(), timelineX(seq)}; body[data-ready] is
 * set once drawn (data-ready-ms: milliseconds since the page started);
 * #sel-event[data-seq] is the event whose ledger is shown. */
'use strict';

(function () {
  const el = GL.fmt.el;
  const app = document.getElementById('app');
  let data;
  try {
    data = GL.model.load();
  } catch (e) {
    app.appendChild(el('p', {class: 'warn'}, 'This report cannot be shown: ' + e.message));
    throw e;
  }

  const state = {proc: 0, dev: 0, timeline: null, flame: null, sel: null, lines: []};

  function procOf() {
    return data.processes[state.proc];
  }

  function devOf() {
    return procOf().devices[state.dev];
  }

  function tabs(items, current, onPick, cls) {
    return el('div', {class: 'tabs ' + cls, role: 'tablist'}, ...items.map((label, k) =>
      el('button', {type: 'button', role: 'tab', class: k === current ? 'on' : '', 'aria-selected': String(k === current),
        onclick: () => onPick(k)}, label)));
  }

  /* the report's findings, most important first: sentence, evidence, remedy */
  function diagnosisBox(findings) {
    return el('section', {class: 'diagnosis', id: 'diagnosis'}, el('h3', null, 'diagnosis'),
      el('ol', null, ...findings.map((f) => el('li', {class: 'finding ' + f.kind},
        el('p', {class: 'sentence'}, f.sentence),
        ...f.evidence.map((e) => el('p', {class: 'evidence'}, e)),
        el('p', {class: 'remedy'}, 'remedy: ' + f.remedy)))));
  }

  function header() {
    const proc = procOf();
    const p = proc.p;
    const span = p.span_ns;
    const parts = [el('h1', null, 'gpuledger report')];
    if (data.processes.length > 1) {
      parts.push(tabs(data.processes.map((x) => x.label()), state.proc, (k) => {
        state.proc = k;
        state.dev = 0;
        render();
      }, 'procs'));
    }
    parts.push(el('p', {class: 'run'}, el('code', null, p.cmdline), el('br'),
      proc.label() + ' — ' + GL.fmt.count(p.events, 'event') + ' over ' + (span / 1e9).toFixed(span < 1e9 ? 6 : 3) +
        ' s — ' + p.path));
    if (p.finished === false) {
      parts.push(el('p', {class: 'warn'}, 'The recording did not finish (killed, disk full, or still running): ' +
        'what was live when it stopped is not known to be leaks.'));
    }
    if (p.diagnosis && p.diagnosis.length) parts.push(diagnosisBox(p.diagnosis));
    if (p.dropped) {
      parts.push(el('p', {class: 'warn'}, GL.fmt.count(p.dropped, 'event') + (p.dropped === 1 ? ' was' : ' were') +
        ' dropped (queue full): figures are lower bounds.'));
    }
    if (p.truncated) parts.push(el('p', {class: 'muted'}, GL.fmt.count(p.truncated, 'stack') +
      (p.truncated === 1 ? ' was' : ' were') + ' deeper than the depth limit.'));
    if (p.annotations_left_out) {
      parts.push(el('p', {class: 'muted'}, (p.annotations_left_out === 1 ? '1 mark or range is' :
        p.annotations_left_out + ' marks and ranges are') + ' not drawn (too many).'));
    }
    if (proc.devices.length > 1) {
      parts.push(tabs(proc.devices.map((d) => 'device ' + d.device), state.dev, (k) => {
        state.dev = k;
        render();
      }, 'devs'));
    }
    return parts;
  }

  function deviceSummary(dev) {
    const d = dev.d;
    const span = dev.proc.p.span_ns;
    const bits = ['device ' + d.device + ': peak ' + GL.fmt.bytes(d.peak[2]) + ' at ' + GL.fmt.time(d.peak[1], span) +
      ' (event #' + d.peak[0] + (d.peak_step === null || d.peak_step === undefined ? '' : ', step ' + d.peak_step) +
      '), ' + GL.fmt.bytes(d.end_bytes) + ' live at the end'];
    if (d.leak_bytes) {
      bits.push(GL.fmt.bytes(d.leak_bytes) + (dev.proc.p.finished === false ? ' live when the recording stopped' :
        ' never freed'));
    }
    if (d.outside_api) {
      bits.push(GL.fmt.bytes(d.outside_api.peak) + ' at the peak' +
        (d.outside_api.peak_sampled ? ' (' + d.outside_api.peak_sampled + ')' : '') +
        ' and ' + GL.fmt.bytes(d.outside_api.end) +
        ' at the end outside any allocation API (the process held ' + GL.fmt.bytes(d.outside_api.end_process) +
        '; ' + d.outside_api.source + ')');
    }
    if (d.ooms.length) bits.push(d.ooms.length + ' out-of-memory failure' + (d.ooms.length > 1 ? 's' : ''));
    return el('h2', null, bits.join(', '));
  }

  function legend(dev) {
    const proc = dev.proc;
    return el('div', {class: 'legend'}, ...dev.usedCategories().map((c) => {
      const name = proc.categories[c];
      const b = el('button', {type: 'button', class: 'chip', title: 'show or hide ' + name},
        el('span', {class: 'sw', style: 'background:' + GL.fmt.color(name)}), name);
      b.addEventListener('click', () => {
        state.timeline.toggleCategory(c);
        b.classList.toggle('off');
      });
      return b;
    }));
  }

  function setLines(rows) {
    state.lines = rows;
    state.timeline.setLines(rows);
    for (const box of document.querySelectorAll('.tops input')) box.checked = rows.includes(Number(box.value));
    const keys = document.querySelectorAll('.tops .key');
    keys.forEach((k) => {
      const at = rows.indexOf(Number(k.dataset.row));
      k.style.background = at >= 0 ? state.timeline.lineColor(at) : 'transparent';
    });
  }

  function toggleLine(row) {
    const rows = state.lines.includes(row) ? state.lines.filter((r) => r !== row) : [...state.lines, row].slice(-7);
    setLines(rows);
  }

  function topStacks(dev) {
    const proc = dev.proc;
    const top = dev.topRows(8);
    if (!top.length) return el('div');
    const must = proc.distinct(top.map((t) => proc.rowFrames(t.row)));
    return el('details', {class: 'tops', open: ''}, el('summary', null, 'top stacks (tick to draw a stack\'s own line)'),
      ...top.map((t, k) => el('label', {class: 'top'},
        el('input', {type: 'checkbox', value: t.row, onchange: () => toggleLine(t.row)}),
        el('span', {class: 'key', dataset: {row: t.row}}),
        el('span', {class: 'n'}, GL.fmt.bytes(t.max)), ' ', GL.panels.catChip(proc, proc.rows[t.row][0]), ' ',
        proc.rowLabel(t.row) || proc.chain(proc.rowFrames(t.row), 3, must[k]))));
  }

  function showMoment(i) {
    const dev = devOf();
    const proc = dev.proc;
    const span = proc.p.span_ns;
    state.sel = {i};
    const rows = dev.ledger(i);
    const total = dev.bytes[i];
    const ctx = proc.context(dev.t[i]);
    const p = proc.p;
    const chosen = p.selected && p.selected.seq === dev.seq[i] ?
      '--at \'' + p.selected.when + '\'' + (p.selected.desc ? ': ' + p.selected.desc : '') : null;
    const box = document.getElementById('ledger');
    GL.fmt.fill(box,
      el('h3', null, 'Ledger at ', el('span', {id: 'sel-event', dataset: {seq: dev.seq[i], index: i}}, 'event #' + dev.seq[i])),
      el('p', null, GL.fmt.time(dev.t[i], span) + ' — ' + GL.fmt.bytes(total) + ' live on device ' + dev.device +
        ' in ' + GL.fmt.count(rows.reduce((s, r) => s + r.count, 0), 'allocation') + ', ' +
        GL.fmt.count(rows.length, 'stack') +
        (i === dev.peakIndex ? ' — the peak' : '')),
      chosen ? el('p', {class: 'muted'}, 'chosen with ' + chosen) : null,
      ctx.mark || ctx.range ? el('p', {class: 'muted'}, (ctx.mark ? 'in the step ending at mark “' + ctx.mark[2] + '”' : '') +
        (ctx.mark && ctx.range ? '; ' : '') + (ctx.range ? 'inside range “' + ctx.range[4] + '”' : '')) : null,
      el('p', {class: 'muted'}, 'Same as: gpuledger report --at \'#' + dev.seq[i] + '\' ' + GL.fmt.basename(p.path)),
      GL.panels.categoryBar(proc, rows, total),
      GL.panels.ledgerTable(proc, rows, total, {onRow: toggleLine, empty: 'nothing live'}));
    state.flame.setRows(rows, 'live at event #' + dev.seq[i] + ': ' + GL.fmt.bytes(total));
    document.getElementById('flame-title').textContent = 'Flame graph of what was live at event #' + dev.seq[i] +
      ' (' + GL.fmt.time(dev.t[i], span) + ')';
  }

  function showWindow(i, j) {
    const dev = devOf();
    const proc = dev.proc;
    const span = proc.p.span_ns;
    state.sel = {i, j};
    const rows = dev.growth(i, j);
    const grew = rows.reduce((s, r) => s + Math.max(0, r.bytes), 0);
    const box = document.getElementById('ledger');
    GL.fmt.fill(box,
      el('h3', null, 'What changed from ', el('span', {id: 'sel-event', dataset: {seq: dev.seq[i], to: dev.seq[j], index: i}},
        'event #' + dev.seq[i] + ' to #' + dev.seq[j])),
      el('p', null, GL.fmt.time(dev.t[i], span) + ' → ' + GL.fmt.time(dev.t[j], span) + ': ' +
        GL.fmt.bytes(dev.bytes[i]) + ' → ' + GL.fmt.bytes(dev.bytes[j]) + ' (' +
        GL.fmt.signedBytes(dev.bytes[j] - dev.bytes[i]) + ')'),
      el('p', null, el('button', {type: 'button', onclick: () => state.timeline.zoomToSelection()}, 'zoom to this window')),
      el('p', {class: 'muted'}, 'Same as: gpuledger diff --at \'#' + dev.seq[i] + '\' --at \'#' + dev.seq[j] + '\' ' +
        GL.fmt.basename(proc.p.path)),
      GL.panels.ledgerTable(proc, rows, grew, {signed: true, onRow: toggleLine, empty: 'no change'}));
    state.flame.setRows(rows, 'grown from event #' + dev.seq[i] + ' to #' + dev.seq[j]);
    document.getElementById('flame-title').textContent = 'Flame graph of what grew from event #' + dev.seq[i] +
      ' to #' + dev.seq[j];
  }

  function section(title, body, id) {
    return el('section', {class: 'panel', id}, el('h3', null, title), body);
  }

  function render() {
    const proc = procOf();
    GL.fmt.fill(app, ...header());
    if (!proc.devices.length) {
      app.appendChild(el('p', {class: 'muted'}, 'This process made no device allocation.'));
      document.body.dataset.ready = '1';
      return;
    }
    const dev = devOf();
    const left = el('div', {class: 'left'});
    const right = el('div', {class: 'right', id: 'ledger'});
    const flameBox = el('section', {class: 'panel'}, el('h3', {id: 'flame-title'}, 'Flame graph'));
    app.append(deviceSummary(dev), el('div', {class: 'grid'}, left, right), flameBox);
    state.timeline = new GL.Timeline(left, dev, {onSelect: showMoment, onWindow: showWindow});
    const zoomOut = el('button', {type: 'button', onclick: () => state.timeline.zoom(0, dev.proc.p.span_ns)}, 'whole run');
    left.append(el('div', {class: 'toolbar'}, legend(dev), zoomOut,
      el('span', {class: 'muted'}, 'click: the ledger at a moment · drag: what changed in a window · ←/→: step')),
    topStacks(dev));
    state.flame = new GL.Flame(flameBox, proc);
    state.lines = [];
    app.append(
      section('Leaks', GL.panels.leaks(proc, dev, toggleLine), 'leaks'),
      section('Growth per step', GL.panels.growth(proc, dev, toggleLine), 'growth'),
      section('Out of memory', GL.panels.ooms(proc, dev, (i) => state.timeline.select(i)), 'ooms'),
      section('Pool holes', GL.panels.holes(proc, dev), 'holes'),
      section('Heaps of the program\'s own pools', GL.panels.heaps(proc), 'heaps'));
    const sel = proc.p.selected;
    state.timeline.select(sel ? dev.indexOfSeq(sel.seq) : dev.peakIndex);
    document.body.dataset.readyMs = String(Math.round(performance.now()));
    document.body.dataset.ready = '1';
  }

  document.addEventListener('keydown', (e) => {
    if (!state.sel || !state.timeline || e.target.tagName === 'INPUT') return;
    const step = {ArrowLeft: -1, ArrowRight: 1}[e.key];
    if (!step) return;
    const i = Math.max(0, Math.min(devOf().n - 1, state.sel.i + step));
    state.timeline.select(i);
    e.preventDefault();
  });

  window.gpuledger = {
    /* select the moment of event seq (or the closest chosen moment before it) */
    select(seq) {
      state.timeline.select(devOf().indexOfSeq(seq));
    },
    selected() {
      return state.sel && devOf().seq[state.sel.i];
    },
    ledger() {
      return state.sel ? devOf().ledger(state.sel.i) : [];
    },
    /* the x coordinate in the viewport where the timeline draws event seq */
    timelineX(seq) {
      const tl = state.timeline;
      const d = devOf();
      return tl.canvas.getBoundingClientRect().left + tl.xOf(d.t[d.indexOfSeq(seq)], tl.geom());
    },
  };

  render();
})();
