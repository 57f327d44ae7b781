"""torch.optim of the stand-in (tests only)."""
from .optimizer import AdamW, Optimizer  # noqa: F401
