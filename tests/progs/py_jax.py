"""py_jax.py — a JAX job (the stand-in of tests/pystub/jax) under gpuledger
run, marking its steps with gpuledger.step(): the allocator's statistics
are sampled there and at exit. Prints what memory_stats() says at the end."""
import gpuledger
import jax
import jax.numpy as jnp

MiB = 1 << 20
kept = []
for step in range(3):
    a = jnp.zeros(5 * MiB)  # freed at the end of the step
    kept.append(jnp.zeros(MiB + 100))
    gpuledger.step()
    del a
st = jax.local_devices()[0].memory_stats()
print("stats in_use=%d peak=%d limit=%d" % (st["bytes_in_use"], st["peak_bytes_in_use"], st["bytes_limit"]))
