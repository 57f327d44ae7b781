"""fw_lightning.py — a small Lightning Trainer.fit on the GPU (scripts/gpu-frameworks.sh):
its optimizer steps call step(closure). At the end of the last training
batch (before fit's teardown moves the model and the optimizer's state back
to the CPU) it marks "lightning last batch" and prints the model's parameter
bytes and the optimizer's state bytes on the GPU then: the figures the
ledger's parameters and optimizer_state live at that mark must equal."""
import os

import lightning as L
import torch

import gpuledger

figures = {}


def cuda_bytes(tensors):
    return sum(t.numel() * t.element_size() for t in tensors if torch.is_tensor(t) and t.is_cuda)


class LastBatch(L.Callback):
    def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
        if trainer.global_step != trainer.max_steps:
            return
        opt = trainer.optimizers[0]
        opt = getattr(opt, "optimizer", opt)
        torch.cuda.synchronize()
        figures["params"] = cuda_bytes(module.parameters())
        figures["state"] = cuda_bytes(v for s in opt.state.values() for v in s.values())
        gpuledger.mark("lightning last batch")


class Net(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(2048, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 2048))

    def training_step(self, batch, _):
        (x,) = batch
        return self.net(x).float().pow(2).mean()

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-3)


data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(64 * 6, 2048)), batch_size=64)
model = Net()
trainer = L.Trainer(accelerator="gpu", devices=1, max_steps=6, logger=False, enable_checkpointing=False,
                    enable_progress_bar=False, enable_model_summary=False, callbacks=[LastBatch()])
trainer.fit(model, data)
print("LIGHTNING params=%d state=%d steps=%d" % (figures.get("params", -1), figures.get("state", -1),
                                                  trainer.global_step), flush=True)
os._exit(0)  # what is live stays live in the database
