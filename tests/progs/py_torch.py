"""py_torch.py — an unmodified PyTorch-style job on the stand-in torch
(tests/pystub/torch, on PYTHONPATH): three training steps of a two-layer
model with AdamW, then a generation loop whose model returns a KV cache,
then a tensor used on a second stream. No gpuledger call: run under
`gpuledger run` by tests/integration/test_torch.c, which compares the
database with what this prints: one line per category (parameters,
buffers, gradients, optimizer state, KV cache) of "address:bytes" of the
tensors live at the end, by address."""
import os
import sys

import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(64, 64)
        self.l2 = torch.nn.Linear(64, 32)
        self.register_buffer("mask", torch.empty(1024))

    def forward(self, x):
        return self.l2(self.l1(x))


class Layer:
    def __init__(self):
        self.keys, self.values = None, None


class Cache:
    """Like a Hugging Face DynamicCache: layers whose keys/values grow
    (a new tensor each step, as torch.cat makes)."""

    def __init__(self, n):
        self.layers = [Layer() for _ in range(n)]


class Out:
    def __init__(self, cache):
        self.past_key_values = cache


class Decoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(16, 16)
        self.cache = Cache(2)

    def forward(self, tokens):
        for layer in self.cache.layers:
            n = (layer.keys.nbytes if layer.keys is not None else 0) + tokens * 128
            layer.keys, layer.values = torch.empty(n), torch.empty(n)
        return Out(self.cache)


x = torch.empty(256)
kept = []  # the planted leak: a tensor kept every step
model = Net()
opt = torch.optim.AdamW(model.parameters())
for step in range(3):
    out = model(x)
    loss = out.sum()
    loss.backward()
    opt.step()
    if step < 2:
        opt.zero_grad()
    kept.append(torch.empty(512))  # LEAK

dec = Decoder()
for _ in range(3):
    dec(4)


def line(category, tensors):
    pairs = sorted((t.data_ptr(), t.nbytes) for t in tensors)
    print(category, " ".join("%d:%d" % p for p in pairs))


line("parameters", list(model.parameters()) + list(dec.parameters()))
line("buffers", model.buffers())
line("gradients", [p.grad for p in model.parameters()])
line("optimizer_state", [v for s in opt.state.values() for v in s.values() if isinstance(v, torch.Tensor)])
line("kv_cache", [t for layer in dec.cache.layers for t in (layer.keys, layer.values)])
sys.stdout.flush()
os._exit(0)  # as a job killed at its end would: what is live stays live in the database
