#!/usr/bin/env python3
"""kv_paged.py — a paged KV-cache inference engine in PyTorch, annotated
for gpuledger through gpuledger.Pool (one pool per layer's KV tensor).

What a serving engine does with its KV cache, in small:
  * one KV tensor per layer, [num_blocks, 2, block_size, kv_heads, head_dim],
    taken once at start-up; a page (block) id is the same slot in every layer;
  * a block manager with a FIFO free list (pages given back go to its end,
    as vLLM's free block queue does), so occupancy scatters over time;
  * a stream of requests (Poisson arrivals, random prompt and output
    lengths), continuous batching (admit while pages and batch slots allow,
    preempt the youngest by recomputation when a decode step finds no
    page), some requests cancelled by their client mid-decode;
  * prefill writes the prompt's K/V into pages; every decode step writes one
    token per sequence into its last page and attends over all its pages
    gathered through the block table;
  * a retry cache: a cancelled request's full prompt pages are copied into
    fresh pages (RetryCache.keep, called from Engine.cancel) so that a client
    that retries skips the prefill; entries expire after --retry-window steps.
    --leak plants the bug: entries are never expired, so the pages of
    cancelled requests that are not retried are never given back.
Every page handed out or given back, and the tokens written in each
sequence's last page, go to gpuledger (pool.alloc / pool.free / pool.used).

The engine prints its own figures (computed from its free list and token
counts, not from gpuledger) as JSON lines: every --print-every steps, at
the step with the most pages in use, and at the end, so that gpuledger's
heap report can be checked against them.

    gpuledger run -o kv.db -- python3 scripts/gpu/kv_paged.py [--leak]
    gpuledger holes --series kv.db ; gpuledger leaks kv.db
Runs on the CPU too (--device cpu, for a quick check without a GPU).
"""
import argparse
import collections
import json
import math
import os
import random
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import gpuledger  # noqa: E402


class BlockManager:
    """KV pages: a FIFO free list over block ids; every page handed out or
    given back is annotated in each layer's pool."""

    def __init__(self, kv, block_size, token_bytes):
        self.num_blocks = kv[0].shape[0]
        self.block_size = block_size
        self.token_bytes = token_bytes
        self.page_bytes = block_size * token_bytes
        self.free_list = collections.deque(range(self.num_blocks))
        self.tokens = [0] * self.num_blocks  # tokens written in each live page
        self.live = [False] * self.num_blocks
        self.pools = [gpuledger.Pool(t, name="kv_cache layer %d" % i, page_size=self.page_bytes)
                      for i, t in enumerate(kv)]
        self.peak = None  # figures when the most pages were first in use

    def num_free(self):
        return len(self.free_list)

    def allocate(self, n, tokens_each=0):
        """n pages from the head of the free list."""
        blocks = [self.free_list.popleft() for _ in range(n)]
        for b in blocks:
            self.live[b] = True
            self.tokens[b] = tokens_each
            off = b * self.page_bytes
            for pool in self.pools:
                pool.alloc(off, used=tokens_each * self.token_bytes)
        used = self.num_blocks - len(self.free_list)
        if self.peak is None or used > self.peak["pages_in_use"]:
            self.peak = self.figures()
        return blocks

    def release(self, blocks):
        for b in blocks:
            off = b * self.page_bytes
            for pool in self.pools:
                pool.free(off)
            self.live[b] = False
            self.tokens[b] = 0
            self.free_list.append(b)

    def set_tokens(self, b, n):
        """n tokens are now written in page b."""
        if self.tokens[b] != n:
            self.tokens[b] = n
            off = b * self.page_bytes
            for pool in self.pools:
                pool.used(off, n * self.token_bytes)

    def figures(self):
        """Occupancy, holes and fragmentation from the engine's own state."""
        used = sum(self.live)
        holes = largest = run = 0
        for b in range(self.num_blocks):
            if self.live[b]:
                run = 0
                continue
            if run == 0:
                holes += 1
            run += 1
            largest = max(largest, run)
        free = self.num_blocks - used
        waste = sum(self.block_size - self.tokens[b] for b in range(self.num_blocks) if self.live[b])
        return {
            "pages_in_use": used, "pages_free": free, "holes": holes, "largest_free_run": largest,
            "external_fragmentation": round(1 - largest / free, 6) if free else 0.0,
            "largest_free_ratio": round(largest / free, 6) if free else 1.0,
            "internal_fragmentation": round(waste / (used * self.block_size), 6) if used else 0.0,
        }


