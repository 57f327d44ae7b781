"""autoload.py — what `gpuledger run` does inside a Python job, with no
change to the job's code: the launcher puts gpuledger/_boot on PYTHONPATH,
whose sitecustomize calls install(); when the job imports torch, the
allocator shim is built (once, cached) and attached (GPULEDGER_TORCH=blocks,
the launcher's --torch), the identity hooks are registered (unless
GPULEDGER_TORCH_HOOKS=0), and so are the retention finder's
(retention_torch.py, unless GPULEDGER_RETENTION=0). Nothing here may break
the job: any failure is one line on stderr.
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


class _TorchFinder:
    """A meta path finder that sees `import torch` once and arranges for
    on_torch() to run right after torch's own module code."""

    def __init__(self):
        self.busy = False

    def find_spec(self, name, path=None, target=None):
        if name != "torch" or self.busy:
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
            on_torch(module)
        loader.exec_module = exec_module
        return spec


def _uninstall(finder):
    try:
        sys.meta_path.remove(finder)
    except ValueError:
        pass


def install():
    """Arrange for on_torch() at torch's import (or now, if imported)."""
    if not _lib.loaded():
        return  # not under gpuledger (LD_PRELOAD dropped on the way): nothing to do
    if "torch" in sys.modules:
        on_torch(sys.modules["torch"])
        return
    if not any(isinstance(f, _TorchFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _TorchFinder())
