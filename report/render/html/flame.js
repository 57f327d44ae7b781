/* flame.js — an icicle flame graph of memory: the root (all bytes) on top,
 * each stack's outermost frame below it, down to the frame that allocated;
 * widths are bytes. Built from ledger rows (live at a moment, or what grew
 * across a window); allocator internals folded into one bar, the user's
 * own frames outlined and bold. Click a frame to zoom into it, click one of the bars
 * above to zoom back out; hovering names the frame and its bytes. */
'use strict';

GL.Flame = (function () {
  const ROW_H = 18;
  const MAX_DEPTH = 200;
  const USER = 0; /* a frame's class (html_data.h): the user's code */
  const ALLOCATOR = 2; /* allocator internals: folded */

  function node(frame, name) {
    return {frame, name, bytes: 0, cat: -2, kids: new Map(), parent: null, depth: 0};
  }

  class Flame {
    constructor(parent, proc, cb) {
      this.proc = proc;
      this.cb = cb || {};
      this.box = GL.fmt.el('div', {class: 'flame-box'});
      this.crumb = GL.fmt.el('div', {id: 'flame-zoom', class: 'muted'});
      this.canvas = GL.fmt.el('canvas', {id: 'flame', class: 'flame', 'aria-label': 'flame graph'});
      this.tip = GL.fmt.el('div', {class: 'tip', hidden: ''});
      this.box.append(this.canvas, this.tip);
      parent.append(this.crumb, this.box);
      this.rects = [];
      this.root = null;
      this.zoomed = null;
      this.bind();
    }

    /* rows: [{row, bytes}] (bytes > 0 are drawn) */
    setRows(rows, title) {
      const proc = this.proc;
      const root = node(-1, title);
      for (const r of rows) {
        if (r.bytes <= 0) continue;
        const cat = proc.rows[r.row][0];
        const ids = proc.rowFrames(r.row);
        let n = root;
        n.bytes += r.bytes;
        n.cat = n.cat === -2 || n.cat === cat ? cat : -1;
        const label = proc.rowLabel(r.row);
        if (label) { /* a row no stack made: one bar of its own under the root */
          const child = node('row:' + r.row, label);
          child.parent = n;
          child.depth = 1;
          child.bytes = r.bytes;
          child.cat = cat;
          n.kids.set('row:' + r.row, child);
          continue;
        }
        const last = Math.max(0, ids.length - MAX_DEPTH);
        let folded = 0; /* allocator internals: one bar "[N allocator frames]" at the end */
        for (let k = ids.length - 1; k >= last; k--) {
          if (proc.frames[ids[k]][6] === ALLOCATOR) {
            folded++;
            continue;
          }
          let child = n.kids.get(ids[k]);
          if (!child) {
            child = node(ids[k], proc.names[ids[k]]);
            child.parent = n;
            child.depth = n.depth + 1;
            n.kids.set(ids[k], child);
          }
          n = child;
          n.bytes += r.bytes;
          n.cat = n.cat === -2 || n.cat === cat ? cat : -1;
        }
        if (folded) {
          const key = 'alloc:' + folded;
          let child = n.kids.get(key);
          if (!child) {
            child = node(key, '[' + folded + ' allocator frame' + (folded > 1 ? 's' : '') + ']');
            child.parent = n;
            child.depth = n.depth + 1;
            n.kids.set(key, child);
          }
          child.bytes += r.bytes;
          child.cat = child.cat === -2 || child.cat === cat ? cat : -1;
        }
      }
      this.root = root;
      /* keep the zoom on the same path of frames if it still exists */
      const path = [];
      for (let z = this.zoomed; z && z.parent; z = z.parent) path.unshift(z.frame);
      let z = root;
      for (const f of path) {
        const next = z.kids.get(f);
        if (!next) break;
        z = next;
      }
      this.zoomed = z;
      this.draw();
    }

    depthOf(n) {
      let d = 0;
      for (const k of n.kids.values()) d = Math.max(d, this.depthOf(k));
      return d + 1;
    }

    draw() {
      const c0 = this.canvas;
      const w = this.box.clientWidth || 900;
      const z = this.zoomed;
      const depth = this.root ? z.depth + this.depthOf(z) : 1;
      const h = Math.max(ROW_H * 2, depth * ROW_H + 2);
      const dpr = window.devicePixelRatio || 1;
      c0.style.width = w + 'px';
      c0.style.height = h + 'px';
      c0.width = Math.round(w * dpr);
      c0.height = Math.round(h * dpr);
      const c = c0.getContext('2d');
      c.setTransform(dpr, 0, 0, dpr, 0, 0);
      c.clearRect(0, 0, w, h);
      c.font = '11px system-ui, sans-serif';
      this.rects = [];
      if (!this.root || this.root.bytes <= 0) {
        c.fillStyle = '#777';
        c.fillText('nothing live', 6, 13);
        this.crumb.textContent = '';
        return;
      }
      /* the zoomed frame's ancestors: full width */
      const chain = [];
      for (let a = z; a; a = a.parent) chain.unshift(a);
      for (const a of chain) if (a !== z) this.box1(c, a, 0, w, a.depth);
      this.subtree(c, z, 0, w);
      this.crumb.textContent = z === this.root ? 'whole: ' + GL.fmt.bytes(this.root.bytes) + ' (click a frame to zoom)'
        : 'zoomed into ' + z.name + ' — ' + GL.fmt.bytes(z.bytes) + ' of ' + GL.fmt.bytes(this.root.bytes) +
          ' (click a bar above to zoom out)';
      this.crumb.dataset.frame = z === this.root ? '' : z.name;
    }

    subtree(c, n, x, w) {
      if (w < 0.5) return;
      this.box1(c, n, x, w, n.depth);
      const kids = [...n.kids.values()].sort((a, b) => b.bytes - a.bytes);
      let cx = x;
      for (const k of kids) {
        const kw = (w * k.bytes) / n.bytes;
        this.subtree(c, k, cx, kw);
        cx += kw;
      }
    }

    box1(c, n, x, w, depth) {
      const y = depth * ROW_H;
      const cats = this.proc.categories;
      c.fillStyle = n.frame < 0 ? '#999' : n.cat >= 0 ? GL.fmt.color(cats[n.cat]) : '#b0b0b0';
      c.globalAlpha = n.frame >= 0 && this.proc.frames[n.frame][4] ? 1 : 0.7;
      c.fillRect(x, y, Math.max(0.5, w - 1), ROW_H - 1);
      c.globalAlpha = 1;
      if (typeof n.frame === 'number' && n.frame >= 0 && this.proc.frames[n.frame][6] === USER) {
        c.strokeStyle = '#111'; /* user frames outlined */
        c.strokeRect(x + 0.5, y + 0.5, Math.max(0.5, w - 2), ROW_H - 2);
      }
      if (w > 28) {
        c.save();
        c.beginPath();
        c.rect(x, y, w - 3, ROW_H);
        c.clip();
        c.fillStyle = '#111';
        const user = typeof n.frame === 'number' && n.frame >= 0 && this.proc.frames[n.frame][6] === USER;
        if (user) c.font = 'bold ' + c.font; /* the user's own lines stand out */
        c.fillText((user ? '▸ ' : '') + n.name + (n.frame < 0 ? '' : '  ' + GL.fmt.bytes(n.bytes)), x + 3, y + 12);
        c.restore();
      }
      this.rects.push({n, x, y, w});
    }

    hit(px, py) {
      for (let k = this.rects.length - 1; k >= 0; k--) {
        const r = this.rects[k];
        if (px >= r.x && px < r.x + r.w && py >= r.y && py < r.y + ROW_H) return r.n;
      }
      return null;
    }

    zoomTo(n) {
      this.zoomed = n;
      this.draw();
      if (this.cb.onZoom) this.cb.onZoom(n);
    }

    bind() {
      const pos = (e) => {
        const r = this.canvas.getBoundingClientRect();
        return [e.clientX - r.left, e.clientY - r.top];
      };
      this.canvas.addEventListener('click', (e) => {
        const n = this.hit(...pos(e));
        if (n) this.zoomTo(n);
      });
      this.canvas.addEventListener('mousemove', (e) => {
        const [x, y] = pos(e);
        const n = this.hit(x, y);
        if (!n) {
          this.tip.hidden = true;
          return;
        }
        const f = n.frame >= 0 ? this.proc.frames[n.frame] : null;
        GL.fmt.fill(this.tip,
          GL.fmt.el('div', {class: 'tip-h'}, n.name),
          f && f[1] ? GL.fmt.el('div', {class: 'muted'}, f[1]) : null,
          GL.fmt.el('div', null, GL.fmt.bytes(n.bytes) + ' — ' + GL.fmt.pct(n.bytes, this.root.bytes) + ' of all'));
        this.tip.hidden = false;
        const w = this.box.clientWidth;
        this.tip.style.left = (x + 290 > w ? Math.max(0, x - 290) : x + 14) + 'px';
        this.tip.style.top = y + 14 + 'px';
      });
      this.canvas.addEventListener('mouseleave', () => {
        this.tip.hidden = true;
      });
      window.addEventListener('resize', () => this.draw());
    }
  }

  return Flame;
})();
