"""retention.py — what keeps GPU memory alive: from the program's roots (its
own modules' globals, every thread's frames' locals), a breadth-first walk
through what they reference (dict entries, list and tuple items, set
members, instance and class attributes, closure cells, default arguments,
bound methods' objects) to the tensors it finds, each named by its storage's
address (the block's address in the ledger). Returns, for each storage, the
shortest path found, as text:

    train.py: global logits_kept (list, 18 items) → [17] → Tensor 1000 MiB

The walk is bounded by depth, objects visited and time (the clock is read
every _CLOCK_EVERY objects; it may be injected); a bound that cuts it makes
the result incomplete. It calls no __getattr__, property or overridden
container method of the program's (dict.items, list.__iter__ and the like
are called on the base types), and it keeps no reference to anything it
visited once it returns: its results are strings and numbers.

Pure Python, no torch: what a tensor is and its storage's address and bytes
come from a `tensors` argument (retention_torch.py gives PyTorch's).
"""
import collections
import linecache
import os
import sys
import sysconfig
import time
import types

_ATOMIC = frozenset((str, bytes, bytearray, int, float, complex, bool, type(None), range, slice,
                     types.BuiltinFunctionType, types.CodeType, type(Ellipsis), memoryview))
_CLOCK_EVERY = 64
_TEXT_MAX = 60  # characters of one step's key or name


class Tensors:
    """What a tensor is: `kind` its class (or a tuple of classes),
    storage(t) -> (address, bytes) of the memory it keeps alive (None: none)."""

    def __init__(self, kind, storage, name="Tensor"):
        self.kind, self.storage, self.name = kind, storage, name


class Found:
    """One storage and the path that reaches it."""

    __slots__ = ("ptr", "nbytes", "path", "root_file", "root_line")

    def __init__(self, ptr, nbytes, path, root_file, root_line):
        self.ptr, self.nbytes, self.path, self.root_file, self.root_line = ptr, nbytes, path, root_file, root_line

    def __repr__(self):
        return "Found(%#x, %d, %r)" % (self.ptr, self.nbytes, self.path)


class Result:
    """found: {address: Found}; complete: no bound cut the walk;
    visited: objects looked at; elapsed_us; cut: which bound ("" none)."""

    __slots__ = ("found", "complete", "visited", "elapsed_us", "cut")

    def __init__(self, found, complete, visited, elapsed_us, cut):
        self.found, self.complete, self.visited, self.elapsed_us, self.cut = found, complete, visited, elapsed_us, cut


def fmt_bytes(n):
    """1000 MiB, 1.5 GiB, 512 KiB, 12 B."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            v = n / scale
            return ("%d %s" % (v, unit)) if v == int(v) else ("%.1f %s" % (v, unit))
    return "%d B" % n


def _short(text):
    return text if len(text) <= _TEXT_MAX else text[:_TEXT_MAX - 1] + "…"


def _key_text(k):
    if k.__class__ in (str, int, bytes, float, bool) or k is None:
        return "[%s]" % _short(repr(k))
    return "[<%s>]" % type(k).__name__


def _describe(o):
    """ (list, 18 items)  /  (Holder)  /  (function) """
    t = type(o)
    if t in (list, tuple, dict, set, frozenset, collections.deque) or isinstance(o, (list, tuple, dict, set)):
        try:
            n = len(o) if t in (list, tuple, dict, set, frozenset, collections.deque) else \
                (dict.__len__(o) if isinstance(o, dict) else list.__len__(o) if isinstance(o, list)
                 else tuple.__len__(o) if isinstance(o, tuple) else set.__len__(o))
        except Exception:  # noqa: BLE001
            return " (%s)" % t.__name__
        return " (%s, %d item%s)" % (t.__name__, n, "" if n == 1 else "s")
    if isinstance(o, type):
        return " (class)"
    return " (%s)" % t.__name__


def _instance_dict(o):
    try:
        d = object.__getattribute__(o, "__dict__")
    except Exception:  # noqa: BLE001 - no __dict__, or a C type's
        return None
    return d if isinstance(d, dict) else None


def _slots(t):
    for k in t.__mro__:
        s = k.__dict__.get("__slots__")
        if s is None:
            continue
        for name in ((s,) if isinstance(s, str) else s):
            if name in ("__dict__", "__weakref__"):
                continue
            yield name, k.__dict__.get(name)


def _children(o, own, snapshots):
    """(step text, child) for what o references, without running the
    program's code. own: classes whose attributes are searched; snapshots:
    where the frames' locals dicts made for the walk go (to be emptied)."""
    t = type(o)
    if isinstance(o, dict):
        for k, v in list(dict.items(o)):
            yield _key_text(k), v
        return
    if isinstance(o, list):
        for i, v in enumerate(list(list.__iter__(o))):
            yield "[%d]" % i, v
        return
    if isinstance(o, tuple):
        for i, v in enumerate(tuple.__iter__(o)):
            yield "[%d]" % i, v
        return
    if isinstance(o, (set, frozenset)):
        for v in list(set.__iter__(o) if isinstance(o, set) else frozenset.__iter__(o)):
            yield "{…}", v
        return
    if isinstance(o, collections.deque):
        for i, v in enumerate(list(collections.deque.__iter__(o))):
            yield "[%d]" % i, v
        return
    if t is types.FunctionType:
        code = o.__code__
        for name, cell in zip(code.co_freevars, o.__closure__ or ()):
            try:
                yield "<closure %s>" % name, cell.cell_contents
            except ValueError:  # an empty cell
                pass
        for i, v in enumerate(o.__defaults__ or ()):
            yield "<default %d>" % i, v
        for k, v in (o.__kwdefaults__ or {}).items():
            yield "<default %s>" % k, v
        return
    if t is types.MethodType:
        yield ".__self__", o.__self__
        return
    if t is types.CellType:
        try:
            yield "<cell>", o.cell_contents
        except ValueError:
            pass
        return
    if isinstance(o, type):
        if o in own:
            for k, v in list(o.__dict__.items()):
                if not (k.startswith("__") and k.endswith("__")):
                    yield "." + _short(k), v
        return
    if t is types.FrameType:
        yield from _frame_locals(o, snapshots)
        return
    d = _instance_dict(o)
    if d is not None:
        for k, v in list(dict.items(d)):
            yield ("." + _short(k)) if k.__class__ is str else _key_text(k), v
    for name, desc in _slots(t):
        if isinstance(desc, types.MemberDescriptorType):
            try:
                yield "." + name, desc.__get__(o, t)
            except AttributeError:  # not set
                pass


