# pyembed_deep.py — run by pyembed: one allocation of 5000 bytes made
# DEPTH (default 29) recursive Python calls deep. Keep the line numbers.
import os

import glalloc


def down(n):
    if n == 0:
        return glalloc.alloc(5000)
    return down(n - 1)


down(int(os.environ.get("DEPTH", "29")))
