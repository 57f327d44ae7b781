/* timeline.js — live bytes of one device over time, drawn on a canvas as a
 * stacked area by category (or with the chosen rows' own lines over it),
 * with the program's marks and ranges in lanes underneath, the peak and
 * each out-of-memory failure marked. Click selects the nearest moment,
 * a drag selects a window; hovering shows the time, bytes, step and range. */
'use strict';

GL.Timeline = (function () {
  const PAD_L = 74;
  const PAD_R = 12;
  const PAD_T = 22;
  const PLOT_H = 240;
  const MARK_H = 18;
  const RANGE_ROW = 13;
  const MAX_RANGE_ROWS = 4;
  const AXIS_H = 18;
  const LINE_COLORS = ['#000000', '#d62728', '#1f77b4', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#17becf'];

  class Timeline {
    constructor(parent, dev, cb) {
      this.dev = dev;
      this.proc = dev.proc;
      this.cb = cb;
      this.span = Math.max(1, this.proc.p.span_ns);
      this.v0 = 0;
      this.v1 = this.span;
      this.hidden = new Set();
      this.lines = []; /* [{row, series}] */
      this.sel = null; /* {i} or {i, j} */
      this.hover = null;
      this.rangeRows = Math.min(MAX_RANGE_ROWS, this.proc.ranges.reduce((m, r) => Math.max(m, r[5] + 1), 0));
      this.height = PAD_T + PLOT_H + MARK_H + this.rangeRows * RANGE_ROW + AXIS_H;
      this.wrap = GL.fmt.el('div', {class: 'tl-wrap'});
      this.canvas = GL.fmt.el('canvas', {id: 'timeline', class: 'timeline', 'aria-label': 'live bytes over time'});
      this.tip = GL.fmt.el('div', {class: 'tip', hidden: ''});
      this.wrap.append(this.canvas, this.tip);
      parent.appendChild(this.wrap);
      this.order = dev.usedCategories();
      this.series = dev.catSeries();
      this.bind();
    }

    /* plot geometry in CSS pixels */
    geom() {
      const w = this.wrap.clientWidth || 900;
      return {w, x0: PAD_L, x1: w - PAD_R, y0: PAD_T, y1: PAD_T + PLOT_H};
    }

    xOf(t, g) {
      return g.x0 + ((t - this.v0) / (this.v1 - this.v0)) * (g.x1 - g.x0);
    }

    tOf(x, g) {
      return this.v0 + ((x - g.x0) / (g.x1 - g.x0)) * (this.v1 - this.v0);
    }

    /* visible moment indices [a, b] (one beyond each edge, for the steps) */
    visible() {
      const d = this.dev;
      let a = d.nearest(this.v0);
      let b = d.nearest(this.v1);
      if (a > 0) a--;
      if (b < d.n - 1) b++;
      return [a, b];
    }

    draw() {
      const g = this.geom();
      const dpr = window.devicePixelRatio || 1;
      this.canvas.style.width = g.w + 'px';
      this.canvas.style.height = this.height + 'px';
      this.canvas.width = Math.round(g.w * dpr);
      this.canvas.height = Math.round(this.height * dpr);
      const c = this.canvas.getContext('2d');
      c.setTransform(dpr, 0, 0, dpr, 0, 0);
      c.clearRect(0, 0, g.w, this.height);
      c.font = '11px system-ui, sans-serif';
      const d = this.dev;
      const [a, b] = this.visible();
      let ymax = 0;
      for (let i = a; i <= b; i++) ymax = Math.max(ymax, d.bytes[i]);
      for (const l of this.lines) for (let i = a; i <= b; i++) ymax = Math.max(ymax, l.series[i]);
      ymax = ymax > 0 ? ymax * 1.08 : 1;
      this.ymax = ymax;
      const yOf = (v) => g.y1 - (v / ymax) * (g.y1 - g.y0);
      this.grid(c, g, yOf);
      this.areas(c, g, a, b, yOf);
      this.totalLine(c, g, a, b, yOf);
      for (let k = 0; k < this.lines.length; k++) this.rowLine(c, g, a, b, yOf, this.lines[k], k);
      this.selection(c, g);
      this.markers(c, g, yOf);
      this.lanes(c, g);
      this.axis(c, g);
      if (this.hover !== null) {
        const x = this.xOf(d.t[this.hover], g);
        c.strokeStyle = 'rgba(0,0,0,.35)';
        c.beginPath();
        c.moveTo(x, g.y0);
        c.lineTo(x, g.y1);
        c.stroke();
      }
    }

    grid(c, g, yOf) {
      c.strokeStyle = '#e6e6e6';
      c.fillStyle = '#555';
      c.textAlign = 'right';
      for (let k = 0; k <= 4; k++) {
        const v = (this.ymax / 1.08) * (k / 4);
        const y = yOf(v);
        c.beginPath();
        c.moveTo(g.x0, y);
        c.lineTo(g.x1, y);
        c.stroke();
        c.fillText(GL.fmt.bytes(Math.round(v)), g.x0 - 6, y + 4);
      }
    }

    /* stacked step areas: the level after a moment holds until the next */
    areas(c, g, a, b, yOf) {
      const d = this.dev;
      const nc = this.proc.categories.length;
      const base = new Float64Array(b - a + 1);
      for (const cat of this.order) {
        if (this.hidden.has(cat)) continue;
        const top = new Float64Array(b - a + 1);
        for (let i = a; i <= b; i++) top[i - a] = base[i - a] + this.series[i * nc + cat];
        c.beginPath();
        let px = null;
        for (let i = a; i <= b; i++) {
          const x = Math.max(g.x0, Math.min(g.x1, this.xOf(d.t[i], g)));
          if (px === null) c.moveTo(x, yOf(top[0]));
          else {
            c.lineTo(x, yOf(top[i - a - 1]));
            c.lineTo(x, yOf(top[i - a]));
          }
          px = x;
        }
        c.lineTo(g.x1, yOf(top[b - a]));
        c.lineTo(g.x1, yOf(base[b - a]));
        for (let i = b; i >= a; i--) {
          const x = Math.max(g.x0, Math.min(g.x1, this.xOf(d.t[i], g)));
          c.lineTo(x, yOf(base[i - a]));
          if (i > a) c.lineTo(Math.max(g.x0, Math.min(g.x1, this.xOf(d.t[i], g))), yOf(base[i - a - 1]));
        }
        c.closePath();
        c.fillStyle = GL.fmt.color(this.proc.categories[cat]);
        c.globalAlpha = this.lines.length ? 0.35 : 0.85;
        c.fill();
        c.globalAlpha = 1;
        base.set(top);
      }
    }

    stepLine(c, g, a, b, yOf, values) {
      c.beginPath();
      let first = true;
      for (let i = a; i <= b; i++) {
        const x = Math.max(g.x0, Math.min(g.x1, this.xOf(this.dev.t[i], g)));
        if (first) c.moveTo(x, yOf(values[i]));
        else {
          c.lineTo(x, yOf(values[i - 1]));
          c.lineTo(x, yOf(values[i]));
        }
        first = false;
      }
      c.lineTo(g.x1, yOf(values[b]));
      c.stroke();
    }

    totalLine(c, g, a, b, yOf) {
      c.strokeStyle = '#333';
      c.lineWidth = 1;
      this.stepLine(c, g, a, b, yOf, this.dev.bytes);
    }

    rowLine(c, g, a, b, yOf, l, k) {
      c.strokeStyle = LINE_COLORS[(k + 1) % LINE_COLORS.length];
      c.lineWidth = 2;
      this.stepLine(c, g, a, b, yOf, l.series);
      c.lineWidth = 1;
    }

    lineColor(k) {
      return LINE_COLORS[(k + 1) % LINE_COLORS.length];
    }

    selection(c, g) {
      if (!this.sel) return;
      const d = this.dev;
      c.fillStyle = 'rgba(42,111,219,.15)';
      c.strokeStyle = '#2a6fdb';
      c.lineWidth = 2;
      if (this.sel.j !== undefined) {
        const xa = this.xOf(d.t[this.sel.i], g);
        const xb = this.xOf(d.t[this.sel.j], g);
        c.fillRect(xa, g.y0, xb - xa, g.y1 - g.y0);
      } else {
        const x = this.xOf(d.t[this.sel.i], g);
        c.beginPath();
        c.moveTo(x, g.y0 - 4);
        c.lineTo(x, g.y1);
        c.stroke();
      }
      c.lineWidth = 1;
    }

    markers(c, g, yOf) {
      const d = this.dev;
      const peak = d.d.peak;
      const px = this.xOf(peak[1], g);
      if (px >= g.x0 && px <= g.x1) {
        const y = yOf(peak[2]);
        c.fillStyle = '#d33';
        c.beginPath();
        c.moveTo(px, y - 2);
        c.lineTo(px - 5, y - 11);
        c.lineTo(px + 5, y - 11);
        c.closePath();
        c.fill();
        c.textAlign = px > g.x1 - 140 ? 'right' : 'left';
        c.fillText('peak ' + GL.fmt.bytes(peak[2]), px + (px > g.x1 - 140 ? -8 : 8), Math.max(g.y0 - 6, y - 12));
      }
      let labelEnd = -Infinity; /* OOM labels never drawn over one another */
      for (const o of d.d.ooms) {
        const x = this.xOf(o.t, g);
        if (x < g.x0 || x > g.x1) continue;
        c.strokeStyle = '#b00';
        c.lineWidth = 2;
        c.beginPath();
        c.moveTo(x - 5, 4);
        c.lineTo(x + 5, 14);
        c.moveTo(x + 5, 4);
        c.lineTo(x - 5, 14);
        c.stroke();
        c.setLineDash([3, 3]);
        c.beginPath();
        c.moveTo(x, 16);
        c.lineTo(x, g.y1);
        c.stroke();
        c.setLineDash([]);
        c.lineWidth = 1;
        c.fillStyle = '#b00';
        c.textAlign = 'left';
        const label = 'OOM ' + GL.fmt.bytes(o.size) + (o.step === null || o.step === undefined ? '' : ' (step ' + o.step + ')');
        if (x + 8 > labelEnd) {
          c.fillText(label, x + 8, 13);
          labelEnd = x + 8 + c.measureText(label).width + 6;
        }
      }
    }

    lanes(c, g) {
      const y = g.y1 + 2;
      c.fillStyle = '#f4f4f4';
      c.fillRect(g.x0, y, g.x1 - g.x0, MARK_H - 4 + this.rangeRows * RANGE_ROW);
      c.textAlign = 'left';
      let lastLabel = -1e9;
      c.strokeStyle = '#7a5';
      for (const m of this.proc.marks) {
        const x = this.xOf(m[1], g);
        if (x < g.x0 || x > g.x1) continue;
        c.beginPath();
        c.moveTo(x, y);
        c.lineTo(x, y + MARK_H - 6);
        c.stroke();
        if (x - lastLabel > 70) {
          c.fillStyle = '#474';
          c.fillText(m[2].slice(0, 14), x + 2, y + 11);
          lastLabel = x;
        }
      }
      const ry = y + MARK_H - 4;
      for (const r of this.proc.ranges) {
        if (r[5] >= this.rangeRows) continue;
        const xa = Math.max(g.x0, this.xOf(r[1], g));
        const xb = Math.min(g.x1, this.xOf(r[3], g));
        if (xb < g.x0 || xa > g.x1 || xb - xa < 0.5) continue;
        c.fillStyle = ['#9ecae1', '#c6dbef', '#dadaeb', '#fdd0a2'][r[5] % 4];
        c.fillRect(xa, ry + r[5] * RANGE_ROW, Math.max(1, xb - xa - 1), RANGE_ROW - 2);
        if (xb - xa > 40) {
          c.fillStyle = '#234';
          c.save();
          c.beginPath();
          c.rect(xa, ry + r[5] * RANGE_ROW, xb - xa - 2, RANGE_ROW);
          c.clip();
          c.fillText(r[4], xa + 2, ry + r[5] * RANGE_ROW + 9);
          c.restore();
        }
      }
    }

    axis(c, g) {
      const span = this.v1 - this.v0;
      const want = span / Math.max(2, (g.x1 - g.x0) / 110);
      const p = Math.pow(10, Math.floor(Math.log10(Math.max(1, want))));
      const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= want) || 10 * p;
      c.fillStyle = '#555';
      c.textAlign = 'center';
      const y = this.height - 5;
      for (let t = Math.ceil(this.v0 / step) * step; t <= this.v1; t += step) {
        const x = this.xOf(t, g);
        c.fillText(GL.fmt.tick(t, step), x, y);
      }
    }

    /* ---- interaction ---- */

    bind() {
      let down = null;
      const pos = (e) => {
        const r = this.canvas.getBoundingClientRect();
        return {x: e.clientX - r.left, y: e.clientY - r.top};
      };
      this.canvas.addEventListener('mousedown', (e) => {
        down = pos(e);
        e.preventDefault();
      });
      this.canvas.addEventListener('mousemove', (e) => {
        const p = pos(e);
        this.showHover(p);
        if (down && Math.abs(p.x - down.x) > 4) {
          const g = this.geom();
          const i = this.dev.nearest(this.tOf(Math.min(down.x, p.x), g));
          const j = this.dev.nearest(this.tOf(Math.max(down.x, p.x), g));
          this.sel = {i, j};
          this.draw();
        }
      });
      window.addEventListener('mouseup', (e) => {
        if (!down) return;
        const p = pos(e);
        const g = this.geom();
        if (Math.abs(p.x - down.x) <= 4) {
          this.select(this.dev.nearest(this.tOf(p.x, g)));
        } else {
          const i = this.dev.nearest(this.tOf(Math.min(down.x, p.x), g));
          const j = this.dev.nearest(this.tOf(Math.max(down.x, p.x), g));
          if (i === j) this.select(i);
          else this.selectWindow(i, j);
        }
        down = null;
      });
      this.canvas.addEventListener('mouseleave', () => {
        this.hover = null;
        this.tip.hidden = true;
        this.draw();
      });
      this.canvas.addEventListener('dblclick', () => this.zoom(0, this.span));
      window.addEventListener('resize', () => this.draw());
    }

    select(i) {
      this.sel = {i};
      this.draw();
      this.cb.onSelect(i);
    }

    selectWindow(i, j) {
      this.sel = {i, j};
      this.draw();
      this.cb.onWindow(i, j);
    }

    zoom(t0, t1) {
      if (t1 - t0 < 1) return;
      this.v0 = Math.max(0, t0);
      this.v1 = Math.min(this.span, t1);
      this.draw();
    }

    zoomToSelection() {
      if (!this.sel || this.sel.j === undefined) return;
      const d = this.dev;
      const pad = (d.t[this.sel.j] - d.t[this.sel.i]) * 0.05;
      this.zoom(d.t[this.sel.i] - pad, d.t[this.sel.j] + pad);
    }

    setLines(rows) {
      const series = this.dev.rowSeries(rows);
      this.lines = rows.map((row, k) => ({row, series: series[k]}));
      this.draw();
    }

    toggleCategory(cat) {
      if (this.hidden.has(cat)) this.hidden.delete(cat);
      else this.hidden.add(cat);
      this.draw();
    }

    showHover(p) {
      const g = this.geom();
      if (p.x < g.x0 || p.x > g.x1) {
        this.tip.hidden = true;
        return;
      }
      const d = this.dev;
      const i = d.nearest(this.tOf(p.x, g));
      this.hover = i;
      const nc = this.proc.categories.length;
      const span = this.proc.p.span_ns;
      const ctx = this.proc.context(d.t[i]);
      const el = GL.fmt.el;
      const cats = this.order
        .map((cat) => [cat, this.series[i * nc + cat]])
        .filter((x) => x[1] > 0)
        .slice(0, 6);
      GL.fmt.fill(this.tip,
        el('div', {class: 'tip-h'}, GL.fmt.time(d.t[i], span) + '  event #' + d.seq[i]),
        el('div', null, GL.fmt.bytes(d.bytes[i]) + ' live on device ' + d.device),
        ctx.mark ? el('div', {class: 'muted'}, 'step ending at mark “' + ctx.mark[2] + '”') : null,
        ctx.range ? el('div', {class: 'muted'}, 'inside range “' + ctx.range[4] + '”') : null,
        ...cats.map(([cat, v]) =>
          el('div', null, el('span', {class: 'sw', style: 'background:' + GL.fmt.color(this.proc.categories[cat])}),
            this.proc.categories[cat] + ' ' + GL.fmt.bytes(v))),
        ...this.lines.map((l, k) =>
          el('div', null, el('span', {class: 'sw', style: 'background:' + this.lineColor(k)}),
            GL.fmt.bytes(l.series[i]) + ' ' + this.proc.chain(this.proc.rowFrames(l.row), 1))));
      this.tip.hidden = false;
      const left = p.x + 16 + 260 > g.w ? p.x - 276 : p.x + 16;
      this.tip.style.left = Math.max(0, left) + 'px';
      this.tip.style.top = Math.max(0, p.y - 10) + 'px';
      this.draw();
    }
  }

  return Timeline;
})();
