# py_cupy.py — a CuPy job (the stand-in of tests/pystub) under gpuledger run:
# its pool keeps what the arrays free. The tests check the line marked
# "# A" and the figures printed; keep them as they are.
import cupy

MiB = 1 << 20
pool = cupy.get_default_memory_pool()
a = cupy.empty(3 * MiB)  # A
b = cupy.empty(1000)
print("peak used=%d total=%d" % (pool.used_bytes(), pool.total_bytes()))
del a
c = cupy.empty(MiB)  # inside a's chunk: 2 MiB free after it
d = cupy.empty(100)
print("later used=%d total=%d" % (pool.used_bytes(), pool.total_bytes()))
del b, c, d
print("end used=%d total=%d" % (pool.used_bytes(), pool.total_bytes()))
