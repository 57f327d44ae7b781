"""torch_ledger.py — the PyTorch workloads of the tensor-ledger checks
(scripts/gpu-tensor-ledger.sh). Each runs under `gpuledger run` with no
gpuledger call of its own (an unmodified job), and writes what PyTorch
itself says to --json, for scripts/gpu/ledger_check.py to compare with the
database:

  gpt              the small GPT of torch_train.py, AdamW (--on-device:
                   built under `with torch.device("cuda")`)
  llama            a Llama from a small LlamaConfig (no network), AdamW;
                   --lora (peft LoRA on q/k/v/o), --ckpt (gradient
                   checkpointing), --on-device
  generate         HF generate() of a small Llama: its KV cache
  frag-oom         interleaved 4 MiB tensors, every other freed, then 8 MiB
                   under a 1010 MiB memory fraction: a fragmentation OOM
  demand-oom       900 MiB of live tensors, then 300 MiB under 1 GiB: demand

PyTorch's figures: max_memory_allocated, max_memory_reserved,
requested_bytes.all.peak, the parameter and optimizer-state bytes (unique
storages on the GPU), the KV cache's bytes, and the blocks live at the end
(torch.cuda.memory_snapshot(), taken just before the mark "ledger end"); at
an OOM the holes the allocator had (from its snapshot).
"""
import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
MiB = 1 << 20


def mark(label):
    """A mark, when gpuledger is loaded (the workloads make no other call)."""
    try:
        import gpuledger
        gpuledger.mark(label)
    except ImportError:
        pass


def unique_bytes(tensors):
    seen, total = set(), 0
    for t in tensors:
        if t is None or not t.is_cuda:
            continue
        s = t.untyped_storage()
        if s.data_ptr() in seen or s.nbytes() == 0:
            continue
        seen.add(s.data_ptr())
        total += s.nbytes()
    return total


def blocks_now():
    """Every block of the allocator now: (address, size, requested, state)."""
    out = []
    for seg in torch.cuda.memory_snapshot():
        addr = seg["address"]
        for b in seg["blocks"]:
            out.append([addr, b["size"], b.get("requested_size", 0), b["state"]])
            addr += b["size"]
    return out


def holes(blocks):
    free = [b[1] for b in blocks if b[3] == "inactive"]
    return {"cached_free": sum(free), "holes": len(free), "largest": max(free) if free else 0}


def torch_figures():
    st = torch.cuda.memory_stats()
    return {"max_memory_allocated": torch.cuda.max_memory_allocated(),
            "max_memory_reserved": torch.cuda.max_memory_reserved(),
            "requested_peak": st.get("requested_bytes.all.peak", 0),
            "memory_allocated": torch.cuda.memory_allocated(),
            "memory_reserved": torch.cuda.memory_reserved(),
            "alloc_retries": st.get("num_alloc_retries", 0),
            "expandable": "expandable_segments:True" in os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
            + os.environ.get("PYTORCH_ALLOC_CONF", "")}


def finish(args, extra):
    torch.cuda.synchronize()
    res = {"workload": args.workload, **torch_figures(), **extra}
    res["blocks_end"] = blocks_now()
    mark("ledger end")
    with open(args.json, "w") as f:
        json.dump(res, f)
    small = {k: v for k, v in res.items() if k != "blocks_end"}
    print(json.dumps(small))


