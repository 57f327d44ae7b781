#!/usr/bin/env python3
"""check_finder.py SOURCE_ROOT — the retention finder (python/gpuledger/
retention.py) on plain Python objects that stand in for tensors (FakeTensor:
a storage address and bytes), no torch: a list global, an attribute of an
object in a dict, a closure cell, a cycle, a class attribute, a frame's
local, a mutable default argument; exact paths and lines; its bounds
(time through an injected clock, objects, depth); a global's path is
preferred to a frame's local's (the frame lets go when it returns) cut it deterministically
(complete False); and no reference to anything it visited survives it
(weakref and sys.getrefcount); which paths the hooks record (retention_torch.by_root:
the roots that hold the most, newest first; at a step only the new ways)."""
import importlib.util
import os
import shutil
import sys
import tempfile
import weakref

SRC = sys.argv[1]
sys.path.insert(0, os.path.join(SRC, "python"))
from gpuledger import retention  # noqa: E402

failures = []


def check(what, got, want):
    if got != want:
        failures.append("%s:\n  got      %r\n  expected %r" % (what, got, want))


class FakeTensor:
    """A stand-in for a tensor: its storage's address and bytes."""

    def __init__(self, ptr, nbytes):
        self.ptr, self.nbytes = ptr, nbytes


FAKE = retention.Tensors(FakeTensor, lambda t: (t.ptr, t.nbytes))
MiB = 1 << 20

TRAIN = '''\
"""a program's module"""
import collections

logits_kept = []


class Holder:
    def __init__(self):
        self.cache = None


class Trainer:
    history = []


class Node:
    pass


registry = {"run": Holder()}


def make_step():
    kept = []

    def step(t):
        kept.append(t)
    return step


step_fn = make_step()


def remember(t, seen=[]):
    seen.append(t)


a = Node()
a.other = Node()
a.other.other = a
'''


