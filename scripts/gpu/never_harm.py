"""never_harm.py — what a job sees of its own signals and processes, run the
same way bare and under `gpuledger run` (scripts/gpu-never-harm.sh).

  never_harm.py sigint CKPT   : prints SIGINT's handler, allocates on the GPU,
                                sends itself SIGINT; KeyboardInterrupt and
                                finally must run (CKPT written), exit 0
  never_harm.py loader N      : N epochs of a DataLoader with 8 workers; prints
                                {"loader_s": seconds}
  never_harm.py spawn N       : N subprocess.run(['/bin/true']); {"spawn_s": s}
  never_harm.py fork N        : N os.fork() + os._exit(0); {"fork_s": s}
"""
import json, os, signal, subprocess, sys, time

def sigint(ckpt):
    import torch
    print("sigint handler:", signal.getsignal(signal.SIGINT).__name__
          if callable(signal.getsignal(signal.SIGINT)) else signal.getsignal(signal.SIGINT))
    x = torch.empty(64 << 20, dtype=torch.uint8, device="cuda")
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(2)
        print("not interrupted")
    except KeyboardInterrupt:
        print("KeyboardInterrupt caught")
    finally:
        with open(ckpt, "w") as f:
            f.write("checkpoint %d\n" % x.numel())
        print("finally ran")
    del x

def loader(n):
    import torch
    from torch.utils.data import DataLoader, TensorDataset
    ds = TensorDataset(torch.randn(4096, 64))
    t = time.perf_counter()
    for _ in range(n):
        for (b,) in DataLoader(ds, batch_size=256, num_workers=8):
            b.cuda(non_blocking=True)
    torch.cuda.synchronize()
    print(json.dumps({"loader_s": time.perf_counter() - t}))

def spawn(n):
    t = time.perf_counter()
    for _ in range(n):
        subprocess.run(["/bin/true"], check=True)
    print(json.dumps({"spawn_s": time.perf_counter() - t}))

def fork(n):
    t = time.perf_counter()
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
    print(json.dumps({"fork_s": time.perf_counter() - t}))

if __name__ == "__main__":
    what, arg = sys.argv[1], sys.argv[2]
    {"sigint": sigint, "loader": lambda a: loader(int(a)), "spawn": lambda a: spawn(int(a)),
     "fork": lambda a: fork(int(a))}[what](arg)
