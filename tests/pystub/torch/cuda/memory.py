"""torch.cuda.memory of the stand-in (tests only): the out-of-memory
observers, each called as observer(device, alloc, device_allocated,
device_free) before OutOfMemoryError is raised."""
_oom_observers = []


def _register_oom_observer(observer):
    _oom_observers.append(observer)