_CO_OPTIMIZED = 0x1
_SNAPSHOT = sys.version_info < (3, 13)  # PEP 667: f_locals is a proxy from 3.13 on


def _frame_locals(f, snapshots):
    """A frame's locals. Before 3.13, f_locals of a function's frame is a
    dict the frame keeps until it returns, holding what the locals held when
    it was read: the walk empties it when done (else it would keep alive a
    tensor the function drops later; the next f_locals or locals() fills it
    again)."""
    try:
        loc = f.f_locals
    except Exception:  # noqa: BLE001
        return
    if _SNAPSHOT and isinstance(loc, dict) and f.f_code.co_flags & _CO_OPTIMIZED and loc is not f.f_globals:
        snapshots.append(loc)
    for k, v in list(dict.items(loc)) if isinstance(loc, dict) else list(loc.items()):
        yield "." + _short(str(k)), v


def _library_dirs():
    dirs = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            dirs.add(os.path.realpath(p) + os.sep)
    for p in (sys.prefix, sys.base_prefix, sys.exec_prefix):
        dirs.add(os.path.realpath(os.path.join(p, "lib")) + os.sep)
    return tuple(dirs)


_LIBS = None
_HERE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_PROGRAM_FILE = {}  # path -> is_program_file(path): realpath once per file
_PROGRAM_FILE_MAX = 65536


def is_program_file(path):
    """A file of the program's own (not the standard library's, not an
    installed package's, not gpuledger's). Remembered per path: a job that
    imported transformers has thousands of modules, and one realpath each
    at every search cost 100 ms on the H200's host."""
    global _LIBS
    if not path or path.startswith("<"):
        return False
    known = _PROGRAM_FILE.get(path)
    if known is not None:
        return known
    if _LIBS is None:
        _LIBS = _library_dirs()
    p = os.path.realpath(path)
    mine = not (p.startswith(_HERE) or "site-packages" in p or "dist-packages" in p or p.startswith(_LIBS))
    if len(_PROGRAM_FILE) < _PROGRAM_FILE_MAX:
        _PROGRAM_FILE[path] = mine
    return mine


def _global_line(path, name):
    """The first line of path that assigns name at the top level (0: none)."""
    for n, line in enumerate(linecache.getlines(path), 1):
        if line.startswith(name):
            rest = line[len(name):].lstrip()
            if rest.startswith("=") and not rest.startswith("=="):
                return n
            if rest.startswith(":") or rest.startswith("+=") or rest.startswith(" ="):
                return n
        if line.startswith(("def %s(" % name, "class %s(" % name, "class %s:" % name)):
            return n
    return 0


def module_file(m):
    """A module's file: __file__, else its spec's or loader's (CPython
    deletes __main__.__file__ once the script has run: at exit)."""
    d = m.__dict__
    path = d.get("__file__")
    if isinstance(path, str):
        return path
    for holder, attr in ((d.get("__spec__"), "origin"), (d.get("__loader__"), "path")):
        v = getattr(holder, attr, None) if holder is not None else None
        if isinstance(v, str) and v not in ("built-in", "frozen"):
            return v
    return None