def load_train(d):
    path = os.path.join(d, "train.py")
    with open(path, "w") as f:
        f.write(TRAIN)
    spec = importlib.util.spec_from_file_location("train", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["train"] = mod
    spec.loader.exec_module(mod)
    return mod, path


def line_of(path, text):
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if text in line:
                return n
    raise SystemExit("check_finder: %r not in %s" % (text, path))


def paths(res):
    return {hex(p): (f.path, os.path.basename(f.root_file), f.root_line) for p, f in res.found.items()}


def main():
    d = tempfile.mkdtemp(prefix="gl-retention-")
    try:
        checks(d)
    finally:
        sys.modules.pop("train", None)
        shutil.rmtree(d, ignore_errors=True)
    if failures:
        print("\n".join(failures))
        return 1
    print("check_finder: paths, bounds and references as expected")
    return 0


def checks(d):
    train, path = load_train(d)
    roots = lambda: [("train.py: global", path, 0, train)]  # noqa: E731
    for i in range(18):
        train.logits_kept.append(FakeTensor(0x7f0000000000 + i * 1000 * MiB, 1000 * MiB))
    train.registry["run"].cache = FakeTensor(0x7f1000000000, 3 * MiB)
    train.step_fn(FakeTensor(0x7f2000000000, 2 * MiB))
    train.Trainer.history.append(FakeTensor(0x7f3000000000, 512 << 10))
    train.a.other.t = FakeTensor(0x7f4000000000, 12)
    train.remember(FakeTensor(0x7f5000000000, 1536 * MiB))
    res = retention.find(FAKE, roots=roots(), budget_s=10)
    got = paths(res)
    want_some = {
        hex(0x7f0000000000 + 17 * 1000 * MiB): ("train.py: global logits_kept (list, 18 items) → [17] → Tensor 1000 MiB",
                                                "train.py", line_of(path, "logits_kept = []")),
        hex(0x7f1000000000): ("train.py: global registry (dict, 1 item) → ['run'] (Holder) → .cache → Tensor 3 MiB",
                              "train.py", line_of(path, "registry = ")),
        hex(0x7f2000000000): ("train.py: global step_fn (function) → <closure kept> (list, 1 item) → [0] → Tensor 2 MiB",
                              "train.py", line_of(path, "step_fn = ")),
        hex(0x7f3000000000): ("train.py: global Trainer (class) → .history (list, 1 item) → [0] → Tensor 512 KiB",
                              "train.py", line_of(path, "class Trainer")),
        hex(0x7f4000000000): ("train.py: global a (Node) → .other (Node) → .t → Tensor 12 B",
                              "train.py", line_of(path, "a = Node()")),
        hex(0x7f5000000000): ("train.py: global remember (function) → <default 0> (list, 1 item) → [0] → Tensor 1.5 GiB",
                              "train.py", line_of(path, "def remember")),
    }
    for k, v in want_some.items():
        check("path of %s" % k, got.get(k), v)
    check("storages found", len(got), 18 + 5)
    check("complete", (res.complete, res.cut), (True, ""))

    # a frame's local (the default roots: every thread's frames, __main__, the program's modules)
    def holds_a_local():
        batch = {"x": FakeTensor(0x7f6000000000, 4 * MiB)}  # noqa: F841 - found through the frame
        first = train.logits_kept[0]  # noqa: F841 - a local, but the global keeps it
        return retention.find(FAKE, budget_s=10)
    res = holds_a_local()
    ln = line_of(__file__, "return retention.find(FAKE, budget_s=10)")
    check("a frame's local", paths(res).get(hex(0x7f6000000000)),
          ("check_finder.py:%d in holds_a_local: local batch (dict, 1 item) → ['x'] → Tensor 4 MiB" % ln,
           "check_finder.py", ln))
    check("a global's path before a local's", paths(res).get(hex(0x7f0000000000), ("",))[0],
          "train.py: global logits_kept (list, 18 items) → [0] → Tensor 1000 MiB")
    check("the program's module found among the default roots", paths(res).get(hex(0x7f1000000000), ("",))[0],
          "train.py: global registry (dict, 1 item) → ['run'] (Holder) → .cache → Tensor 3 MiB")

    # a frame's locals read and let go: the walk leaves no snapshot of them
    # behind (CPython < 3.13 keeps frame.f_locals' dict in the frame, which
    # would hold a tensor the function later drops)
    def drops_a_local():
        t = FakeTensor(0x7f7000000000, 5 * MiB)
        before = sys.getrefcount(t)
        res = retention.find(FAKE, budget_s=10)
        after = sys.getrefcount(t)
        w = weakref.ref(t)
        del t
        return before, after, w() is None, hex(0x7f7000000000) in paths(res)
    check("a local: found, its count unchanged, gone when dropped", drops_a_local()[1:], (drops_a_local()[0], True,
                                                                                      True))

    # the time bound: a clock that moves 1 s at each reading; it is read at
    # the start and at every 64th object: the walk stops at the 64th
    ticks = [0.0]

    def clock():
        ticks[0] += 1.0
        return ticks[0]
    big = [[FakeTensor(0x100000 + i, 1)] for i in range(5000)]
    res = retention.find(FAKE, roots=[("big.py: global", "big.py", 0, big)], budget_s=0.5, clock=clock)
    check("time bound: cut, where", (res.complete, res.cut, res.visited), (False, "time", 64))
    check("time bound: elapsed from the clock", res.elapsed_us, 2000000)
    res = retention.find(FAKE, roots=[("big.py: global", "big.py", 0, big)], budget_s=1e9, max_objects=100)
    check("object bound", (res.complete, res.cut, res.visited), (False, "objects", 100))
    res = retention.find(FAKE, roots=[("big.py: global", "big.py", 0, big)], budget_s=1e9, max_depth=1)
    check("depth bound", (res.complete, res.cut, len(res.found)), (False, "depth", 0))
    res = retention.find(FAKE, roots=[("big.py: global", "big.py", 0, big)], budget_s=1e9)
    check("unbounded: every storage", (res.complete, len(res.found)), (True, 5000))
    del big

    # no reference kept: the tensor dies with the program's last reference,
    # and the reference counts are what they were
    t = train.registry["run"].cache
    before = (sys.getrefcount(t), sys.getrefcount(train.registry), sys.getrefcount(train.logits_kept))
    res = retention.find(FAKE, roots=roots(), budget_s=10)
    after = (sys.getrefcount(t), sys.getrefcount(train.registry), sys.getrefcount(train.logits_kept))
    check("reference counts after a walk", after, before)
    w = weakref.ref(t)
    del t
    train.registry["run"].cache = None
    check("the tensor dies with its last reference", w(), None)
    check("results are text and numbers", {type(v) for f in res.found.values()
                                           for v in (f.ptr, f.nbytes, f.path, f.root_file, f.root_line)},
          {int, str})

    # what the hooks record: spread over the roots that hold the most, one
    # path of each first, a root's biggest then newest first; at a step, the
    # ways not seen at the previous search (a list's item count left out)
    from gpuledger import retention_torch as rt
    F = retention.Found
    found = [F(0x10, 3, "t.py: global kept (list, 3 items) → [0] → Tensor 3 B", "t.py", 1),
             F(0x20, 3, "t.py: global kept (list, 3 items) → [1] → Tensor 3 B", "t.py", 1),
             F(0x30, 3, "t.py: global kept (list, 3 items) → [2] → Tensor 3 B", "t.py", 1),
             F(0x40, 5, "t.py:9 in step: local act → Tensor 5 B", "t.py", 9),
             F(0x50, 1, "t.py: global cache (dict, 1 item) → ['a'] → Tensor 1 B", "t.py", 2)]
    check("by_root", [hex(f.ptr) for f in rt.by_root(found, 4)], ["0x30", "0x40", "0x50", "0x20"])
    check("by_root: fewer than the roots", [hex(f.ptr) for f in rt.by_root(found, 2)], ["0x30", "0x40"])
    seen = {rt.way(F(0x10, 3, "t.py: global kept (list, 2 items) → [0] → Tensor 3 B", "t.py", 1)),
            rt.way(F(0x40, 5, "t.py:9 in step: local act → Tensor 5 B", "t.py", 9))}
    check("by_root: the new ways only", [hex(f.ptr) for f in rt.by_root(found, 8, lambda f: rt.way(f) not in seen)],
          ["0x30", "0x50", "0x20"])


if __name__ == "__main__":
    sys.exit(main())
