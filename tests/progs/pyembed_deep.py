# pyembed_deep.py — run by pyembed: one allocation 30 Python calls deep
import glalloc


def down(n):
    if n == 0:
        return glalloc.alloc(5000)
    return down(n - 1)


down(29)
