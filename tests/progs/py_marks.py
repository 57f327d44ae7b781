"""py_marks.py — gpuledger from Python through ctypes: marks around a
cudaMalloc made through the (fake) runtime loaded with ctypes.
usage: python3 py_marks.py /path/to/libcudart.so.13"""
import ctypes
import sys

rt = ctypes.CDLL(sys.argv[1])
gl = ctypes.CDLL(None)  # the process's global scope: libgpuledger.so when preloaded
mark = getattr(gl, "gpuledger_mark", None)
if mark:
    mark(b"before")
p = ctypes.c_void_p()
err = rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(4096))
if mark:
    mark(b"after")
print("py_marks:", "annotated" if mark else "no gpuledger", err)
