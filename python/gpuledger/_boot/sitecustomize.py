"""sitecustomize.py — put on PYTHONPATH by `gpuledger run` (this directory
alone: the package's parent is often a whole site-packages, whose modules
must not come before the job's own): loads the gpuledger package from beside
it (and finds its metadata, for pytest's entry point), prepares the PyTorch
integration (gpuledger.autoload), runs the sitecustomize this one hides, if
any, as Python would have, and takes this directory off sys.path again, so
the job's path is what it would be without gpuledger."""
import os
import sys


def _gpuledger_load(pkg):
    """The package in pkg as `gpuledger`, its parent directory not on sys.path."""
    if "gpuledger" in sys.modules:
        return
    import importlib.util
    spec = importlib.util.spec_from_file_location("gpuledger", os.path.join(pkg, "__init__.py"),
                                                  submodule_search_locations=[pkg])
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gpuledger"] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        del sys.modules["gpuledger"]
        raise


class _GpuledgerMetadata:
    """A meta path finder that finds no module but the package's metadata
    (gpuledger.dist-info beside it: its version and the pytest plugin's entry
    point), as the path's own finder would if the directory were on sys.path.
    Last on sys.meta_path: a gpuledger installed where the job looks comes
    first."""

    def __init__(self, info):
        self.info = info

    def find_spec(self, name, path=None, target=None):
        return None

    def find_distributions(self, context=None):
        if context is not None and (getattr(context, "path", sys.path) is not sys.path or
                                    getattr(context, "name", None) not in (None, "gpuledger")):
            return iter(())
        import importlib.metadata
        return iter((importlib.metadata.PathDistribution(__import__("pathlib").Path(self.info)),))


def _gpuledger_boot():
    here = os.path.dirname(os.path.realpath(__file__))
    try:
        _gpuledger_load(os.path.dirname(here))
        info = os.path.join(os.path.dirname(os.path.dirname(here)), "gpuledger.dist-info")
        if os.path.isdir(info) and sys.version_info >= (3, 8):
            sys.meta_path.append(_GpuledgerMetadata(info))
        import gpuledger.autoload
        gpuledger.autoload.install()
    except Exception as e:  # noqa: BLE001 - never break the job
        sys.stderr.write("gpuledger: Python integration off (%s: %s)\n" % (type(e).__name__, e))
    # off the path (here, the job's path is the job's), then chain: the next
    # sitecustomize on it (a distribution's, a venv's)
    sys.path[:] = [p for p in sys.path if os.path.realpath(p or os.curdir) != here]
    me = sys.modules.pop("sitecustomize", None)
    try:
        import sitecustomize  # noqa: F401
    except ImportError as e:
        if getattr(e, "name", None) != "sitecustomize":
            sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n%s: %s\n"
                             % (type(e).__name__, e))
    except Exception as e:  # noqa: BLE001 - what site.py does
        sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n%s: %s\n" % (type(e).__name__, e))
    finally:
        if "sitecustomize" not in sys.modules and me is not None:
            sys.modules["sitecustomize"] = me


_gpuledger_boot()
del _gpuledger_boot, _gpuledger_load
