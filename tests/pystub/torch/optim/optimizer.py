"""torch.optim.optimizer of the stand-in (tests only): the global step
hooks, and an AdamW that makes its state (two tensors per parameter, and a
step count that is not a tensor) at its first step, with temporaries made
and freed inside each step; step(closure) calls the closure first, as
torch's optimizers do."""
import collections
import itertools

import torch

_ids = itertools.count()
_pre, _post = {}, {}


class _Handle:
    def __init__(self, table, key):
        self.table, self.key = table, key

    def remove(self):
        self.table.pop(self.key, None)


def register_optimizer_step_pre_hook(hook):
    k = next(_ids)
    _pre[k] = hook
    return _Handle(_pre, k)


def register_optimizer_step_post_hook(hook):
    k = next(_ids)
    _post[k] = hook
    return _Handle(_post, k)


class Optimizer:
    def __init__(self, params):
        self.param_groups = [{"params": list(params)}]
        self.state = collections.defaultdict(dict)

    def step(self, *args, **kwargs):
        """As torch's profile_hook_step: the hooks get (self, args, kwargs)
        with self at args[0]; a pre hook may return new (args, kwargs)."""
        args = (self,) + args
        for h in list(_pre.values()):
            got = h(self, args, kwargs)
            if got is not None:
                args, kwargs = got
        out = self._step(*args[1:], **kwargs)
        for h in list(_post.values()):
            h(self, args, kwargs)
        return out

    def zero_grad(self, set_to_none=True):
        for g in self.param_groups:
            for p in g["params"]:
                p.grad = None


class AdamW(Optimizer):
    def _step(self, closure=None):
        loss = closure() if closure is not None else None  # LBFGS and Lightning's way
        for g in self.param_groups:
            for p in g["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                if not st:
                    st["step"] = 0
                    st["exp_avg"] = torch.Tensor(p.nbytes)
                    st["exp_avg_sq"] = torch.Tensor(p.nbytes)
                st["step"] += 1
                tmp = torch.Tensor(p.nbytes)  # an optimizer temporary
                del tmp
        return loss
