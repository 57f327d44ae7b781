"""shim.py — the C++ shim that gives gpuledger PyTorch's tensor blocks.

PyTorch's CUDA caching allocator tells registered trace trackers about every
block it hands out or takes back; attaching one takes C++ compiled against
the job's own torch (there is no C entry point). Like torch.utils.cpp_extension
does for extensions, torch_shim.cpp is compiled with the installed torch's
headers and C++ ABI, once, into a cache keyed by the torch version, that ABI,
gpuledger's version and the source's hash:

    ${GPULEDGER_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/gpuledger}/torch-shim/<key>/

A file lock makes concurrent ranks build it once. The loaded shim is handed
to libgpuledger, which attaches it when CUDA is initialised. Anything that
goes wrong is one line on stderr; the segment ledger goes on.

    python3 -m gpuledger.shim [--build] [--force]   build (or find) it now and print its path
"""
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from . import __version__, _lib

SOURCE = Path(__file__).with_name("torch_shim.cpp")


class ShimError(Exception):
    """Why no shim can be had for this torch (one line)."""


def _say(msg):
    if os.environ.get("GPULEDGER_QUIET", "0") not in ("1", "yes", "true", "on"):
        sys.stderr.write("gpuledger: %s\n" % msg)


def cache_root():
    d = os.environ.get("GPULEDGER_CACHE_DIR")
    if d:
        return Path(d)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gpuledger"


def _abi(torch):
    return int(bool(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True)))


def key(torch):
    """The cache key: what makes a built shim right for this process."""
    src = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]
    raw = "torch-%s-abi%d-gl%s-%s" % (torch.__version__, _abi(torch), __version__, src)
    return re.sub(r"[^A-Za-z0-9._-]", "_", raw)


def _torch_dirs(torch):
    root = Path(torch.__file__).resolve().parent
    inc, lib = root / "include", root / "lib"
    if not (inc / "c10" / "cuda" / "CUDACachingAllocator.h").is_file():
        raise ShimError("torch %s has no C++ headers at %s (a wheel without include/?)" % (torch.__version__, inc))
    return inc, lib


def _cuda_include(torch):
    """A directory with cuda_runtime_api.h, which torch's CUDA headers include."""
    cands = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            cands.append(Path(os.environ[var]) / "include")
    cands.append(Path("/usr/local/cuda/include"))
    site = Path(torch.__file__).resolve().parent.parent
    cands += sorted(site.glob("nvidia/*/include")) + sorted(site.glob("nvidia/cu*/include"))
    for c in cands:
        if (c / "cuda_runtime_api.h").is_file():
            return c
    raise ShimError("no CUDA headers (cuda_runtime_api.h) found; set CUDA_HOME to the CUDA toolkit")


def _compile(torch, out):
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if not cxx:
        raise ShimError("no C++ compiler (g++) to build the PyTorch shim; install g++ or set CXX")
    inc, lib = _torch_dirs(torch)
    cuda = _cuda_include(torch)
    base = [cxx, "-O2", "-shared", "-fPIC", "-D_GLIBCXX_USE_CXX11_ABI=%d" % _abi(torch),
            "-isystem", str(inc), "-isystem", str(cuda), str(SOURCE), "-o", str(out),
            "-L" + str(lib), "-lc10_cuda", "-lc10", "-Wl,-rpath," + str(lib)]
    # the compiler is our own child, not the job's: not recorded
    env = dict(os.environ)
    keep = [p for p in env.get("LD_PRELOAD", "").replace(" ", ":").split(":") if p and "libgpuledger" not in p]
    if keep:
        env["LD_PRELOAD"] = ":".join(keep)
    else:
        env.pop("LD_PRELOAD", None)
    last = ""
    for std in ("-std=c++17", "-std=c++20"):  # the standard torch's headers want
        try:
            r = subprocess.run(base[:1] + [std] + base[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, check=False, timeout=900, env=env)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise ShimError("running %s failed: %s" % (cxx, e)) from None
        if r.returncode == 0:
            return
        last = r.stdout
    lines = last.strip().splitlines()
    err = next((ln for ln in lines if "error" in ln), lines[-1] if lines else "no output")
    raise ShimError("building the PyTorch shim with %s failed: %s" % (cxx, err.strip()[:300]))


def build(torch, force=False):
    """Path of the shim for this torch, built if the cache has none."""
    if not getattr(torch.version, "cuda", None):
        raise ShimError("torch %s is not a CUDA build" % torch.__version__)
    env = os.environ.get("GPULEDGER_TORCH_SHIM")
    if env:
        if not os.path.isfile(env):
            raise ShimError("GPULEDGER_TORCH_SHIM=%s: no such file" % env)
        return Path(env)
    d = cache_root() / "torch-shim" / key(torch)
    so = d / "gpuledger_torch_shim.so"
    if so.is_file() and not force:
        return so
    try:
        d.mkdir(parents=True, exist_ok=True)
        lock = open(d / "lock", "w")
    except OSError as e:
        raise ShimError("cannot write the shim cache %s: %s" % (d, e.strerror)) from None
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another rank may be building it: wait for it
        if so.is_file() and not force:
            return so
        _say("building the PyTorch allocator shim for torch %s (once; cached in %s)" % (torch.__version__, d))
        t0 = time.monotonic()
        tmp = d / ("build.%d.so" % os.getpid())
        try:
            _compile(torch, tmp)
            os.replace(tmp, so)
        finally:
            if tmp.exists():
                tmp.unlink()
        _say("built it in %.1f s" % (time.monotonic() - t0))
    return so


_loaded = []  # keeps the shim loaded


def attach(torch):
    """Build or find the shim, load it and hand it to libgpuledger. Returns
    'attached', 'pending' (attaches when CUDA is initialised), or raises
    ShimError."""
    if _lib.torch_register is None:
        raise ShimError("libgpuledger is not loaded in this process")
    import ctypes
    so = build(torch)
    try:
        dll = ctypes.CDLL(str(so))
    except OSError as e:
        raise ShimError("cannot load %s: %s" % (so, e)) from None
    abi = getattr(dll, "gpuledger_torch_shim_abi", None)
    fn = getattr(dll, "gpuledger_torch_shim_attach", None)
    if abi is None or fn is None or abi() != _lib.TORCH_ABI:
        raise ShimError("%s is not a shim for this gpuledger (remove it to rebuild)" % so)
    _loaded.append(dll)
    rc = _lib.torch_register(ctypes.cast(fn, ctypes.c_void_p))
    if rc == 1:
        return "attached"
    if rc == 0:
        return "pending"
    if rc == -2:
        raise ShimError("gpuledger is not recording in this process")
    raise ShimError("the shim did not attach (see the line above)")


def main(argv=None):
    import argparse
    ap = argparse.ArgumentParser(prog="python3 -m gpuledger.shim", description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", action="store_true", help="build it if the cache has none (default)")
    ap.add_argument("--force", action="store_true", help="build it again even if cached")
    args = ap.parse_args(argv)
    import torch
    try:
        print(build(torch, force=args.force))
    except ShimError as e:
        sys.stderr.write("gpuledger: %s\n" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
