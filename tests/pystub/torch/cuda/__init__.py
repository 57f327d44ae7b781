"""torch.cuda of the stand-in (tests only): live tensor bytes, the
out-of-memory observers (torch._C._cuda_attach_out_of_memory_observer), and
private memory pools, as a CUDA graph's (graph_pool_handle) or
torch.cuda.MemPool's, with use_mem_pool: the allocator's trace entries
inside carry the pool's id (user-made pools are (0, N), as PyTorch numbers
them)."""
import contextlib
import itertools

import torch

from . import memory  # noqa: F401
from torch import OutOfMemoryError  # noqa: F401

_uids = itertools.count(1)


def memory_allocated(device=None):
    return torch._live[0]


def graph_pool_handle():
    return (0, next(_uids))


class MemPool:
    def __init__(self):
        self.id = graph_pool_handle()


@contextlib.contextmanager
def use_mem_pool(pool):
    torch._c10.stub_set_pool(*pool.id)
    try:
        yield
    finally:
        torch._c10.stub_set_pool(0, 0)
