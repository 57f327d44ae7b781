"""torch_pools.py — private pools on a real GPU, run under gpuledger by
scripts/gpu-pools.sh: two torch.cuda.MemPool pools filled by the same line,
and a CUDA graph's own pool (a captured forward whose outputs stay alive),
plus a tensor in the default pool, freed. Prints each pool's id and the bytes
of its live blocks from the pool's own snapshot, as JSON on the last line:
{"pools": [{"id": [a, b], "bytes": N}, ...]}, so the script can compare the
report's `private_pool (a, b)` rows with PyTorch's figures."""
import json
import os

import torch


def fill(pool, sizes):
    with torch.cuda.use_mem_pool(pool):
        return [torch.empty(n, dtype=torch.uint8, device="cuda") for n in sizes]  # one line, both pools


def live_bytes(snapshot):
    return sum(b["size"] for seg in snapshot for b in seg["blocks"] if b["state"] == "active_allocated")


first, second = torch.cuda.MemPool(), torch.cuda.MemPool()
kept = fill(first, [4 << 20, 1 << 20]) + fill(second, [3 << 20])
x = torch.empty(8 << 20, dtype=torch.uint8, device="cuda")
del x

lin = torch.nn.Linear(1024, 1024).cuda()
inp = torch.randn(256, 1024, device="cuda")
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(3):
        lin(inp)
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    out = lin(inp)  # the graph's pool keeps this
g.replay()
torch.cuda.synchronize()

pools = [{"id": list(first.id), "bytes": live_bytes(first.snapshot())},
         {"id": list(second.id), "bytes": live_bytes(second.snapshot())}]
graph_id = list(g.pool())
graph_bytes = sum(b["size"] for seg in torch.cuda.memory_snapshot() if list(seg.get("segment_pool_id", ())) == graph_id
                  for b in seg["blocks"] if b["state"] == "active_allocated")
pools.append({"id": graph_id, "bytes": graph_bytes, "graph": True})
print(json.dumps({"pools": pools}), flush=True)
os._exit(0)
