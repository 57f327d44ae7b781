#!/usr/bin/env python3
"""check_plugin.py BUILD_ROOT SOURCE_ROOT — the gpuledger pytest plugin and
the optimizer's steps, end to end against the fake CUDA runtime:

1. cases_torch.py under `gpuledger run --torch blocks -- python3 -m pytest`
   on the stand-in torch (tests/pystub): every test's outcome and its
   failure message, word for word (block bytes, the stacks' Python lines);
2. cases_device.py under `gpuledger run` without torch (CUDA allocations);
3. the same tests outside gpuledger: the plugin is found through the
   package's entry point, checks nothing and says so once;
4. train_leak.py (no gpuledger call) under `gpuledger run --torch blocks`:
   `gpuledger leaks --steps` takes its steps from the optimizer and names
   the leaking line;
5. marks with arguments they cannot take: a usage error naming the test
   (pytest's exit 4, one line), not a test failing with a traceback.
Run by `meson test pytest` with the python3 that has pytest (Debian's
python3-pytest); exit 77 (skipped) without one."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

BUILD, SRC = sys.argv[1], sys.argv[2]
GL = os.path.join(BUILD, "report", "gpuledger")
HERE = os.path.join(SRC, "tests", "pytest")
failures = []


def check(what, got, want):
    if got != want:
        failures.append("%s:\n--- got\n%s\n--- expected\n%s" % (what, got, want))


def run(cmd, env, cwd):
    e = dict(os.environ)
    e.update(env)
    return subprocess.run(cmd, env=e, cwd=cwd, capture_output=True, text=True, timeout=300)


def outcomes(junit):
    """{test name: (outcome, message)} from pytest's JUnit XML."""
    out = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        f = case.find("failure")
        out[case.get("name")] = ("failed", f.text or "") if f is not None else ("passed", "")
    return out


def line_of(path, text):
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if text in line:
                return n
    raise SystemExit("check_plugin: %r not in %s" % (text, path))


def main():
    try:
        import pytest  # noqa: F401
    except ImportError:
        print("check_plugin: no pytest for %s (Debian: python3-pytest); skipped" % sys.executable)
        return 77
    d = tempfile.mkdtemp(prefix="gl-pytest-")
    try:
        return checks(d)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def stand_in_torch(d):
    shutil.copytree(os.path.join(SRC, "tests", "pystub", "torch"), os.path.join(d, "torch"))
    os.symlink(os.path.join(SRC, "tests", "torchstub", "include"), os.path.join(d, "torch", "include"))
    os.mkdir(os.path.join(d, "torch", "lib"))
    for lib in ("libc10_cuda.so", "libc10.so"):
        os.symlink(os.path.join(BUILD, "tests", lib), os.path.join(d, "torch", "lib", lib))
    for f in ("cases_torch.py", "cases_device.py", "train_leak.py"):
        shutil.copy(os.path.join(HERE, f), d)


def pytest_under_gpuledger(d, cases, torch_mode, env):
    db = os.path.join(d, cases + ".db")
    junit = os.path.join(d, cases + ".xml")
    r = run([GL, "run", "-q", "--torch", torch_mode, "-o", db, "--", sys.executable, "-m", "pytest",
             "-p", "no:cacheprovider", "--rootdir", d, "--junitxml", junit, cases + ".py"], env, d)
    if not os.path.exists(junit):
        raise SystemExit("check_plugin: pytest wrote no %s\n%s\n%s" % (junit, r.stdout, r.stderr))
    return r, outcomes(junit)


