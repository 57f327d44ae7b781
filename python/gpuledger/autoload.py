"""autoload.py — what `gpuledger run` does inside a Python job, with no
change to the job's code: the launcher puts gpuledger/_boot on PYTHONPATH,
whose sitecustomize calls install(); when the job imports torch, the
allocator shim is built (once, cached) and attached (GPULEDGER_TORCH=blocks,
the launcher's --torch) and the identity hooks are registered (unless
GPULEDGER_TORCH_HOOKS=0), and so are the retention finder's (retention_torch.py,
unless GPULEDGER_RETENTION=0); when it imports cupy, a memory hook gives its
pool's blocks (_cupy.py, unless GPULEDGER_CUPY_HOOK=0); when it imports jax,
its allocator's statistics are sampled at marks, steps and exit (_jax.py,
unless GPULEDGER_JAX_STATS=0). Nothing here may break the job: any failure
is one line on stderr.
"""
import os
import sys

from . import _lib


def _say(msg):
    sys.stderr.write("gpuledger: %s\n" % msg)


def _off(var):
    return os.environ.get(var, "").strip().lower() in ("0", "no", "false", "off")


def on_torch(torch):
    """torch has just been imported."""
    if os.environ.get("GPULEDGER_TORCH", "blocks") == "blocks":  # --torch; the launcher's default
        from . import shim
        try:
            shim.attach(torch)
        except shim.ShimError as e:
            _say("no tensor ledger for this process: %s; the segment ledger goes on" % e)
        except Exception as e:  # noqa: BLE001 - never break the job
            _say("no tensor ledger for this process: %s: %s; the segment ledger goes on" % (type(e).__name__, e))
    if not _off("GPULEDGER_TORCH_HOOKS"):
        try:
            from . import torch_hooks
            torch_hooks.install(torch)
        except Exception as e:  # noqa: BLE001
            _say("PyTorch hooks not installed (%s: %s); categories fall back to frame rules" % (type(e).__name__, e))
    try:
        from . import retention_torch
        retention_torch.install(torch)  # GPULEDGER_RETENTION=0: not
    except Exception as e:  # noqa: BLE001
        _say("no search for what keeps memory alive (%s: %s)" % (type(e).__name__, e))


def on_cupy(cupy):
    """cupy has just been imported: its pool's blocks through a MemoryHook (_cupy.py)."""
    if _off("GPULEDGER_CUPY_HOOK"):
        return
    try:
        from . import _cupy
        _cupy.install(cupy)
    except Exception as e:  # noqa: BLE001 - never break the job
        _say("no CuPy pool ledger (%s: %s); the CUDA ledger goes on" % (type(e).__name__, e))


def on_jax(jax):
    """jax has just been imported: its allocator's statistics at marks and steps (_jax.py)."""
    if _off("GPULEDGER_JAX_STATS"):
        return
    try:
        from . import _jax
        _jax.install(jax)
    except Exception as e:  # noqa: BLE001 - never break the job
        _say("no JAX allocator statistics (%s: %s); the CUDA ledger goes on" % (type(e).__name__, e))


class _TorchFinder:
    """A meta path finder that sees `import <name>` (torch by default) once
    and arranges for its callback (on_torch) to run right after the
    module's own code."""

    def __init__(self, name="torch", callback=None):
        self.busy = False
        self.name, self.callback = name, callback or on_torch

    def find_spec(self, name, path=None, target=None):
        if name != self.name or self.busy:
            return None
        import importlib.util
        self.busy = True
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self.busy = False
        _uninstall(self)
        loader = getattr(spec, "loader", None) if spec else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        inner = loader.exec_module

        def exec_module(module):
            inner(module)
            try:
                del loader.exec_module  # back to the class's own method
            except AttributeError:
                pass
            self.callback(module)
        loader.exec_module = exec_module
        return spec


def _uninstall(finder):
    try:
        sys.meta_path.remove(finder)
    except ValueError:
        pass


def install():
    """Arrange for on_torch() at torch's import (or now, if imported), and
    the same for CuPy (on_cupy) and JAX (on_jax)."""
    if not _lib.loaded():
        return  # not under gpuledger (LD_PRELOAD dropped on the way): nothing to do
    for name, callback in (("torch", on_torch), ("cupy", on_cupy), ("jax", on_jax)):
        if name in sys.modules:
            callback(sys.modules[name])
        elif not any(isinstance(f, _TorchFinder) and f.name == name for f in sys.meta_path):
            sys.meta_path.insert(0, _TorchFinder(name, callback))
