"""py_grow_oom.py — a training loop that keeps every step's logits in a
global list until the device is full, on the stand-in torch
(tests/pystub): the growing loop of the diagnosis's golden database
(tests/golden/db/torch-grow-oom.db, recorded by scripts/update-goldens.sh
--record with FAKECUDA_MEM_BYTES=64 MiB). Steps end where the gpuledger
package's optimizer step hook marks them; the OOM is raised as PyTorch
raises it (torch.OutOfMemoryError) and kills the job."""
import torch

MiB = 1 << 20


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(512, 1024)  # 2 MiB of weights

    def forward(self, x):
        self.l1(x)
        return torch.empty(3 * MiB)  # the logits


logits_kept = []  # the planted growth: one step's logits kept per step


def train_step(model, opt, x):
    logits = model(x)
    act = torch.empty(5 * MiB)  # an activation, freed at the end of the step
    loss = logits.sum()
    loss.backward()
    opt.step()
    opt.zero_grad()
    logits_kept.append(logits)  # GROWTH
    del act


model = Net()
opt = torch.optim.AdamW(model.parameters())
x = torch.empty(4096)
for step in range(100):
    train_step(model, opt, x)
