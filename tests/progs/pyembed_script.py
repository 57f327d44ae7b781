# pyembed_script.py — run by pyembed (tests/progs/pyembed.c); the tests
# check these line numbers, keep them where they are.
import glalloc

def leaf(n):
    return glalloc.alloc(n)

class Model:
    def forward(self, n):
        return leaf(n)

def outer():
    m = Model()
    m.forward(1000)
    glalloc.alloc_nogil(2000)

outer()
import threading
t = threading.Thread(target=lambda: glalloc.alloc(3000), name="worker")
t.start()
t.join()
glalloc.alloc_cthread(4000)

def hot(n):
    return glalloc.loop(n)

hot(100)  # warm-up: first sight of the code objects
print("pyembed: host allocator calls in 10000 pairs:", hot(10000))
