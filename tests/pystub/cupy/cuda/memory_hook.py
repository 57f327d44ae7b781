"""cupy.cuda.memory_hook of the stand-in (tests only): hooks registered per
thread by `with hook:` (or __enter__), each with a unique name, called with
keyword arguments as CuPy calls them."""
import collections
import threading

_local = threading.local()


def get_memory_hooks():
    hooks = getattr(_local, "memory_hooks", None)
    if hooks is None:
        hooks = _local.memory_hooks = collections.OrderedDict()
    return hooks


class MemoryHook:
    name = None

    def __enter__(self):
        hooks = get_memory_hooks()
        if self.name in hooks:
            raise RuntimeError("memory hook %s already exists" % self.name)
        hooks[self.name] = self
        return self

    def __exit__(self, *exc):
        del get_memory_hooks()[self.name]

    def alloc_preprocess(self, **kw):
        pass

    def alloc_postprocess(self, **kw):
        pass

    def malloc_preprocess(self, **kw):
        pass

    def malloc_postprocess(self, **kw):
        pass

    def free_preprocess(self, **kw):
        pass

    def free_postprocess(self, **kw):
        pass
