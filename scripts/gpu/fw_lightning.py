"""fw_lightning.py — a small Lightning Trainer.fit on the GPU (scripts/gpu-frameworks.sh):
its optimizer steps call step(closure). Prints the model's parameter bytes
and the optimizer's state bytes at the end (the figures the ledger's
parameters and optimizer_state must equal)."""
import os

import lightning as L
import torch


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
                    enable_progress_bar=False, enable_model_summary=False)
trainer.fit(model, data)
opt = trainer.optimizers[0]
opt = getattr(opt, "optimizer", opt)
params = sum(p.numel() * p.element_size() for p in model.parameters())
state = sum(v.numel() * v.element_size() for s in opt.state.values() for v in s.values()
            if torch.is_tensor(v) and v.is_cuda)
print("LIGHTNING params=%d state=%d steps=%d" % (params, state, trainer.global_step), flush=True)
os._exit(0)  # what is live stays live in the database
