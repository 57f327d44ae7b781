"""memviz_run.py — run torch_train.py (same arguments) with PyTorch's own
memory history recording on, and dump PyTorch's snapshot at the end, so
gpuledger's memory_viz export of the same run can be put beside it.

    python3 memviz_run.py SNAPSHOT.pickle [torch_train.py arguments]

Under the cudaMallocAsync backend PyTorch refuses to record history: then
no snapshot is written (said on stderr) and the run goes on.
"""
import os
import runpy
import sys

import torch

out = sys.argv[1]
here = os.path.dirname(os.path.abspath(__file__))
recording = True
try:
    torch.cuda.memory._record_memory_history(max_entries=1_000_000)
except RuntimeError as e:  # the async backend
    print("memviz_run: PyTorch cannot record history here (%s)" % str(e).splitlines()[0], file=sys.stderr)
    recording = False
sys.argv = [os.path.join(here, "torch_train.py")] + sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
if recording:
    torch.cuda.memory._dump_snapshot(out)
    torch.cuda.memory._record_memory_history(enabled=None)
