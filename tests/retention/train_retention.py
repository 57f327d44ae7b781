"""train_retention.py — an unmodified training loop on the stand-in torch
(tests/pystub) that keeps each step's 8 MiB "logits" in a global list until
the device (FAKECUDA_MEM_BYTES) is full: no gpuledger call. check_e2e.py runs
it under `gpuledger run` and expects retention paths from the out-of-memory,
from the steps that grew and from the exit, and `gpuledger leaks` to show
them under the chain that made the logits."""
import torch

logits_kept = []
model = torch.nn.Linear(64, 64)
opt = torch.optim.AdamW(model.parameters())


def train_step():
    out = model(torch.empty(4096))
    logits = torch.empty(8 << 20)
    logits_kept.append(logits)
    out.sum().backward()
    opt.step()


steps = 0
try:
    for _ in range(100):
        train_step()
        steps += 1
except torch.cuda.OutOfMemoryError:
    print("train_retention: out of memory after %d steps" % steps)
