"""cases_device.py — tests pytest runs under `gpuledger run` without torch
(check_plugin.py checks every outcome and failure message): the limits
count CUDA allocations, here of the fake runtime called through ctypes."""
import ctypes
import os

import pytest

_rt = ctypes.CDLL(os.environ["GL_FAKE_CUDART"])
KEPT = []


def malloc(nbytes):
    p = ctypes.c_void_p()
    assert _rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(nbytes)) == 0
    return p.value


def free(p):
    _rt.cudaFree(ctypes.c_void_p(p))


def workspace(nbytes):
    KEPT.append(malloc(nbytes))


@pytest.mark.gpu_limit_leaks("1 MiB")
def test_leaky_workspace():
    workspace(2 << 20)
    workspace(1 << 20)
    free(malloc(4 << 20))


@pytest.mark.gpu_limit_memory("1 MiB")
def test_peak():
    free(malloc(4 << 20))


@pytest.mark.gpu_limit_leaks(0)
@pytest.mark.gpu_limit_memory("8 MiB")
def test_within_both():
    free(malloc(4 << 20))
