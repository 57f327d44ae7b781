"""py_graph_pool.py — tensors in two private pools (as torch.cuda.MemPool
and a CUDA graph's pool make them) on the stand-in torch, made by the same
line and kept to the end as a captured graph keeps its memory; and one in
the default pool, freed. Run under `gpuledger run` by
tests/integration/test_torch.c, and recorded as the golden database
tests/golden/db/torch-pools.db (scripts/update-goldens.sh --record): one
category and one ledger row per pool, (0, 1) and (0, 2)."""
import os

import torch


def fill(pool, sizes):
    with torch.cuda.use_mem_pool(pool):
        return [torch.empty(n) for n in sizes]  # one line, both pools


first, second = torch.cuda.MemPool(), torch.cuda.MemPool()
kept = fill(first, [4096, 1000]) + fill(second, [2048])  # the graphs' memory
x = torch.empty(8192)
del x
print("pools", first.id[0], first.id[1], second.id[0], second.id[1], flush=True)
os._exit(0)
