"""retention_oom.py — for scripts/gpu-retention.sh (real torch, run under
`gpuledger run --torch blocks`): a training loop that keeps each step's
logits in a global list until the device is full (a per-process memory
fraction makes that quick), then the retention finder's own cost, measured
in this process as the hooks would run it. Prints one JSON line last."""
import json
import os
import statistics
import time

import torch

LIMIT = float(os.environ.get("RET_LIMIT_GIB", "6"))
torch.cuda.set_per_process_memory_fraction(LIMIT * (1 << 30) / torch.cuda.get_device_properties(0).total_memory)

try:
    from transformers import GPT2Config, GPT2LMHeadModel
    model = GPT2LMHeadModel(GPT2Config(n_layer=4, n_embd=256, n_head=4, vocab_size=32000, n_positions=512)).cuda()
    kind = "gpt2 (transformers)"
except Exception:  # noqa: BLE001 - no transformers: a plain stack
    model = None
    kind = "nn.Sequential"
if model is None:
    model = torch.nn.Sequential(torch.nn.Embedding(32000, 256), torch.nn.Linear(256, 32000)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

logits_kept = []


def train_step(ids):
    out = model(ids)
    logits = out.logits if hasattr(out, "logits") else out
    logits_kept.append(logits)  # the leak: each step's logits (and their graph) kept
    loss = logits.float().mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


ids = torch.randint(0, 32000, (8, 512), device="cuda")
steps, oom = 0, False
t0 = time.perf_counter()
try:
    for _ in range(200):
        train_step(ids)
        steps += 1
except torch.cuda.OutOfMemoryError:
    oom = True
run_s = time.perf_counter() - t0
print("retention_oom: %s, out of memory: %s after %d steps (%.1f s)" % (kind, oom, steps, run_s), flush=True)

out = {"model": kind, "oom": oom, "steps": steps, "kept": len(logits_kept)}
try:
    from gpuledger import retention, retention_torch as rt
    if rt._st.tensors is None:
        rt._st.tensors = rt.torch_tensors(torch)
    for name, moment in (("step", rt.MOMENT_STEP), ("oom", rt.MOMENT_OOM)):
        ms, res = [], None
        for _ in range(21):
            m, res = rt.cost(moment)
            ms.append(m)
        out[name + "_ms_median"] = round(statistics.median(ms), 3)
        out[name + "_ms_max"] = round(max(ms), 3)
        out[name + "_visited"] = res.visited
        out[name + "_complete"] = res.complete
        out[name + "_cut"] = res.cut
        out[name + "_found"] = len(res.found)
    # an unbounded search: how many objects the program's graph holds
    res = retention.find(rt._st.tensors, budget_s=60, max_objects=10 ** 8)
    out["unbounded_visited"], out["unbounded_ms"] = res.visited, round(res.elapsed_us / 1000, 1)
except ImportError as e:
    out["error"] = "not under gpuledger run (%s)" % e
print(json.dumps(out), flush=True)