class Request:
    def __init__(self, rid, prompt_len, output_len, arrival, cancel_after=None):
        self.rid = rid
        self.prompt_len = prompt_len
        self.output_len = output_len
        self.arrival = arrival
        self.cancel_after = cancel_after  # decode steps before the client cancels
        self.generated = 0
        self.blocks = []
        self.cached_prefix = 0  # prompt tokens whose K/V came from the retry cache
        self.last_token = 0

    def length(self):
        return self.prompt_len + self.generated


class RetryCache:
    """Prompt pages of cancelled requests, kept for a client retry."""

    def __init__(self, bm, kv, window, leak):
        self.bm, self.kv, self.window, self.leak = bm, kv, window, leak
        self.entries = collections.OrderedDict()  # rid -> (blocks, prompt_len, expires)

    def keep(self, req, step):
        full = min(req.prompt_len, req.length()) // self.bm.block_size
        if full == 0 or self.bm.num_free() < full:
            return
        blocks = self.bm.allocate(full, tokens_each=self.bm.block_size)
        src = torch.tensor(req.blocks[:full], device=self.kv[0].device)
        dst = torch.tensor(blocks, device=self.kv[0].device)
        for layer in self.kv:
            layer.index_copy_(0, dst, layer.index_select(0, src))
        self.entries[req.rid] = (blocks, req.prompt_len, step + self.window)

    def take(self, rid):
        return self.entries.pop(rid, None)

    def expire(self, step, need=0):
        """Give back entries past their window, and the oldest while `need`
        pages are wanted. The planted bug (--leak): never."""
        if self.leak:
            return
        for rid in list(self.entries):
            blocks, _, expires = self.entries[rid]
            if expires > step and self.bm.num_free() >= need:
                break
            del self.entries[rid]
            self.bm.release(blocks)

    def drain(self):
        if not self.leak:
            for blocks, _, _ in self.entries.values():
                self.bm.release(blocks)
            self.entries.clear()