def train(args, model, params, steps, make_batch, loss_of):
    opt = torch.optim.AdamW(params, lr=1e-4)
    times = []
    for _ in range(steps):
        batch = make_batch()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        loss = loss_of(model, batch)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    times.sort()
    state = [v for s in opt.state.values() for v in s.values() if isinstance(v, torch.Tensor)]
    return {"param_bytes": unique_bytes(list(model.parameters())),
            "trainable_param_bytes": unique_bytes([p for p in model.parameters() if p.requires_grad]),
            "optimizer_state_bytes": unique_bytes(state),
            "median_step_ms": 1000 * times[len(times) // 2], "steps": steps}


def gpt(args):
    from torch_train import TinyGPT
    torch.manual_seed(0)
    if args.on_device:
        with torch.device("cuda"):
            model = TinyGPT()
    else:
        model = TinyGPT().cuda()
    x = lambda: torch.randint(0, 8192, (16, 256), device="cuda")

    def loss_of(m, b):
        logits = m(b)
        return torch.nn.functional.cross_entropy(logits.view(-1, logits.shape[-1]), b.view(-1))
    finish(args, train(args, model, list(model.parameters()), args.steps, x, loss_of))


def llama_config():
    from transformers import LlamaConfig
    return LlamaConfig(vocab_size=8192, hidden_size=512, intermediate_size=1408, num_hidden_layers=8,
                       num_attention_heads=8, num_key_value_heads=8, max_position_embeddings=1024)


def llama(args):
    from transformers import LlamaForCausalLM
    torch.manual_seed(0)
    if args.on_device:
        with torch.device("cuda"):
            model = LlamaForCausalLM(llama_config())
    else:
        model = LlamaForCausalLM(llama_config()).cuda()
    if args.ckpt:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if args.lora:
        from peft import LoraConfig, get_peft_model
        model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0,
                                                 target_modules=["q_proj", "k_proj", "v_proj", "o_proj"]))
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    x = lambda: torch.randint(0, 8192, (8, 512), device="cuda")
    loss_of = lambda m, b: m(input_ids=b, labels=b).loss
    finish(args, train(args, model, params, args.steps, x, loss_of))


def kv_tensors(cache):
    layers = getattr(cache, "layers", None)
    if layers is not None:
        return [t for l in layers for t in (getattr(l, "keys", None), getattr(l, "values", None)) if t is not None]
    out = list(getattr(cache, "key_cache", []) or []) + list(getattr(cache, "value_cache", []) or [])
    if not out and isinstance(cache, (tuple, list)):
        out = [t for kv in cache for t in kv]
    return out


def generate(args):
    from transformers import LlamaForCausalLM
    torch.manual_seed(0)
    model = LlamaForCausalLM(llama_config()).cuda().eval()
    ids = torch.randint(1, 8192, (4, 32), device="cuda")
    with torch.no_grad():
        out = model.generate(ids, max_new_tokens=args.new_tokens, do_sample=False, use_cache=True,
                             return_dict_in_generate=True, pad_token_id=0)
    kv = kv_tensors(out.past_key_values)
    torch.cuda.synchronize()
    extra = {"param_bytes": unique_bytes(list(model.parameters())), "kv_cache_bytes": unique_bytes(kv),
             "kv_tensors": len(kv), "new_tokens": out.sequences.shape[1] - ids.shape[1],
             "cache_class": type(out.past_key_values).__name__}
    mark("generate done")
    finish(args, extra)


def oom(args, build, ask):
    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.set_per_process_memory_fraction(args.allowed_mib * MiB / total)
    keep = build()
    torch.cuda.synchronize()
    before = blocks_now()
    res = {"asked": ask, "allowed": args.allowed_mib * MiB, "holes_before": holes(before)}
    try:
        x = torch.empty(ask, dtype=torch.uint8, device="cuda")
        res["oom"] = False
        del x
    except torch.OutOfMemoryError as e:
        res["oom"] = True
        res["message"] = str(e).splitlines()[0][:300]
    res["holes_at_oom"] = holes(blocks_now())
    res["live_bytes"] = sum(t.untyped_storage().nbytes() for t in keep if t is not None)
    finish(args, res)


def frag_oom(args):
    def build():
        ts = [torch.empty(4 * MiB, dtype=torch.uint8, device="cuda") for _ in range(250)]  # 50 x 20 MiB segments
        for i in range(1, len(ts), 2):
            ts[i] = None  # every other one: 4 MiB holes between live tensors
        return ts
    oom(args, build, 8 * MiB)


def demand_oom(args):
    oom(args, lambda: [torch.empty(100 * MiB, dtype=torch.uint8, device="cuda") for _ in range(9)], 300 * MiB)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("workload", choices=["gpt", "llama", "generate", "frag-oom", "demand-oom"])
    ap.add_argument("--json", required=True)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--on-device", action="store_true")
    ap.add_argument("--lora", action="store_true")
    ap.add_argument("--ckpt", action="store_true")
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--allowed-mib", type=int, default=1010)
    args = ap.parse_args()
    {"gpt": gpt, "llama": llama, "generate": generate, "frag-oom": frag_oom,
     "demand-oom": demand_oom}[args.workload](args)


if __name__ == "__main__":
    main()
