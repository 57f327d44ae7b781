"""torch_graph_capture.py — torch.cuda.graph, run bare and under gpuledger by
scripts/gpu-every-byte.sh (with the default caching allocator and with
PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync): a capture must succeed, its
replays must give what eager execution gives.

    python3 torch_graph_capture.py [--mode global|thread_local|relaxed]

1. forward: a 3-layer MLP's forward captured (capture_error_mode --mode,
   PyTorch's default "global"), replayed 5 times on new inputs, each output
   compared with the eager forward;
2. train: a whole training step captured (forward, MSE loss, backward, SGD
   step — autograd's device thread allocates inside the capture), replayed 5
   times on new data next to an eager copy of the model trained the same
   way: the losses and the final weights compared.
Prints one line per part and "GRAPH ok" or "GRAPH FAILED"; exit 0 when ok."""
import argparse
import copy
import sys

import torch


def mlp():
    return torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 512)).cuda()


def close(a, b):
    return (a - b).abs().max().item()


def warm(fn, n=3):  # on a side stream, as PyTorch's documentation asks before a capture
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(n):
            fn()
    torch.cuda.current_stream().wait_stream(s)


def forward(mode):
    torch.manual_seed(0)
    model = mlp()
    static_in = torch.randn(64, 512, device="cuda")
    with torch.no_grad():
        warm(lambda: model(static_in))
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, capture_error_mode=mode):
            static_out = model(static_in)
        worst = 0.0
        for _ in range(5):
            static_in.copy_(torch.randn(64, 512, device="cuda"))
            g.replay()
            worst = max(worst, close(static_out, model(static_in)))
    torch.cuda.synchronize()
    ok = worst < 1e-3
    print("forward (%s): 5 replays, largest difference from eager %.2e: %s" % (mode, worst, "ok" if ok else "WRONG"))
    return ok


def train(mode):
    torch.manual_seed(1)
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    loss_fn = torch.nn.MSELoss()
    static_x = torch.randn(64, 512, device="cuda")
    static_y = torch.randn(64, 512, device="cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(static_x), static_y)
        loss.backward()
        opt.step()
        return loss

    warm(step)
    twin = copy.deepcopy(model)  # the weights the capture starts from (a capture runs nothing)
    twin_opt = torch.optim.SGD(twin.parameters(), lr=0.05)
    g = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(g, capture_error_mode=mode):
        static_loss = loss_fn(model(static_x), static_y)
        static_loss.backward()
        opt.step()
    losses, worst = [], 0.0
    for i in range(5):
        x, y = torch.randn(64, 512, device="cuda"), torch.randn(64, 512, device="cuda")
        static_x.copy_(x)
        static_y.copy_(y)
        g.replay()
        twin_opt.zero_grad(set_to_none=True)
        eager = loss_fn(twin(x), y)
        eager.backward()
        twin_opt.step()
        losses.append(static_loss.item())
        worst = max(worst, abs(static_loss.item() - eager.item()))
    wdiff = max(close(p, q) for p, q in zip(model.parameters(), twin.parameters()))
    ok = worst < 1e-3 and wdiff < 1e-3
    print("train (%s): 5 replays, losses %s, largest loss difference from eager %.2e, weights %.2e: %s" % (
        mode, " ".join("%.4f" % l for l in losses), worst, wdiff, "ok" if ok else "WRONG"))
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", default="global", choices=["global", "thread_local", "relaxed"])
    a = ap.parse_args()
    print("torch %s, allocator backend %s" % (torch.__version__, torch.cuda.get_allocator_backend()))
    ok = True
    for part in (forward, train):
        try:
            ok = part(a.mode) and ok
        except Exception as e:  # a capture error is what this checks for: say it, go on
            print("%s (%s): %s: %s" % (part.__name__, a.mode, type(e).__name__, str(e).splitlines()[0]))
            ok = False
    print("GRAPH %s" % ("ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
