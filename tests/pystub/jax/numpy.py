"""jax.numpy of the stand-in (tests only): arrays of nbytes in the arena."""
import jax


class Array:
    def __init__(self, nbytes):
        self._dev = jax.local_devices()[0]
        self._n = self._dev.take(nbytes)

    def __del__(self):
        if self._n:
            self._dev.give(self._n)
            self._n = 0


def zeros(nbytes):
    return Array(nbytes)
