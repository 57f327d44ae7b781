"""torch_train.py — a small GPT-style training loop for the real-GPU checks.

Prints one JSON line with PyTorch's own memory counters and the median step
time, so gpu-check.sh can compare them with gpuledger's database.
Usage: python3 torch_train.py [--steps N] [--leak] [--lora-leak] [--marks] [--dim D]
"""
import argparse
import json
import time

import torch
import torch.nn as nn

LEAKED = []  # the planted leak: tensors appended every step
ADAPTERS = []  # the LoRA-style planted leak: adapters loaded every step, never unloaded


def load_adapter(model, rank=8):
    """A LoRA adapter for every Linear of the model (A: rank x in, B: out x
    rank), loaded the way a fine-tuning pipeline loads one per task."""
    dev = next(model.parameters()).device
    adapter = {}
    for name, mod in model.named_modules():
        if isinstance(mod, nn.Linear):
            a = torch.randn(rank, mod.in_features, device=dev) * 0.01
            b = torch.zeros(mod.out_features, rank, device=dev)
            adapter[name] = (a, b)
    return adapter


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        h = self.ln1(x)
        mask = torch.triu(torch.ones(x.shape[1], x.shape[1], device=x.device, dtype=torch.bool), 1)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    def __init__(self, vocab=8192, d=512, layers=6, heads=8, ctx=256):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.tok(idx) + self.pos(pos)
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--leak", action="store_true", help="append a 1 MiB tensor to a global list every step")
    ap.add_argument("--lora-leak", action="store_true",
                    help="load a LoRA adapter every step and keep it (never unloaded)")
    ap.add_argument("--marks", action="store_true", help="call gpuledger_mark at the end of each step (ctypes)")
    ap.add_argument("--ab", action="store_true",
                    help="under gpuledger: alternate steps with recording on and off (gpuledger_set_recording) and "
                         "report the median step of each (in-process A/B)")
    ap.add_argument("--ab-hooks", action="store_true",
                    help="under gpuledger: alternate steps with the gpuledger package's PyTorch hooks doing their "
                         "work or not (recording on throughout) and report the median step of each")
    args = ap.parse_args()
    import ctypes
    mark = getattr(ctypes.CDLL(None), "gpuledger_mark", None) if args.marks else None
    set_recording = getattr(ctypes.CDLL(None), "gpuledger_set_recording", None) if args.ab else None
    if args.ab and set_recording is None:
        raise SystemExit("torch_train.py --ab: run it under gpuledger run")
    if args.ab_hooks:
        try:
            from gpuledger import torch_hooks
        except ImportError:
            raise SystemExit("torch_train.py --ab-hooks: run it under gpuledger run (the gpuledger package)")
        set_recording = lambda on: torch_hooks.set_enabled(on)  # noqa: E731
    ab_times = {0: [], 1: []}
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = TinyGPT(d=args.dim).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    times = []
    for step in range(args.steps):
        x = torch.randint(0, 8192, (args.batch, 256), device=dev)
        torch.cuda.synchronize()
        if set_recording:
            set_recording(step % 2)
        t0 = time.perf_counter()
        logits = model(x)
        loss = nn.functional.cross_entropy(logits.view(-1, logits.shape[-1]), x.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if args.leak:
            LEAKED.append(torch.empty(1 << 18, device=dev))  # 1 MiB per step
        if args.lora_leak:
            ADAPTERS.append(load_adapter(model))  # the bug: the previous adapter is never unloaded
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        if set_recording and step >= 4:  # the first steps warm up (cuBLAS, the pool)
            ab_times[step % 2].append(times[-1])
        if mark:
            mark(f"step {step}".encode())
    times.sort()
    extra = {}
    if set_recording:
        set_recording(1)
        off, on = sorted(ab_times[0]), sorted(ab_times[1])
        extra = {"ab_what": "hooks" if args.ab_hooks else "recording", "ab_off_ms": 1000 * off[len(off) // 2], "ab_on_ms": 1000 * on[len(on) // 2],
                 "ab_added_pct": 100 * (on[len(on) // 2] / off[len(off) // 2] - 1)}
    print(json.dumps({**extra,
        "max_memory_allocated": torch.cuda.max_memory_allocated(),
        "max_memory_reserved": torch.cuda.max_memory_reserved(),
        "memory_allocated_end": torch.cuda.memory_allocated(),
        "memory_reserved_end": torch.cuda.memory_reserved(),
        "median_step_ms": 1000 * times[len(times) // 2],
        "steps": args.steps,
    }))


if __name__ == "__main__":
    main()
