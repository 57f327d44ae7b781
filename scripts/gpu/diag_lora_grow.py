"""diag_lora_grow.py — the diagnosis's growing fine-tune (scripts/gpu-diagnosis.sh):
a peft LoRA fine-tune of a small Llama built from a transformers config (no
download), with gradient checkpointing, whose loop keeps every step's
out.logits in a global list (and with them their autograd graph) until the
device is full. torch.cuda.set_per_process_memory_fraction(--allowed-mib)
makes it die of OOM within ~20 steps in seconds. No gpuledger call: the
steps are the optimizer step hook's. Prints "step N done" after each step,
then dies of the OOM (exit 1)."""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_ledger import llama_config  # noqa: E402

MiB = 1 << 20
logits_kept = []  # the bug: every step's logits kept, with their graph


def train_step(model, opt, batch):
    out = model(input_ids=batch, labels=batch)
    out.loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    logits_kept.append(out.logits)  # GROWTH: kept alive by this global list


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--allowed-mib", type=int, default=3072)
    ap.add_argument("--steps", type=int, default=60)
    args = ap.parse_args()
    from peft import LoraConfig, get_peft_model
    from transformers import LlamaForCausalLM
    torch.manual_seed(0)
    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.set_per_process_memory_fraction(args.allowed_mib * MiB / total)
    model = LlamaForCausalLM(llama_config()).cuda()
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.enable_input_require_grads()
    model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0,
                                             target_modules=["q_proj", "k_proj", "v_proj", "o_proj"]))
    model.train()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    batch = torch.randint(0, 8192, (4, 512), device="cuda")
    for step in range(args.steps):
        train_step(model, opt, batch)
        print("step %d done" % step, flush=True)
    print("no OOM after %d steps" % args.steps, flush=True)


if __name__ == "__main__":
    main()
