"""train_leak.py — an unmodified training loop on the stand-in torch
(tests/pystub): no gpuledger call. Each of its 6 steps (forward, backward,
AdamW's step) also leaks a 1 MiB workspace of the fake CUDA runtime, in
leak_workspace. check_plugin.py runs it under `gpuledger run` and expects
`gpuledger leaks --steps` to take its steps from the optimizer and name
leak_workspace's line."""
import ctypes
import os

import torch

_rt = ctypes.CDLL(os.environ["GL_FAKE_CUDART"])
KEPT = []


def leak_workspace():
    p = ctypes.c_void_p()
    _rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(1 << 20))
    KEPT.append(p)


model = torch.nn.Linear(64, 64)
opt = torch.optim.AdamW(model.parameters())
for step in range(6):
    loss = model(torch.empty(4096)).sum()
    loss.backward()
    opt.step()
    leak_workspace()
print("train_leak: 6 steps")
