# py_golden.py — run by pyembed (tests/progs/pyembed.c) to record the Python
# golden database (tests/golden/db/python.db): allocations under Python
# frames, with and without the GIL, on a Python thread and on a C thread.
import threading

import glalloc


def leaf(n):
    return glalloc.alloc(n)


class Model:
    def forward(self, n):
        return leaf(n)

    def backward(self, n):
        glalloc.alloc_nogil(n)


def train():
    m = Model()
    for step in range(3):
        m.forward(1 << 20)
        m.backward(1 << 19)
        glalloc.loop(4)


train()
t = threading.Thread(target=lambda: glalloc.alloc(3000), name="worker")
t.start()
t.join()
glalloc.alloc_cthread(4000)
