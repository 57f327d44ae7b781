"""torch_profiler_check.py — does torch.profiler still get its CUDA events?

Runs a few matrix products under torch.profiler with CUDA activities and
prints one JSON line: how many CUDA kernel events the profiler recorded.
Used by gpu-check.sh bare, under gpuledger with CUPTI, and with --no-cupti.
"""
import json

import torch
from torch.profiler import ProfilerActivity, profile

x = torch.randn(2048, 2048, device="cuda")
torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    for _ in range(5):
        y = x @ x
    torch.cuda.synchronize()
events = prof.events()
cuda = [e for e in events if getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA]
print(json.dumps({"cuda_events": len(cuda), "all_events": len(events)}))
