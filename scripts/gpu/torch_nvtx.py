"""torch_nvtx.py — torch.cuda.nvtx ranges and marks around allocations, to
check that they reach gpuledger's annotations table (NVTX injection)."""
import torch

dev = torch.device("cuda")
keep = []
for step in range(4):
    torch.cuda.nvtx.range_push("step")
    torch.cuda.nvtx.range_push("forward")
    x = torch.empty(1 << 20, device=dev)
    torch.cuda.nvtx.range_pop()
    keep.append(x)
    torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.mark(f"step {step}")
torch.cuda.synchronize()
print("torch_nvtx: done")
