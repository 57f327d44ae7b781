"""py_graph_pool.py — tensors in a private pool (a CUDA graph's pool, as
torch.cuda.graph_pool_handle() and MemPool make) on the stand-in torch,
kept to the end as a captured graph keeps its memory; and one in the
default pool, freed. Run under `gpuledger run` by tests/integration/test_torch.c."""
import os

import torch

pool = torch.cuda.MemPool()
with torch.cuda.use_mem_pool(pool):
    static = [torch.empty(4096), torch.empty(1000)]  # the graph's memory
x = torch.empty(8192)
del x
print("pool", pool.id[0], pool.id[1], flush=True)
os._exit(0)
