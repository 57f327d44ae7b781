/* model.js — the report's data (the contract in report/html_data.h) made
 * usable: per device, the ledger at any chosen moment (the sum of the
 * per-moment changes up to it), growth across a window, live bytes per
 * category and per row over time, and how to name a stack. */
'use strict';

GL.model = (function () {
  /* frames that sit above every framework allocation (report/out.c) */
  const PLUMBING = ['c10::cuda::CUDACachingAllocator', 'c10::cuda::', 'c10::StorageImpl', 'c10::make_intrusive',
    'at::detail::empty', 'at::TensorBase::', 'c10::intrusive_ptr', 'c10::Allocator'];

  class Process {
    constructor(p, index) {
      this.p = p;
      this.index = index;
      this.frames = p.frames;
      this.rows = p.rows;
      this.categories = p.categories;
      this.cached = new Set(p.cached_categories);
      this.names = p.frames.map(GL.fmt.frameName);
      this.devices = p.devices.map((d) => new Device(this, d));
      this.marks = p.marks;
      this.ranges = p.ranges;
    }

    label() {
      return 'process ' + this.p.pid + ' on ' + this.p.host + ' (rank ' + this.p.rank + ')';
    }

    rowCategory(row) {
      return this.categories[this.rows[row][0]];
    }

    rowFrames(row) {
      return this.rows[row][2];
    }

    /* what a row no stack made is ("[free blocks cached in …]"), or null */
    rowLabel(row) {
      return this.rows[row][3] || null;
    }

    /* index of the first frame that is not allocator plumbing */
    firstInteresting(ids) {
      let k = 0;
      const plumbing = (f) => f[0] && PLUMBING.some((p) => f[0].startsWith(p));
      while (k + 1 < ids.length) {
        const f = this.frames[ids[k]];
        const g = this.frames[ids[k + 1]];
        if (plumbing(f) || (!f[0] && f[1] && g[1] && f[1] === g[1])) k++;
        else break;
      }
      return k;
    }

    /* "forward <- … <- Linear.forward (linear.py:134) <- …", as the text
     * report: at most max frames, and frame `must` too when given (the one
     * that tells this row from the others, distinct()) */
    chain(ids, max, must) {
      if (!ids.length) return '(no stack recorded)';
      let k = this.firstInteresting(ids);
      const show = [];
      let py = k;
      while (py < ids.length && !this.frames[ids[py]][4]) py++;
      if (py < ids.length && py > k + 1 && max > 1) {
        show.push(k);
        k = py;
        max--;
      }
      for (let i = k; i < ids.length && i < k + max; i++) show.push(i);
      if (must !== undefined && must >= 0 && must < ids.length && !show.includes(must)) {
        show.push(must);
        show.sort((a, b) => a - b);
      }
      const parts = show[0] ? ['[allocator]'] : [];
      show.forEach((i, n) => {
        if (n && i !== show[n - 1] + 1) parts.push('…');
        parts.push(this.names[ids[i]]);
      });
      if (show[show.length - 1] < ids.length - 1) parts.push('…');
      return parts.join(' ← ');
    }

    /* for stacks shown together: the index of the first frame where each
     * differs from all the others (-1: another is the same to its end) */
    distinct(idsList) {
      return idsList.map((a, i) => {
        let common = 0;
        idsList.forEach((b, j) => {
          let k = 0;
          while (j !== i && k < a.length && k < b.length && a[k] === b[k]) k++;
          if (j !== i && k > common) common = k;
        });
        return common < a.length ? common : -1;
      });
    }

    /* the frames to list: Python lines first, then the native frames */
    orderedFrames(ids) {
      const py = ids.filter((id) => this.frames[id][4]);
      const native = ids.filter((id) => !this.frames[id][4]);
      return {py, native};
    }

    /* which mark ends the step t lies in, and the innermost range around t */
    context(t) {
      let mark = null;
      let lo = 0;
      let hi = this.marks.length - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        if (this.marks[mid][1] >= t) {
          mark = this.marks[mid];
          hi = mid - 1;
        } else lo = mid + 1;
      }
      let range = null;
      for (const r of this.ranges) {
        if (r[1] > t) break;
        if (r[3] >= t && (!range || r[5] >= range[5])) range = r;
      }
      return {mark, range};
    }
  }

  class Device {
    constructor(proc, d) {
      this.proc = proc;
      this.d = d;
      this.device = d.device;
      const n = d.moments.length;
      this.n = n;
      this.seq = new Float64Array(n);
      this.t = new Float64Array(n);
      this.bytes = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        [this.seq[i], this.t[i], this.bytes[i]] = d.moments[i];
      }
      this.deltas = d.deltas;
      const nrows = proc.rows.length;
      this.curB = new Float64Array(nrows);
      this.curC = new Float64Array(nrows);
      this.cur = -1;
      this.peakIndex = this.indexOfSeq(d.peak[0]);
      this._catSeries = null;
    }

    indexOfSeq(seq) {
      let lo = 0;
      let hi = this.n - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (this.seq[mid] <= seq) lo = mid;
        else hi = mid - 1;
      }
      return lo;
    }

    /* the moment closest in time to t; among moments at the same time, the highest */
    nearest(t) {
      let lo = 0;
      let hi = this.n - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (this.t[mid] < t) lo = mid + 1;
        else hi = mid;
      }
      let best = lo;
      if (lo > 0 && Math.abs(this.t[lo - 1] - t) <= Math.abs(this.t[lo] - t)) best = lo - 1;
      let i = best;
      while (i + 1 < this.n && this.t[i + 1] === this.t[best]) {
        i++;
        if (this.bytes[i] > this.bytes[best]) best = i;
      }
      i = best;
      while (i > 0 && this.t[i - 1] === this.t[best]) {
        i--;
        if (this.bytes[i] > this.bytes[best]) best = i;
      }
      return best;
    }

    apply(i, sign) {
      const dl = this.deltas[i];
      for (let k = 0; k < dl.length; k += 3) {
        this.curB[dl[k]] += sign * dl[k + 1];
        this.curC[dl[k]] += sign * dl[k + 2];
      }
    }

    /* move the replay cursor to moment i */
    seek(i) {
      if (i < this.cur - i) {
        this.curB.fill(0);
        this.curC.fill(0);
        this.cur = -1;
      }
      while (this.cur < i) this.apply(++this.cur, 1);
      while (this.cur > i) this.apply(this.cur--, -1);
    }

    /* [{row, bytes, count}] live at moment i, biggest first */
    ledger(i) {
      this.seek(i);
      const out = [];
      for (let r = 0; r < this.curB.length; r++) {
        /* a row no stack made is shown while it holds bytes (as the report) */
        if (this.curB[r] !== 0 || (this.curC[r] !== 0 && !this.proc.rowLabel(r))) {
          out.push({row: r, bytes: this.curB[r], count: this.curC[r]});
        }
      }
      out.sort((a, b) => b.bytes - a.bytes || a.row - b.row);
      return out;
    }

    /* [{row, bytes, count}] = ledger(j) - ledger(i), largest change first */
    growth(i, j) {
      const a = this.ledger(i).reduce((m, x) => m.set(x.row, x), new Map());
      const out = [];
      for (const x of this.ledger(j)) {
        const y = a.get(x.row);
        const db = x.bytes - (y ? y.bytes : 0);
        const dc = x.count - (y ? y.count : 0);
        a.delete(x.row);
        if (db || dc) out.push({row: x.row, bytes: db, count: dc});
      }
      for (const y of a.values()) out.push({row: y.row, bytes: -y.bytes, count: -y.count});
      out.sort((p, q) => q.bytes - p.bytes || p.row - q.row);
      return out;
    }

    /* live bytes per category at every moment: Float64Array(n * ncat), and
     * the highest bytes each row ever had at a moment */
    catSeries() {
      if (this._catSeries) return this._catSeries;
      const nc = this.proc.categories.length;
      const rows = this.proc.rows;
      const out = new Float64Array(this.n * nc);
      const cat = new Float64Array(nc);
      const cur = new Float64Array(rows.length);
      const max = new Float64Array(rows.length);
      for (let i = 0; i < this.n; i++) {
        const dl = this.deltas[i];
        for (let k = 0; k < dl.length; k += 3) {
          const r = dl[k];
          cur[r] += dl[k + 1];
          cat[rows[r][0]] += dl[k + 1];
          if (cur[r] > max[r]) max[r] = cur[r];
        }
        out.set(cat, i * nc);
      }
      this._rowMax = max;
      this._catSeries = out;
      return out;
    }

    /* the k rows that held the most at any moment */
    topRows(k) {
      this.catSeries();
      const ids = [];
      for (let r = 0; r < this._rowMax.length; r++) if (this._rowMax[r] > 0) ids.push(r);
      ids.sort((a, b) => this._rowMax[b] - this._rowMax[a] || a - b);
      return ids.slice(0, k).map((r) => ({row: r, max: this._rowMax[r]}));
    }

    /* live bytes of each given row at every moment */
    rowSeries(rowIds) {
      const want = new Map(rowIds.map((r, i) => [r, i]));
      const out = rowIds.map(() => new Float64Array(this.n));
      const cur = new Float64Array(rowIds.length);
      for (let i = 0; i < this.n; i++) {
        const dl = this.deltas[i];
        for (let k = 0; k < dl.length; k += 3) {
          const w = want.get(dl[k]);
          if (w !== undefined) cur[w] += dl[k + 1];
        }
        for (let w = 0; w < rowIds.length; w++) out[w][i] = cur[w];
      }
      return out;
    }

    /* categories that ever held memory, biggest peak first */
    usedCategories() {
      const s = this.catSeries();
      const nc = this.proc.categories.length;
      const max = new Float64Array(nc);
      for (let i = 0; i < this.n; i++) for (let c = 0; c < nc; c++) max[c] = Math.max(max[c], s[i * nc + c]);
      const ids = [];
      for (let c = 0; c < nc; c++) if (max[c] > 0) ids.push(c);
      ids.sort((a, b) => max[b] - max[a] || a - b);
      return ids;
    }
  }

  function load() {
    const node = document.getElementById('gl-data');
    const data = JSON.parse(node.textContent);
    if (data.format !== 'gpuledger-report' || data.version !== 1) {
      throw new Error('this page holds data this report version cannot read (' + data.format + ' ' + data.version + ')');
    }
    return {version: data.gpuledger_version, processes: data.processes.map((p, i) => new Process(p, i))};
  }

  return {load, Process, Device};
})();