def program_roots(skip_frames=()):
    """(root text, file, line, object) for the program's roots: the frames'
    locals of every thread (innermost first; skip_frames: code objects whose
    frames are left out, e.g. the caller's own), then __main__'s globals,
    then the globals of every other module of the program's files."""
    roots = []
    for tid, top in list(sys._current_frames().items()):
        f = top
        while f is not None:
            code = f.f_code
            if code.co_filename.startswith(_HERE) or code in skip_frames:
                f = f.f_back
                continue
            if code.co_name != "<module>":  # a module's frame: its globals come below
                roots.append(("%s:%d in %s: local" % (os.path.basename(code.co_filename), f.f_lineno, code.co_name),
                              code.co_filename, f.f_lineno, f))
            f = f.f_back
        del top, f
    mods = []
    for name, m in list(sys.modules.items()):
        path = module_file(m) if isinstance(m, types.ModuleType) else None
        if name == "__main__" or (path and is_program_file(path)):
            mods.append((name != "__main__", name, m, path or "<main>"))
    mods.sort(key=lambda x: (x[0], x[1]))
    for _, name, m, path in mods:
        roots.append(("%s: global" % os.path.basename(path), path, 0, m))
    return roots


def find(tensors, roots=None, max_depth=12, max_objects=200000, budget_s=0.05, clock=time.perf_counter):
    """Walk from roots ((text, file, line, object), default program_roots())
    to the tensors: a Result whose found maps each storage address to the
    Found of the shortest path. Bounded by depth, objects and seconds."""
    t0 = clock()
    deadline = t0 + budget_s
    if roots is None:
        roots = program_roots()
    kind, storage, tname = tensors.kind, tensors.storage, tensors.name
    own = set()
    module_dicts = set()
    for text, path, line, o in roots:
        if isinstance(o, types.ModuleType):
            module_dicts.add(id(o.__dict__))
            for v in list(o.__dict__.values()):
                if isinstance(v, type) and getattr(v, "__module__", None) == o.__name__:
                    own.add(v)
    # node: (object, parent index, step text); the walk's own list, dropped at return
    nodes = []
    seen = set()
    found = {}
    queue = collections.deque()
    snapshots = []
    visited, cut = 0, ""
    for r, (text, path, line, o) in enumerate(roots):
        seen.add(id(o))
        nodes.append((o, -1, r, 0))
        queue.append(len(nodes) - 1)
    seen.add(id(nodes))
    seen.add(id(roots))
    try:
        while queue:
            i = queue.popleft()
            o, parent, step, depth = nodes[i]
            visited += 1
            if visited % _CLOCK_EVERY == 0 and clock() > deadline:
                cut = "time"
                break
            if isinstance(o, kind):
                try:
                    st = storage(o)
                except Exception:  # noqa: BLE001 - a tensor without a storage (a subclass's, a meta one)
                    st = None
                if st is not None and st[0]:
                    # the shortest path, but a global's before a frame's
                    # local (the frame lets go when it returns)
                    r = _root_of(nodes, i)
                    old = found.get(st[0])
                    if old is None or (old[0] and not isinstance(roots[r][3], types.FrameType)):
                        found[st[0]] = (isinstance(roots[r][3], types.FrameType), i, st)
                continue  # a tensor's own references are not followed
            if depth >= max_depth:
                if _has_children(o):
                    cut = cut or "depth"
                continue
            if isinstance(o, types.ModuleType) and parent >= 0:
                continue  # another module: a root of its own, or a library's
            try:
                kids = list(_children(o, own, snapshots))
            except Exception:  # noqa: BLE001 - never break the job for one object
                continue
            for text, c in kids:
                if type(c) in _ATOMIC or id(c) in module_dicts:
                    continue
                if id(c) in seen and not isinstance(c, kind):  # a tensor is looked at on every path
                    continue
                if len(nodes) >= max_objects:
                    cut = "objects"
                    break
                seen.add(id(c))
                nodes.append((c, i, text, depth + 1))
                queue.append(len(nodes) - 1)
            del kids
        found = {p: _path(nodes, roots, i, st, tname) for p, (_, i, st) in found.items()}
    finally:
        nodes.clear()
        queue.clear()
        for d in snapshots:
            d.clear()
        del snapshots[:]
    elapsed = int((clock() - t0) * 1e6)
    return Result(found, not cut, visited, elapsed, cut)


def _root_of(nodes, i):
    while nodes[i][1] >= 0:
        i = nodes[i][1]
    return nodes[i][2]


def _has_children(o):
    return isinstance(o, (dict, list, tuple, set, frozenset)) or _instance_dict(o) is not None


def _path(nodes, roots, i, st, tname):
    """The Found for node i (a tensor): its steps from the root."""
    chain = []
    while i >= 0:
        o, parent, step, depth = nodes[i]
        chain.append((o, step, parent))
        i = parent
    chain.reverse()
    root_text, root_file, root_line, root_obj = roots[chain[0][1]]
    parts = []
    for k, (o, step, parent) in enumerate(chain[1:], 1):
        is_last = k == len(chain) - 1
        desc = "" if is_last else _describe(o)
        if k == 1:  # a global's or a local's name
            name = step[1:] if step.startswith(".") else step
            if isinstance(root_obj, types.ModuleType) and not root_line:
                root_line = _global_line(root_file, name)
            parts.append("%s %s%s" % (root_text, name, desc))
        else:
            parts.append(step + desc)
    parts.append("%s %s" % (tname, fmt_bytes(st[1])))
    if len(chain) == 1:  # the root itself is a tensor (not reached: roots are frames and modules)
        parts.insert(0, root_text)
    return Found(st[0], st[1], " → ".join(parts), root_file, root_line)
