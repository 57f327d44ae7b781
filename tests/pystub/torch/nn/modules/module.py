"""torch.nn.modules.module of the stand-in (tests only): Module with the
global and per-instance forward hooks the gpuledger package uses."""
import itertools

_ids = itertools.count()
_global_pre, _global_post = {}, {}


class _Handle:
    def __init__(self, table, key):
        self.table, self.key = table, key

    def remove(self):
        self.table.pop(self.key, None)


def _add(table, hook):
    k = next(_ids)
    table[k] = hook
    return _Handle(table, k)


def register_module_forward_pre_hook(hook):
    return _add(_global_pre, hook)


def register_module_forward_hook(hook, *, always_call=False):
    return _add(_global_post, hook)


class Module:
    def __init__(self):
        object.__setattr__(self, "_params", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_children", {})
        object.__setattr__(self, "_pre", {})
        object.__setattr__(self, "_post", {})

    def __setattr__(self, name, value):
        from torch.nn import Parameter
        if isinstance(value, Parameter):
            self._params[name] = value
        elif isinstance(value, Module):
            self._children[name] = value
        object.__setattr__(self, name, value)

    def register_buffer(self, name, tensor):
        self._buffers[name] = tensor
        object.__setattr__(self, name, tensor)

    def modules(self):
        yield self
        for c in self._children.values():
            yield from c.modules()

    def parameters(self):
        for m in self.modules():
            yield from m._params.values()

    def buffers(self):
        for m in self.modules():
            yield from m._buffers.values()

    def register_forward_pre_hook(self, hook):
        return _add(self._pre, hook)

    def register_forward_hook(self, hook, *, always_call=False):
        return _add(self._post, hook)

    def __call__(self, *args):
        for h in list(_global_pre.values()) + list(self._pre.values()):
            h(self, args)
        out = self.forward(*args)
        for h in list(_global_post.values()) + list(self._post.values()):
            h(self, args, out)
        return out
