"""torch.cuda.memory of the stand-in (tests only): the out-of-memory
observers, attached as PyTorch 2.11 attaches them
(torch._C._cuda_attach_out_of_memory_observer; torch.cuda.memory has no
public register function there), each called as observer(device, alloc,
device_allocated, device_free) before OutOfMemoryError is raised."""
_oom_observers = []


def _attach(observer):
    _oom_observers.append(observer)
