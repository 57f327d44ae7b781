"""torch_hooks.py — exact categories from identity, through PyTorch's public
hooks (no monkeypatching): gpuledger is told which addresses hold parameters,
gradients, optimizer state and KV-cache tensors, and the report gives the
block live at such an address that category for its whole life.

* Every optimizer (torch.optim's global step hooks): around each step() a
  range "optimizer.step" (what is allocated and freed inside it is the
  optimizer's temporaries, apart from its state), and around the closure
  step(closure) calls (LBFGS, Lightning) a range "optimizer.closure" (its
  forward and backward as in an eager loop); after it, the parameters,
  their gradients and the state tensors — each sent only when its address
  changed, in one batched call per category — and the end of a step for
  `gpuledger leaks --steps`.
* The model (for inference too): the first top-level module calls are
  watched with global forward hooks, then those are removed and each root
  module gets its own pre/post hooks: a range "forward" around its forward
  (activations are what forward makes and backward frees), its parameters
  and buffers, and the key/value tensors of a Hugging Face Cache it returns
  (past_key_values) as KV cache.

GPULEDGER_TORCH_HOOKS=0 turns all of it off; set_enabled() switches it at run
time (for measuring what it costs).
"""
import array
import itertools
import weakref

from . import _lib

_tag, _push, _pop, _mark = _lib.tag, _lib.range_push, _lib.range_pop, _lib.mark
_enabled = True


def set_enabled(on):
    """Turn the hooks' work on or off (they stay registered)."""
    global _enabled
    _enabled = bool(on)


def _send(category, pairs):
    """One gpuledger_tag call for a list of (address, bytes)."""
    if not pairs or _tag is None:
        return
    addrs = array.array("Q", [p[0] for p in pairs])
    sizes = array.array("Q", [p[1] for p in pairs])
    _tag(category, addrs.buffer_info()[0], sizes.buffer_info()[0], len(pairs))


def _cuda(t):
    return t is not None and getattr(t, "is_cuda", False) and t.data_ptr() != 0


class _Seen:
    """The tensors last sent for one category of one owner, by address:
    send only what is new — a tensor at a new address, or a new tensor at an
    address seen before (the allocator reuses addresses; a tag holds for its
    block's whole life)."""

    __slots__ = ("refs",)

    def __init__(self):
        self.refs = {}

    def update(self, category, tensors):
        fresh, now = [], {}
        for t in tensors:
            p = t.data_ptr()
            r = self.refs.get(p)
            if r is None or r() is not t:
                fresh.append((p, t.nbytes))
                try:
                    r = weakref.ref(t)
                except TypeError:  # not weakly referable: send it every time
                    r = _never
            now[p] = r
        self.refs = now
        _send(category, fresh)


def _never():
    return None


# ---- optimizers -----------------------------------------------------------

class _OptState:
    __slots__ = ("params", "nparams", "nstate", "steps", "open", "seen_p", "seen_g", "seen_s")

    def __init__(self):
        self.params, self.nparams, self.nstate, self.steps, self.open = [], -1, -1, 0, False
        self.seen_p, self.seen_g, self.seen_s = _Seen(), _Seen(), _Seen()


_opts = weakref.WeakKeyDictionary()
_step_no = itertools.count()


def _opt_state(opt):
    st = _opts.get(opt)
    if st is None:
        st = _opts[opt] = _OptState()
    n = sum(len(g["params"]) for g in opt.param_groups)
    if n != st.nparams:
        st.params = [p for g in opt.param_groups for p in g["params"]]
        st.nparams = n
    return st


def _in_step(closure):
    """The closure step(closure) calls (LBFGS, Lightning), inside a range
    "optimizer.closure": what its forward and backward make is categorised
    as in an eager loop, not as the optimizer's temporaries."""
    def closure_in_step(*a, **kw):
        pushed = _enabled and _push is not None
        if pushed:
            _push(b"optimizer.closure")
        try:
            return closure(*a, **kw)
        finally:
            if pushed and _pop is not None:
                _pop()
    return closure_in_step


def _with_closure(opt, args, kwargs):
    """(args, kwargs) with step()'s closure wrapped (torch passes self as
    args[0]), or None when there is none."""
    if callable(kwargs.get("closure")):
        kwargs = dict(kwargs, closure=_in_step(kwargs["closure"]))
        return args, kwargs
    at = 1 if args and args[0] is opt else 0
    if len(args) > at and callable(args[at]):
        return args[:at] + (_in_step(args[at]),) + tuple(args[at + 1:]), kwargs
    return None


def _opt_pre(opt, args, kwargs):
    if _enabled and _push is not None:
        _push(b"optimizer.step")
        _opt_state(opt).open = True
        if args or kwargs:
            return _with_closure(opt, args, kwargs)
    return None


