"""fw_jax.py — a JAX job (scripts/gpu-frameworks.sh): a few jitted steps,
each ended with gpuledger.step(). Prints what memory_stats() says at the end."""
import jax
import jax.numpy as jnp

import gpuledger


@jax.jit
def step(w, x):
    return w - 1e-3 * (x.T @ (x @ w))


w = jnp.ones((2048, 2048), jnp.float32)
for i in range(4):
    x = jax.random.normal(jax.random.PRNGKey(i), (4096, 2048), jnp.float32)
    w = step(w, x)
    w.block_until_ready()
    gpuledger.step()
del x
st = jax.local_devices()[0].memory_stats()
print("JAX in_use=%d peak=%d limit=%d" % (st["bytes_in_use"], st["peak_bytes_in_use"], st["bytes_limit"]),
      flush=True)
