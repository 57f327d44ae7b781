"""py_closure.py — the same three training steps on the stand-in torch
(tests/pystub/torch) two ways: `eager` (forward, backward, step()) and
`closure` (step(closure), the closure running forward and backward inside
the optimizer's step, as LBFGS and Lightning do). No gpuledger call: run
under `gpuledger run` by tests/integration/test_torch.c, which checks that
both get the same categories."""
import os
import sys

import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(64, 64)
        self.l2 = torch.nn.Linear(64, 32)

    def forward(self, x):
        torch._tape.append(torch.empty(1 << 20))  # an activation: saved for backward
        tmp = torch.empty(1 << 19)  # a temporary of the forward
        del tmp
        return self.l2(self.l1(x))


x = torch.empty(256)
model = Net()
opt = torch.optim.AdamW(model.parameters())
losses = []  # each step's loss, kept


def closure():
    opt.zero_grad()
    loss = model(x).sum()
    loss.backward()
    return loss


for step in range(3):
    if sys.argv[1] == "closure":
        losses.append(opt.step(closure))
    else:
        losses.append(closure())
        opt.step()
print("losses", len(losses))
sys.stdout.flush()
os._exit(0)
