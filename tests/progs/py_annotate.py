"""py_annotate.py — the gpuledger package's annotations (mark, step, range
as a block and as a decorator, paused, recording) around cudaMalloc calls
made through the (fake) runtime loaded with ctypes; each allocation's size
says where it was made (tests/integration/test_record.c reads them back).
Prints what the package answered, one line each.
usage: python3 [-X gpuledger_ctypes] py_annotate.py /path/to/libcudart.so.13
(-X gpuledger_ctypes: the package calls the library through ctypes rather
than through the builtins the library makes)"""
import ctypes
import enum
import sys
import threading
import weakref

import gpuledger

rt = ctypes.CDLL(sys.argv[1])


def alloc(size):
    p = ctypes.c_void_p()
    rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(size))
    return p


print("builtins: %s, recording: %s" % (gpuledger._lib.builtins, gpuledger.recording()))
gpuledger.mark("before")
gpuledger.step()
gpuledger.step()
gpuledger.step("named step")
gpuledger.mark(b"bytes")
gpuledger.mark(7)
gpuledger.mark("bad \udcff utf-8")
alloc(1000)  # no range
with gpuledger.range("outer"):
    alloc(1001)
    with gpuledger.range("inner"):
        alloc(1002)
    with gpuledger.range("outer"):  # the same label again, re-entered
        alloc(1003)
    alloc(1004)


@gpuledger.range("decorated")
def load(size):
    """a docstring"""
    alloc(size)
    return size + 1


print("decorated:", load(1005), load.__name__, load.__doc__)
print("same object:", gpuledger.range("outer") is gpuledger.range("outer"))
with gpuledger.range(["unhashable"]):
    alloc(1006)


def worker():
    with gpuledger.range("thread"):
        alloc(1007)


with gpuledger.range("main"):
    t = threading.Thread(target=worker)
    t.start()
    t.join()
    alloc(1008)
try:
    with gpuledger.range("raised"):
        raise KeyError("x")
except KeyError:
    pass
alloc(1009)  # after the exception: no range
with gpuledger.paused():
    alloc(1010)  # not recorded
    inside = gpuledger.recording()
    with gpuledger.paused():
        alloc(1011)
    alloc(1012)
print("paused: recording inside %s, after %s" % (inside, gpuledger.recording()))
alloc(1013)


class Phase(str, enum.Enum):  # a str subclass: its label is str(label), as for any other object
    FWD = "fwd"


gpuledger.mark(Phase.FWD)
with gpuledger.range(Phase.FWD):
    alloc(1014)


class Model:
    def __str__(self):
        return "model"


model = Model()
alive = weakref.ref(model)
with gpuledger.range(model):
    alloc(1015)
del model
print("a range keeps its label object: %s" % (alive() is not None))
