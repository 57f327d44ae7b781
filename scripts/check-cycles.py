#!/usr/bin/env python3
"""check-cycles.py BUILD [--graph] — the graph of which file of interpose/
and cupti/ uses which file's symbols (from the object files' symbol tables:
an undefined symbol of A defined by B is an edge A -> B) must have no cycle
once the edges listed with their reason in interpose/cycles.h
("edge: A.c -> B.c: reason") are left out. Prints each cycle with the
symbols its edges use, exit 1 if there is one. --graph prints every edge.
Also: no verb of the gpuledger command (report/cmd/cmd_*.c) uses a symbol
another verb defines (what verbs share lives outside cmd_*.c)."""
import os
import re
import subprocess
import sys


def objects(build):
    d = os.path.join(build, "interpose", "libgpuledger.so.p")
    for f in sorted(os.listdir(d)):
        if f.endswith(".o"):
            src = f[:-2]
            if src.startswith(".._"):  # ../cupti/x.c is stored as .._cupti_x.c.o
                src = src.split("_", 2)[2]
            yield src, os.path.join(d, f)


def verbs_independent(build):
    d = os.path.join(build, "report", "gpuledger.p")
    # report/cmd/cmd_x.c is stored as cmd_cmd_x.c.o
    objs = {f[len("cmd_"):-2]: os.path.join(d, f) for f in os.listdir(d) if f.startswith("cmd_cmd_") and f.endswith(".o")}
    syms = {src: symbols(obj) for src, obj in objs.items()}
    bad = 0
    for a, (_, undef) in sorted(syms.items()):
        for b, (defined, _) in sorted(syms.items()):
            used = sorted(undef & defined) if a != b else []
            if used:
                print(f"check-cycles: report/cmd/{a} uses {', '.join(used)} of report/cmd/{b}: verbs must not call each other")
                bad = 1
    return bad


def symbols(obj):
    defined, undefined = set(), set()
    for line in subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout.splitlines():
        p = line.split()
        if len(p) == 2 and p[0] == "U":
            undefined.add(p[1])
        elif len(p) == 3 and p[1] in "TDBRVWGS":
            defined.add(p[2])
    return defined, undefined


def sccs(nodes, edges):
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    build = sys.argv[1]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    syms = {src: symbols(obj) for src, obj in objects(build)}
    owner = {s: src for src, (d, _) in syms.items() for s in d}
    edges = {}
    for src, (_, u) in syms.items():
        for s in u:
            if s in owner and owner[s] != src:
                edges.setdefault(src, set()).add(owner[s])
    if "--graph" in sys.argv:
        for a in sorted(edges):
            print(a, "->", " ".join(sorted(edges[a])))
    cycles_h = open(os.path.join(root, "interpose", "cycles.h")).read()
    allowed = set(re.findall(r"edge: (\S+) -> (\S+):", cycles_h))
    for a, b in sorted(allowed):
        if b not in edges.get(a, ()):
            print(f"check-cycles: interpose/cycles.h lists {a} -> {b}, which is not an edge (any more): remove it")
            return 1
    kept = {a: {b for b in bs if (a, b) not in allowed} for a, bs in edges.items()}
    bad = 0
    for comp in sccs(syms, kept):
        if len(comp) < 2:
            continue
        bad = 1
        print("cycle:", " ".join(comp))
        for a in comp:
            for b in sorted(kept.get(a, ())):
                if b in comp:
                    why = sorted(s for s in syms[a][1] if owner.get(s) == b)
                    print(f"  {a} -> {b} (uses {', '.join(why)})")
    if bad:
        print("check-cycles: break these cycles, or list the edge that closes each with its reason in "
              "interpose/cycles.h")
    return bad | verbs_independent(build)


if __name__ == "__main__":
    sys.exit(main())