def checks(d):
    stand_in_torch(d)
    env = {"PYTHONPATH": d, "GPULEDGER_CACHE_DIR": os.path.join(d, "cache"),
           "LD_LIBRARY_PATH": os.path.join(BUILD, "tests", "fakecuda"),
           "GL_FAKE_CUDART": os.path.join(BUILD, "tests", "fakecuda", "libcudart.so.13")}
    ct = os.path.join(d, "cases_torch.py")
    torch_init = "torch/__init__.py"
    ln = {k: line_of(ct, k) for k in ("KEPT.append(torch.empty(nbytes))", "keep(3 << 20)", "a = torch.empty(1",
                                       "b = torch.empty(2")}
    tensor = ["      Tensor.__init__ (%s:%d)" % (torch_init, line_of(os.path.join(d, torch_init), "fa_malloc(nbytes")),
              "      empty (%s:%d)" % (torch_init, line_of(os.path.join(d, torch_init), "return Tensor(nbytes)"))]

    # 1. blocks of the stand-in torch
    r, got = pytest_under_gpuledger(d, "cases_torch", "blocks", env)
    check("pytest header under gpuledger", "gpuledger: recording; gpu_limit_memory and gpu_limit_leaks marks are "
          "checked" in r.stdout + r.stderr, True)
    want = {
        "test_clean": ("passed", ""),
        "test_leaky": ("failed", None),
        "test_peak_over": ("failed", None),
        "test_peak_under": ("passed", ""),
        "test_cache_filled_once": ("passed", ""),
        "test_fails_by_itself": ("failed", None),
        "test_unmarked": ("passed", ""),
    }
    check("outcomes (torch)", {k: v[0] for k, v in got.items()}, {k: v[0] for k, v in want.items()})
    msg = lambda name: got.get(name, ("", ""))[1].replace(d + "/", "")  # noqa: E731
    check("test_leaky's failure", msg("test_leaky").split("\n"), [
        "gpu_limit_leaks: 3.00 MiB of GPU memory allocated during the test is still live at its end (PyTorch "
        "tensor blocks, 1 allocation): more than its limit of 1.00 MiB; allocated by:",
        "  3.00 MiB in 1 allocation"] + tensor + [
        "      keep (cases_torch.py:%d)" % ln["KEPT.append(torch.empty(nbytes))"],
        "      test_leaky (cases_torch.py:%d)" % ln["keep(3 << 20)"]])
    check("test_peak_over's failure", msg("test_peak_over").split("\n"), [
        "gpu_limit_memory: the test allocated 3.00 MiB of GPU memory at its peak (PyTorch tensor blocks, over "
        "the 3.00 MiB live at its start): more than its limit of 2.00 MiB; held at the peak by:",
        "  2.00 MiB in 1 allocation"] + tensor + [
        "      test_peak_over (cases_torch.py:%d)" % ln["b = torch.empty(2"],
        "  1.00 MiB in 1 allocation"] + tensor + [
        "      test_peak_over (cases_torch.py:%d)" % ln["a = torch.empty(1"]])
    check("test_fails_by_itself: its own failure only", "its own failure" in msg("test_fails_by_itself") and
          "gpu_limit_leaks: " not in msg("test_fails_by_itself"), True)

    # 2. CUDA allocations, no torch
    cd = os.path.join(d, "cases_device.py")
    r, got = pytest_under_gpuledger(d, "cases_device", "segments", env)
    check("outcomes (device)", {k: v[0] for k, v in got.items()},
          {"test_leaky_workspace": "failed", "test_peak": "failed", "test_within_both": "passed"})
    malloc = "      malloc (cases_device.py:%d)" % line_of(cd, "_rt.cudaMalloc(")
    workspace = "      workspace (cases_device.py:%d)" % line_of(cd, "KEPT.append(malloc(nbytes))")
    check("test_leaky_workspace's failure", msg("test_leaky_workspace").split("\n"), [
        "gpu_limit_leaks: 3.00 MiB of GPU memory allocated during the test is still live at its end (CUDA "
        "allocations, 2 allocations): more than its limit of 1.00 MiB; allocated by:",
        "  2.00 MiB in 1 allocation", malloc, workspace,
        "      test_leaky_workspace (cases_device.py:%d)" % line_of(cd, "workspace(2 << 20)"),
        "  1.00 MiB in 1 allocation", malloc, workspace,
        "      test_leaky_workspace (cases_device.py:%d)" % line_of(cd, "workspace(1 << 20)")])
    check("test_peak's failure", msg("test_peak").split("\n")[0],
          "gpu_limit_memory: the test allocated 4.00 MiB of GPU memory at its peak (CUDA allocations, over the "
          "3.00 MiB live at its start): more than its limit of 1.00 MiB; held at the peak by:")

    # 3. outside gpuledger: found through the entry point, nothing checked
    out_env = dict(env, PYTHONPATH=os.path.join(SRC, "python") + ":" + d)
    r = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", d, "cases_torch.py",
             "cases_device.py"], out_env, d)
    check("outside gpuledger: the summary", re.findall(r"\d+ (?:passed|failed)", r.stdout), ["1 failed", "9 passed"])
    check("outside gpuledger: unchecked limits said once",
          r.stdout.count("gpuledger: 9 tests with gpu_limit_memory / gpu_limit_leaks marks ran without their limits "
                         "being checked: run them under 'gpuledger run -- pytest ...'"), 1)

    # 4. steps from the optimizer of an unmodified training loop
    db = os.path.join(d, "train.db")
    r = run([GL, "run", "-q", "--torch", "blocks", "-o", db, "--", sys.executable, "train_leak.py"], env, d)
    check("train_leak.py ran", (r.returncode, r.stdout), (0, "train_leak: 6 steps\n"))
    r = run([GL, "leaks", "--steps", db], {}, d)
    check("leaks --steps: steps from the optimizer",
          "growing step after step (6 steps ended by the optimizer's step()): 1 stack" in r.stdout, True)
    check("leaks --steps: the leaking line", "leak_workspace (train_leak.py:%d)" % line_of(
        os.path.join(d, "train_leak.py"), "_rt.cudaMalloc(") in r.stdout.replace(d + "/", ""), True)

    # 5. bad mark arguments: one usage line before any test runs
    bad = [
        ("gpu_limit_leaks('lots')", "gpu_limit_leaks: limit 'lots' is not a size (e.g. 512, '64 KiB', '1.5 GiB')"),
        ("gpu_limit_leaks('1 MiB', warmups='x')", "gpu_limit_leaks: warmups wants a count >= 0, not 'x' (e.g. "
         "@pytest.mark.gpu_limit_leaks('1 GiB', warmups=1))"),
        ("gpu_limit_memory()", "gpu_limit_memory needs a limit (e.g. @pytest.mark.gpu_limit_memory('1 GiB'))"),
        ("gpu_limit_memory('1 MiB', 2)", "gpu_limit_memory takes limit, not 2 (e.g. "
         "@pytest.mark.gpu_limit_memory('1 GiB'))"),
        ("gpu_limit_leaks('1 MiB', warmup=1)", "gpu_limit_leaks takes limit and warmups, not warmup (e.g. "
         "@pytest.mark.gpu_limit_leaks('1 GiB', warmups=1))"),
    ]
    for n, (mark, line) in enumerate(bad):
        with open(os.path.join(d, "bad_%d.py" % n), "w") as f:
            f.write("import pytest\n\n\n@pytest.mark.%s\ndef test_marked():\n    pass\n" % mark)
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", d, "bad_%d.py" % n]
        for where, (c, e) in (("outside", (cmd, out_env)), ("under", ([GL, "run", "-q", "-o", os.path.join(
                d, "bad.db"), "--"] + cmd, env))):
            if where == "under" and n:
                continue  # once under gpuledger is enough
            r = run(c, e, d)
            check("bad mark %s (%s gpuledger)" % (mark, where), (r.returncode, "Traceback" in r.stdout + r.stderr,
                  [x for x in (r.stdout + r.stderr).split("\n") if x.startswith("ERROR")]),
                  (4, False, ["ERROR: bad_%d.py::test_marked: %s" % (n, line)]))

    if failures:
        print("\n\n".join(failures))
        return 1
    print("check_plugin: the plugin's pass and fail cases, outside gpuledger, and the optimizer's steps: as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
