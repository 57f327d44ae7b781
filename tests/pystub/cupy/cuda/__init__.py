"""cupy.cuda of the stand-in (tests only)."""
from . import memory, memory_hook  # noqa: F401
from .memory import MemoryPool  # noqa: F401
from .memory_hook import MemoryHook  # noqa: F401
