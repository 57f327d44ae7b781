"""py_sigint.py — Ctrl-C as a Python program sees it: its SIGINT handler is
Python's own, KeyboardInterrupt is raised, except and finally run; then an
uncaught one ends the process as CPython does (exit by SIGINT).
usage: python3 py_sigint.py /path/to/libcudart.so.13"""
import ctypes
import os
import signal
import sys

rt = ctypes.CDLL(sys.argv[1])
p = ctypes.c_void_p()
rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(1 << 20))
print("default_int_handler:", signal.getsignal(signal.SIGINT) is signal.default_int_handler)
try:
    try:
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):
            pass
        print("not interrupted")
    except KeyboardInterrupt:
        print("KeyboardInterrupt caught")
finally:
    print("finally ran")
sys.stdout.flush()
os.kill(os.getpid(), signal.SIGINT)
for _ in range(1000):
    pass
