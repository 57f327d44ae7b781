"""torch.nn of the stand-in (tests only): Module, Parameter, Linear (and the
cuBLAS workspace its first forward makes)."""
import weakref

import torch

from .modules.module import Module  # noqa: F401


class Parameter(torch.Tensor):
    _all = weakref.WeakSet()

    def __init__(self, nbytes):
        super().__init__(nbytes)
        self.requires_grad = True
        Parameter._all.add(self)

    def __hash__(self):
        return id(self)


_workspace = []


def setWorkspaceForHandle():  # noqa: N802 - named as PyTorch's cuBLAS workspace call (a native frame there)
    """The cuBLAS workspace of the stand-in: 8 KiB made at the first
    matrix product (wherever that is) and kept."""
    if not _workspace:
        _workspace.append(torch.Tensor(8192))


class Linear(Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = Parameter(4 * n_in * n_out)
        self.bias = Parameter(4 * n_out)
        self.n_out = n_out

    def forward(self, x):
        setWorkspaceForHandle()
        tmp = torch.Tensor(4 * self.n_out)  # made and freed in forward
        y = torch.Tensor(4 * self.n_out)
        torch._tape.append(y)  # saved for backward
        del tmp
        return y
