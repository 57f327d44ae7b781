"""jax._src.xla_bridge of the stand-in (tests only): the backends made so far."""
_backends = {}
