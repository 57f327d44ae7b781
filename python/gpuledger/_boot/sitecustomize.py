"""sitecustomize.py — put on PYTHONPATH by `gpuledger run` (with the
gpuledger package's parent directory): prepares the PyTorch integration
(gpuledger.autoload), then runs the sitecustomize this one hides, if any,
as Python would have."""
import os
import sys


def _gpuledger_boot():
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        import gpuledger.autoload
        gpuledger.autoload.install()
    except Exception as e:  # noqa: BLE001 - never break the job
        sys.stderr.write("gpuledger: Python integration off (%s: %s)\n" % (type(e).__name__, e))
    # chain: the next sitecustomize on the path (a distribution's, a venv's)
    me = sys.modules.pop("sitecustomize", None)
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    try:
        import sitecustomize  # noqa: F401
    except ImportError as e:
        if getattr(e, "name", None) != "sitecustomize":
            sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n%s: %s\n"
                             % (type(e).__name__, e))
    except Exception as e:  # noqa: BLE001 - what site.py does
        sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n%s: %s\n" % (type(e).__name__, e))
    finally:
        sys.path[:] = saved
        if "sitecustomize" not in sys.modules and me is not None:
            sys.modules["sitecustomize"] = me


_gpuledger_boot()
del _gpuledger_boot
