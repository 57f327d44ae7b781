# py_pool.py — run by pyembed (tests/progs/pyembed.c) with the source tree's
# python/ on PYTHONPATH: a pool of 8 pages of 4 KiB described through
# gpuledger.Pool. The tests check these line numbers, keep them where they are.
import glalloc
import gpuledger

base = glalloc.malloc(8 * 4096)
pool = gpuledger.Pool(base, 8 * 4096, name="py pages", page_size=4096)

def take(i, used):
    pool.alloc(i * 4096, used=used)

def give(i):
    pool.free(base + i * 4096)

def cancel_path():
    take(5, 0)

for i in range(5):
    take(i, 4096 if i < 4 else 100)
give(1)
give(3)
pool.used(4 * 4096, 2000)
cancel_path()
print("py_pool:", pool)
