"""cases_torch.py — tests pytest runs under `gpuledger run --torch blocks`
on the stand-in torch of tests/pystub (check_plugin.py checks every outcome
and failure message): the limits count the stand-in allocator's blocks."""
import pytest
import torch

KEPT = []
CACHE = []


def keep(nbytes):
    KEPT.append(torch.empty(nbytes))


@pytest.mark.gpu_limit_leaks("1 MiB")
def test_clean():
    t = torch.empty(3 << 20)
    del t


@pytest.mark.gpu_limit_leaks("1 MiB")
def test_leaky():
    keep(3 << 20)


@pytest.mark.gpu_limit_memory("2 MiB")
def test_peak_over():
    a = torch.empty(1 << 20)
    b = torch.empty(2 << 20)
    del a, b


@pytest.mark.gpu_limit_memory("4 MiB")
def test_peak_under():
    a = torch.empty(3 << 20)
    del a


@pytest.mark.gpu_limit_leaks("1 MiB", warmups=1)
def test_cache_filled_once():
    if not CACHE:
        CACHE.append(torch.empty(8 << 20))


@pytest.mark.gpu_limit_leaks("1 MiB")
def test_fails_by_itself():
    keep(2 << 20)
    assert False, "its own failure"


def test_unmarked():
    keep(5 << 20)
