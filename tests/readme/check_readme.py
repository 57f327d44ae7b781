#!/usr/bin/env python3
"""check_readme.py BUILD_ROOT SOURCE_ROOT [--update] — README.md stays true.

1. README.md is at most 20 KiB (20,480 bytes): a page for users; the long
   material lives in docs/. Its variable table lists the same variables,
   with the same defaults, as the full one in docs/architecture.md.
2. Every sample in it is what the current build prints. A sample is a
   fenced block whose first line starts with "$ " (a shell prompt): each
   "$ COMMAND" line is run with bash in a scratch directory holding a
   `build` link to BUILD_ROOT, with the build's gpuledger first on the PATH
   and its fake CUDA runtime, CUPTI and NVML standing in for a GPU (the
   set-up of scripts/demo.sh); the lines up to the next "$ " are its output
   (stdout and stderr together). Samples run in order, so a later one reads
   the database an earlier one wrote. A database a command writes is made
   reproducible at once (tests/golden/normalise.py: times, pids, hosts,
   addresses, paths), and the commands run without address-space
   randomisation where the system allows it.
   Both sides are compared after normalising what still differs from run to
   run and machine to machine: directories of absolute paths, hexadecimal
   numbers (the demo's pointer, module offsets), times, pids and hosts, the
   C library's start-up frames (`libc.so.6+0x…`, `__libc_start_main`,
   `_start`: their names depend on the C library's symbols), the figures
   of pool holes (where the fake runtime's pool chunks land in the address
   space decides how they merge; tests/integration checks them exactly) and
   the process's figure "outside any allocation API ... at the peak" and
   how far from the peak it was sampled (a sample taken when the writer
   asks for one, later under load).
--update writes the samples' outputs into README.md as the build prints them
now, the scratch directory shown as /home/me (then read `git diff README.md`)."""
import glob
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile

LIMIT = 20 * 1024
SHOWN_DIR = "/home/me"
START_FRAMES = r"(?:libc\.so\.6\+0xX|__libc_start_main|__libc_start_call_main|_start)"

NORMALISE = [
    (re.compile(r"(?<![\w.~-])/(?:[^\s/:'\"`()]+/)+"), ""),          # /any/dir/file -> file
    (re.compile(r"0x[0-9a-fA-F]+"), "0xX"),                          # addresses, offsets
    (re.compile(r"^ +\d+  " + START_FRAMES + r"\n", re.M), ""),      # a frame line of `leaks`
    (re.compile(r" <- " + START_FRAMES + r"(?![\w.+])"), ""),        # a chain's frames
    (re.compile(r"(?<![\w.+])" + START_FRAMES + r";"), ""),          # a folded stack's frames
    (re.compile(r"(<- [^\n]*?)(?: <- \.\.\.)+"), r"\1 <- ..."),
    (re.compile(r"[+-]?\d+(?:\.\d+)?\s?(?:s|ms|us|µs|ns)\b"), "T"),   # times, durations
    (re.compile(r"\bprocess \d+ on \S+"), "process P on H"),
    (re.compile(r"\bpid \d+"), "pid P"),
    (re.compile(r"(timeline\s+)\S+"), r"\1SPARKLINE"),
    # the process's figure at the peak is a sample taken when the writer asks
    # for one (usage.h): which moment that is depends on how far behind the
    # writer runs (under load, after the async pool grew); tests/integration
    # checks the figures exactly with marks
    (re.compile(r"(outside any allocation API: )\d+(?:\.\d+)? (?:[KMGT]i)?B at the peak"), r"\1SIZE at the peak"),
    # and whether that sample is the peak's own moment or some time from it
    (re.compile(r" \(sampled T (?:before|after) it\)"), ""),
    (re.compile(r"sampled (?:T (?:before|after)|at) the peak"), "sampled near the peak"),
    (re.compile(r"(of the process's \S+ \S+ )(?:near|at)( the peak is outside)"), r"\1at\2"),
    # the same sample in the diagnosis's finding and its evidence
    (re.compile(r"^.*(?:of the process's .* at the peak is outside any allocation API|process .* = ledger .* outside[ ,(]).*$",
                re.M),
     lambda m: re.sub(r"\d+(?:\.\d+)? (?:[KMGT]i)?B\b", "SIZE", m.group(0))),
    (re.compile(r"^.*(?:holes|regions|external fragmentation).*$", re.M),
     lambda m: re.sub(r"\d+(?:\.\d+)?", "N", re.sub(r"\d+(?:\.\d+)? (?:[KMGT]i)?B\b", "SIZE", m.group(0)))),
    (re.compile(r"[ \t]+$", re.M), ""),
]


