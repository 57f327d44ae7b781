#!/usr/bin/env python3
"""check-duplicates.py DIR... — fail when two places in the C sources under
DIRs hold the same run of MIN (6) or more lines of code: copied logic that
should be one function. Lines are compared with white space folded;
blank lines, comments, preprocessor lines and lines of punctuation alone
(braces, "} else {") are passed over. Prints each pair as FILE:FIRST-LAST ~ FILE:FIRST-LAST; exit 1 if
there is one."""
import os
import re
import sys

MIN = 6


def code_lines(path):
    """(line number, folded text) of each line that counts."""
    text = open(path, encoding="utf-8", errors="replace").read()
    # comments out, newlines kept so numbers stay right
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    out = []
    for n, line in enumerate(text.split("\n"), 1):
        line = re.sub(r"//.*", "", line)
        folded = " ".join(line.split())
        if not folded or folded.startswith("#") or not re.search(r"[A-Za-z0-9]", folded):
            continue
        if folded in ("} else {", "else", "default:"):
            continue
        out.append((n, folded))
    return out


def main():
    files = sorted(os.path.join(root, f) for d in sys.argv[1:] for root, _, fs in os.walk(d)
                   for f in fs if f.endswith((".c", ".h")))
    lines = {f: code_lines(f) for f in files}
    seen = {}  # run of MIN folded lines -> first (file, index)
    pairs = {}
    for f in files:
        ls = lines[f]
        for i in range(len(ls) - MIN + 1):
            key = tuple(t for _, t in ls[i:i + MIN])
            if key in seen:
                g, j = seen[key]
                if g == f and i - j < MIN:
                    continue  # overlapping repeat of one line pattern
                pairs.setdefault((g, f, j - i), []).append((j, i))
            else:
                seen[key] = (f, i)
    bad = 0
    for (g, f, _), runs in sorted(pairs.items()):
        j0, i0 = runs[0]
        j1, i1 = runs[-1]
        a = f"{g}:{lines[g][j0][0]}-{lines[g][j1 + MIN - 1][0]}"
        b = f"{f}:{lines[f][i0][0]}-{lines[f][i1 + MIN - 1][0]}"
        print(f"duplicate: {a} ~ {b}")
        bad = 1
    if bad:
        print(f"check-duplicates: the same {MIN}+ lines stand in two places; make them one function")
    return bad


if __name__ == "__main__":
    sys.exit(main())