def _opt_post(opt, args, kwargs):
    st = _opt_state(opt)
    if not _enabled:
        if st.open and _pop is not None:
            _pop()
        st.open = False
        return
    params = st.params
    if st.steps % 64 == 0:  # parameters rarely move: look every 64 steps
        st.seen_p.update(_lib.TAG_PARAMETERS, [p for p in params if _cuda(p)])
    st.seen_g.update(_lib.TAG_GRADIENTS, [g for g in (p.grad for p in params) if _cuda(g)])
    nstate = len(opt.state)
    if nstate != st.nstate or st.steps % 64 == 0:  # state appears at the first step(s)
        st.nstate = nstate
        st.seen_s.update(_lib.TAG_OPTIMIZER_STATE,
                         [v for s in opt.state.values() for v in s.values() if _cuda(v)])
    st.steps += 1
    if st.open and _pop is not None:
        _pop()
    st.open = False
    if _mark is not None:
        _mark(b"optimizer step %d" % next(_step_no))


# ---- models ----------------------------------------------------------------

_roots = weakref.WeakKeyDictionary()  # root module -> _RootState
_inside = set()                       # id() of every module under a watched root
_global = []                          # the global hooks' handles, until removed
_depth = [0]                          # nesting of module calls (global hooks)
_top_calls = [0]                      # top-level module calls seen
_all_calls = [0]                      # module calls seen by the global hooks
_WATCH_TOP, _WATCH_ALL = 8, 100000    # then the global hooks go (they cost on every module call)


class _RootState:
    __slots__ = ("first", "nparams", "open", "seen_p", "seen_b", "seen_kv")

    def __init__(self):
        self.first, self.nparams, self.open = None, -1, 0
        self.seen_p, self.seen_b, self.seen_kv = _Seen(), _Seen(), _Seen()


def _first_param_ptr(root):
    for p in root.parameters():
        return p.data_ptr()
    return 0


def _check_params(root, st):
    params = list(root.parameters())
    first = params[0].data_ptr() if params else 0
    if first != st.first or len(params) != st.nparams:
        st.first, st.nparams = first, len(params)
        st.seen_p.update(_lib.TAG_PARAMETERS, [p for p in params if _cuda(p)])
        st.seen_b.update(_lib.TAG_BUFFERS, [b for b in root.buffers() if _cuda(b)])


def _root_pre(module, args):
    if not _enabled:
        return
    st = _roots.get(module)
    if st is None:
        return
    if _first_param_ptr(module) != st.first:
        _check_params(module, st)  # moved (.to(), new storage loaded)
    if _push is not None:
        _push(b"forward")
        st.open += 1


def _kv_tensors(pkv):
    """The key/value tensors of a Hugging Face Cache (or legacy tuples)."""
    layers = getattr(pkv, "layers", None)
    if layers is not None:  # transformers >= 4.54: Cache.layers[i].keys / .values
        for layer in layers:
            for name in ("keys", "values"):
                t = getattr(layer, name, None)
                if _cuda(t):
                    yield t
        return
    for name in ("key_cache", "value_cache"):  # older DynamicCache
        for t in getattr(pkv, name, None) or ():
            if _cuda(t):
                yield t
    if isinstance(pkv, (tuple, list)):  # legacy ((k, v), (k, v), ...)
        for item in pkv:
            if isinstance(item, (tuple, list)):
                for t in item:
                    if _cuda(t):
                        yield t


def _root_post(module, args, output):
    st = _roots.get(module)
    if st is None:
        return
    if st.open > 0:  # the range its pre hook opened (even when disabled since)
        st.open -= 1
        if _pop is not None:
            _pop()
    if not _enabled:
        return
    pkv = getattr(output, "past_key_values", None)
    if pkv is None and isinstance(output, dict):
        pkv = output.get("past_key_values")
    if pkv is not None:
        st.seen_kv.update(_lib.TAG_KV_CACHE, list(_kv_tensors(pkv)))


def _watch(root):
    st = _roots[root] = _RootState()
    for m in root.modules():
        _inside.add(id(m))
    _check_params(root, st)
    root.register_forward_pre_hook(_root_pre)
    try:
        root.register_forward_hook(_root_post, always_call=True)
    except TypeError:  # torch < 2.0
        root.register_forward_hook(_root_post)


def _drop_global():
    for h in _global:
        h.remove()
    del _global[:]


def _global_pre(module, args):
    _all_calls[0] += 1
    if _depth[0] == 0 and id(module) not in _inside and _enabled:
        try:
            _watch(module)  # a top-level call: a root (a model, a loss module)
        except Exception:  # never break the job's forward
            pass
    _depth[0] += 1
    if _all_calls[0] >= _WATCH_ALL:
        _drop_global()


def _global_post(module, args, output):
    _depth[0] = max(0, _depth[0] - 1)
    if _depth[0] == 0:
        _top_calls[0] += 1
        if _top_calls[0] >= _WATCH_TOP:
            _drop_global()


def install(torch):
    """Register the hooks (once per process)."""
    if getattr(install, "done", False):
        return
    install.done = True
    import torch.nn.modules.module as module
    import torch.optim.optimizer as optimizer
    optimizer.register_optimizer_step_pre_hook(_opt_pre)
    optimizer.register_optimizer_step_post_hook(_opt_post)
    _global.append(module.register_module_forward_pre_hook(_global_pre))
    try:
        _global.append(module.register_module_forward_hook(_global_post, always_call=True))
    except TypeError:  # torch < 2.0
        _global.append(module.register_module_forward_hook(_global_post))
