"""py_stack.py — cudaMalloc through ctypes from nested Python functions, for
the multi-version Python frames test. The tests check these line numbers.
usage: python3 py_stack.py /path/to/libcudart.so.13"""
import ctypes
import sys

rt = ctypes.CDLL(sys.argv[1])


def leaf(n):
    p = ctypes.c_void_p()
    return rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(n))


class Model:
    def forward(self, n):
        return leaf(n)


def outer():
    return Model().forward(8192)


print("py_stack:", outer())
