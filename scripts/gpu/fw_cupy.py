"""fw_cupy.py — a CuPy job (scripts/gpu-frameworks.sh): arrays made and freed,
the pool keeping what they freed. Prints pool.used_bytes() and
pool.total_bytes() where its arrays hold the most at once (no reduction runs
then: a reduction's workspace comes from the pool and is gone before Python
could read used_bytes()), at a mark, and at the end (all arrays freed)."""
import cupy

import gpuledger

pool = cupy.get_default_memory_pool()
keep = [cupy.ones(n, dtype=cupy.float32) for n in (1 << 20, 3 << 20, 5 << 20, 1000, 77)]
tmp = [cupy.zeros(n, dtype=cupy.uint8) for n in (1 << 24, 1 << 12)]
del tmp
a = cupy.arange(1 << 22, dtype=cupy.float64)  # keep + a: the most live at once
cupy.cuda.Device().synchronize()
print("CUPY peak used=%d total=%d" % (pool.used_bytes(), pool.total_bytes()), flush=True)
del a
x = cupy.arange(1 << 10, dtype=cupy.float64).sum()
cupy.cuda.Device().synchronize()
gpuledger.mark("cupy middle")
print("CUPY middle used=%d total=%d" % (pool.used_bytes(), pool.total_bytes()), flush=True)
del keep, x
print("CUPY end used=%d total=%d" % (pool.used_bytes(), pool.total_bytes()), flush=True)