def normalise(text):
    for rx, rep in NORMALISE:
        text = rx.sub(rep, text)
    return text


def samples(lines):
    """[(first line, end line)] of the fenced blocks whose first line is a prompt."""
    out, i = [], 0
    while i < len(lines):
        if lines[i].startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            if j < len(lines) and i + 1 < j and lines[i + 1].startswith("$ "):
                out.append((i + 1, j))
            i = j + 1
        else:
            i += 1
    return out


def commands(block):
    """[(command, [output lines shown])] of one sample."""
    out = []
    for line in block:
        if line.startswith("$ "):
            out.append((line[2:], []))
        else:
            out[-1][1].append(line)
    return out


def environment(build):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GPULEDGER_", "FAKECUDA_", "FAKENVML_", "FAKECUPTI_"))
           and k not in ("LD_PRELOAD", "CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", "PYTHONPATH")}
    env.update({
        "PATH": os.path.join(build, "report") + os.pathsep + env.get("PATH", "/usr/bin:/bin"),
        "GPULEDGER_CUPTI_LIB": os.path.join(build, "tests", "fakecupti", "libcupti.so.13"),
        "GPULEDGER_NVML_LIB": os.path.join(build, "tests", "fakecuda", "libnvidia-ml.so.1"),
        "LC_ALL": "C.UTF-8", "TZ": "UTC",
    })
    return env


def main():
    build, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    update = "--update" in sys.argv[3:]
    path = os.path.join(src, "README.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    lines = text.split("\n")
    blocks = samples(lines)
    failures = []
    if not blocks:
        failures.append("README.md has no sample (a fenced block whose first line starts with '$ ')")
    env = environment(build)
    norand = []
    arch = platform.machine()
    if subprocess.run(["setarch", arch, "-R", "true"], capture_output=True).returncode == 0:
        norand = ["setarch", arch, "-R"]
    scratch = tempfile.mkdtemp(prefix="gl-readme-")
    results = []
    try:
        os.symlink(build, os.path.join(scratch, "build"))
        for start, end in blocks:
            shown = []
            for cmd, want in commands(lines[start:end]):
                before = {p: os.path.getmtime(p) for p in glob.glob(os.path.join(scratch, "*.db"))}
                r = subprocess.run(norand + ["bash", "-c", cmd], cwd=scratch, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, timeout=120)
                got = r.stdout.decode("utf-8", "replace").replace(scratch, SHOWN_DIR).rstrip("\n")
                for db in glob.glob(os.path.join(scratch, "*.db")):
                    if before.get(db) != os.path.getmtime(db):
                        subprocess.run([sys.executable, os.path.join(src, "tests", "golden", "normalise.py"), db,
                                        os.path.join(scratch, "build"), src], check=True)
                got_lines = got.split("\n") if got else []
                if normalise("\n".join(got_lines)) != normalise("\n".join(want)):
                    failures.append("README.md line %d: `%s` prints today:\n%s\n--- where README.md shows:\n%s"
                                    % (start + 1, cmd, got, "\n".join(want)))
                shown += ["$ " + cmd] + got_lines
            results.append((start, end, shown))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if update:
        for start, end, shown in reversed(results):
            lines[start:end] = shown
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        print("check_readme: %d samples written into README.md (%d bytes)"
              % (len(results), len("\n".join(lines).encode("utf-8"))))
        return 0
    # the README's variable table is the short form of docs/architecture.md's
    var = re.compile(r"^\| `(GPULEDGER_[A-Z_0-9]+)` \| ([^|]*) \|", re.M)
    with open(os.path.join(src, "docs", "architecture.md"), encoding="utf-8") as f:
        full = var.findall(f.read())
    if var.findall(text) != full:
        failures.append("README.md's variable table and docs/architecture.md's (\"Every variable\") list "
                        "different variables or defaults:\n  %s\n  %s"
                        % (" ".join("%s=%s" % v for v in var.findall(text)), " ".join("%s=%s" % v for v in full)))
    size = len(text.encode("utf-8"))
    if size > LIMIT:
        failures.append("README.md is %d bytes, over its limit of %d: move the long material to docs/"
                        % (size, LIMIT))
    for f in failures:
        print("FAIL: " + f + "\n")
    if failures:
        print("(scripts/update-readme.sh writes the samples as the current build prints them)")
        return 1
    print("ok: README.md is %d bytes (limit %d); its %d samples (%d commands) are what the build prints"
          % (size, LIMIT, len(blocks), sum(len(commands(lines[s:e])) for s, e in blocks)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