def causal_attention(q, k, v):
    """[heads, t, d] -> [heads, t, d]."""
    sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)
    if sdpa is not None:
        return sdpa(q, k, v, is_causal=True)
    t = q.shape[1]  # torch before 2.0
    s = (q @ k.transpose(1, 2)) / math.sqrt(q.shape[-1])
    s = s.masked_fill(torch.ones(t, t, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    return s.softmax(-1) @ v


class Model:
    """A small decoder: per layer a fused QKV projection, attention over the
    paged cache, an output projection."""

    def __init__(self, layers, hidden, heads, head_dim, vocab, device, dtype):
        g = torch.Generator(device="cpu").manual_seed(0)

        def w(*shape):
            return (torch.randn(*shape, generator=g) * 0.02).to(device=device, dtype=dtype)

        self.embed = w(vocab, hidden)
        self.wqkv = [w(hidden, 3 * heads * head_dim) for _ in range(layers)]
        self.wo = [w(heads * head_dim, hidden) for _ in range(layers)]
        self.head = w(hidden, vocab)
        self.heads, self.head_dim = heads, head_dim

    def prefill(self, kv, bm, req, start):
        """Prompt tokens [start, prompt_len): their K/V into the pages."""
        t = req.prompt_len - start
        if t <= 0:
            return
        dev = kv[0].device
        pos = torch.arange(start, req.prompt_len, device=dev)
        tokens = (pos * 7 + req.rid) % self.embed.shape[0]
        x = self.embed[tokens]
        blocks = torch.tensor(req.blocks, device=dev)
        slot_block = blocks[pos // bm.block_size]
        slot_off = pos % bm.block_size
        for li, layer in enumerate(kv):
            qkv = (x @ self.wqkv[li]).view(t, 3, self.heads, self.head_dim)
            q, k, v = qkv[:, 0], qkv[:, 1], qkv[:, 2]
            layer[slot_block, 0, slot_off] = k
            layer[slot_block, 1, slot_off] = v
            o = causal_attention(q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1))
            x = x + o.transpose(0, 1).reshape(t, -1) @ self.wo[li]
        req.last_token = int((x[-1] @ self.head).argmax())

    def decode(self, kv, bm, batch):
        """One token for every sequence of the batch: written into its last
        page, attention over its pages through the block table."""
        dev = kv[0].device
        n = len(batch)
        bs = bm.block_size
        lens = torch.tensor([r.length() for r in batch], device=dev)
        pos = lens - 1  # the new token's position
        max_blocks = max(len(r.blocks) for r in batch)
        table = torch.tensor([r.blocks + [0] * (max_blocks - len(r.blocks)) for r in batch], device=dev)
        rows = torch.arange(n, device=dev)
        slot_block = table[rows, pos // bs]
        slot_off = pos % bs
        tokens = torch.tensor([r.last_token for r in batch], device=dev)
        x = self.embed[tokens]
        ctx = max_blocks * bs
        mask = torch.arange(ctx, device=dev)[None, :] < lens[:, None]
        for li, layer in enumerate(kv):
            qkv = (x @ self.wqkv[li]).view(n, 3, self.heads, self.head_dim)
            q, k, v = qkv[:, 0], qkv[:, 1], qkv[:, 2]
            layer[slot_block, 0, slot_off] = k
            layer[slot_block, 1, slot_off] = v
            pages = layer[table]  # [n, max_blocks, 2, bs, heads, head_dim]
            keys = pages[:, :, 0].reshape(n, ctx, self.heads, self.head_dim)
            vals = pages[:, :, 1].reshape(n, ctx, self.heads, self.head_dim)
            scores = torch.einsum("nhd,nchd->nhc", q, keys) / math.sqrt(self.head_dim)
            scores = scores.masked_fill(~mask[:, None, :], float("-inf"))
            o = torch.einsum("nhc,nchd->nhd", scores.softmax(-1), vals)
            x = x + o.reshape(n, -1) @ self.wo[li]
        nxt = (x @ self.head).argmax(-1).tolist()
        for r, t in zip(batch, nxt):
            r.last_token = t


class Engine:
    def __init__(self, args):
        self.a = args
        dev = torch.device(args.device)
        dtype = torch.float16 if dev.type == "cuda" else torch.float32
        shape = (args.blocks, 2, args.block_size, args.heads, args.head_dim)
        self.kv = [torch.zeros(shape, device=dev, dtype=dtype) for _ in range(args.layers)]
        token_bytes = 2 * args.heads * args.head_dim * self.kv[0].element_size()
        self.bm = BlockManager(self.kv, args.block_size, token_bytes)
        self.model = Model(args.layers, args.hidden, args.heads, args.head_dim, 1000, dev, dtype)
        self.cache = RetryCache(self.bm, self.kv, args.retry_window, args.leak)
        self.rng = random.Random(args.seed)
        self.waiting = collections.deque()
        self.running = []
        self.step_no = 0
        self.next_rid = 0
        self.stats = collections.Counter()

    def blocks_for(self, tokens):
        return -(-tokens // self.bm.block_size)

    def arrive(self):
        a, rng = self.a, self.rng
        k = 0  # Poisson(rate) arrivals this step
        p, u = math.exp(-a.rate), rng.random()
        while u > p:
            k += 1
            u *= rng.random()
        for _ in range(k):
            cancel = rng.randint(1, a.max_output) if rng.random() < a.cancel_prob else None
            req = Request(self.next_rid, rng.randint(a.min_prompt, a.max_prompt),
                          rng.randint(a.min_output, a.max_output), self.step_no, cancel)
            self.next_rid += 1
            self.waiting.append(req)
            self.stats["arrived"] += 1

    def admit(self):
        """Admit waiting requests while batch slots and pages allow (one free
        page per running sequence kept back for its next decode)."""
        while self.waiting and len(self.running) < self.a.max_batch:
            req = self.waiting[0]
            cached = self.cache.take(req.rid)
            need = self.blocks_for(req.prompt_len + 1) - (len(cached[0]) if cached else 0)
            reserve = len(self.running)
            if self.bm.num_free() < need + reserve:
                self.cache.expire(self.step_no, need + reserve)
            if self.bm.num_free() < need + reserve:
                if cached:
                    self.cache.entries[req.rid] = cached
                    self.cache.entries.move_to_end(req.rid, last=False)
                if not self.running:  # it will never fit: turn it away
                    self.waiting.popleft()
                    self.stats["rejected"] += 1
                    continue
                return
            self.waiting.popleft()
            start = 0
            if cached:
                req.blocks = list(cached[0])
                start = req.cached_prefix = len(cached[0]) * self.bm.block_size
                self.stats["retried from cache"] += 1
            fresh = self.bm.allocate(need)
            req.blocks += fresh
            self.model.prefill(self.kv, self.bm, req, start)
            self.note_tokens(req, every_page=True)
            self.running.append(req)
            self.stats["admitted"] += 1

    def note_tokens(self, req, every_page=False):
        """Tokens written into the request's pages: all full but the last
        (after a decode step only the last two can have changed)."""
        n = req.length() - (len(req.blocks) - 1) * self.bm.block_size
        for b in req.blocks[:-1] if every_page else req.blocks[-2:-1]:
            self.bm.set_tokens(b, self.bm.block_size)
        self.bm.set_tokens(req.blocks[-1], max(0, min(self.bm.block_size, n)))

    def preempt(self):
        """No page for a decode step: the youngest running request gives its
        pages back and waits to be recomputed."""
        victim = max(self.running, key=lambda r: r.arrival)
        self.running.remove(victim)
        self.bm.release(victim.blocks)
        victim.blocks, victim.generated, victim.cached_prefix = [], 0, 0
        self.waiting.appendleft(victim)
        self.stats["preempted"] += 1

    def cancel(self, req):
        """The client went away: keep its prompt pages for a retry, give the
        rest back."""
        self.running.remove(req)
        self.cache.keep(req, self.step_no)
        self.bm.release(req.blocks)
        req.blocks = []
        self.stats["cancelled"] += 1
        if self.rng.random() < self.a.retry_prob:  # the client comes back soon
            again = Request(req.rid, req.prompt_len, req.output_len, self.step_no)
            self.waiting.append(again)

    def finish(self, req):
        self.running.remove(req)
        self.bm.release(req.blocks)
        req.blocks = []
        self.stats["finished"] += 1

    def step(self):
        self.cache.expire(self.step_no)
        for req in [r for r in self.running if r.cancel_after is not None and r.generated >= r.cancel_after]:
            self.cancel(req)
        self.admit()
        # a page for every sequence whose next token starts a new page
        for req in sorted(self.running, key=lambda r: r.arrival):
            if req not in self.running:
                continue
            if req.length() + 1 > len(req.blocks) * self.bm.block_size:
                while self.bm.num_free() == 0 and len(self.running) > 1:
                    self.cache.expire(self.step_no, 1)
                    if self.bm.num_free() == 0:
                        self.preempt()
                if req not in self.running:
                    continue
                if self.bm.num_free() == 0:
                    self.finish(req)  # alone and still no page: out of KV cache
                    self.stats["rejected"] += 1
                    continue
                req.blocks += self.bm.allocate(1)
        if self.running:
            for r in self.running:
                r.generated += 1
            self.model.decode(self.kv, self.bm, self.running)
            for r in self.running:
                self.note_tokens(r)
        for req in [r for r in self.running if r.generated >= r.output_len]:
            self.finish(req)
        self.step_no += 1

    def line(self, what):
        d = dict(self.bm.figures(), step=self.step_no, what=what, running=len(self.running),
                 waiting=len(self.waiting), retry_cache_pages=sum(len(e[0]) for e in self.cache.entries.values()))
        print("kv_paged " + json.dumps(d), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--device", default="cuda")
    p.add_argument("--steps", type=int, default=3000, help="steps with arrivals (then the engine drains)")
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--head-dim", type=int, default=128)
    p.add_argument("--blocks", type=int, default=1536, help="KV pages per layer")
    p.add_argument("--block-size", type=int, default=16, help="tokens per page")
    p.add_argument("--max-batch", type=int, default=64)
    p.add_argument("--rate", type=float, default=0.4, help="mean arrivals per step")
    p.add_argument("--min-prompt", type=int, default=32)
    p.add_argument("--max-prompt", type=int, default=512)
    p.add_argument("--min-output", type=int, default=16)
    p.add_argument("--max-output", type=int, default=256)
    p.add_argument("--cancel-prob", type=float, default=0.05)
    p.add_argument("--retry-prob", type=float, default=0.3)
    p.add_argument("--retry-window", type=int, default=50, help="steps a cancelled prompt is kept")
    p.add_argument("--leak", action="store_true", help="the retry cache never expires its entries")
    p.add_argument("--print-every", type=int, default=250)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    if a.device == "cuda" and not torch.cuda.is_available():
        sys.exit("kv_paged: no CUDA device (use --device cpu for a check on the CPU)")
    e = Engine(a)
    t0 = time.perf_counter()
    while e.step_no < a.steps:
        e.arrive()
        e.step()
        if e.step_no % a.print_every == 0:
            e.line("progress")
    while e.running or e.waiting:  # no more arrivals: drain
        e.step()
    e.cache.drain()
    if a.device == "cuda":
        torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    print("kv_paged " + json.dumps(dict(e.bm.peak or e.bm.figures(), what="peak")), flush=True)
    e.line("end")
    kv_bytes = sum(t.numel() * t.element_size() for t in e.kv)
    reserved = torch.cuda.max_memory_reserved() if a.device == "cuda" else 0
    print("kv_paged " + json.dumps(dict(what="summary", steps=e.step_no, seconds=round(dt, 3),
                                        ms_per_step=round(dt * 1e3 / e.step_no, 3), leak=a.leak,
                                        gpuledger=gpuledger.pool._on, layers=a.layers, kv_bytes=kv_bytes,
                                        max_reserved=reserved, **e.stats)), flush=True)


if __name__ == "__main__":
    main()
