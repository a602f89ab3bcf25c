"""The idle rule's workload of scripts/gpu-validate.sh: a standby job
(GPUTRACE_MODE=standby, GPUTRACE_TRIGGER=idle>50%) that keeps the GPU busy
with matrix products for 3 s, then stalls the host for 3 s with the GPU
idle, then keeps it busy 3 s more.

argv: OUT.json. Writes the stall's start and end (time.monotonic_ns, the
clock of the trace) to OUT.json."""
import json
import sys
import time

import torch


def busy(seconds):
    a = torch.randn(2048, 2048, device="cuda")
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for _ in range(8):
            a = (a @ a).tanh()
        torch.cuda.synchronize()


def main():
    busy(3.0)
    t0 = time.monotonic_ns()
    time.sleep(3.0)
    t1 = time.monotonic_ns()
    busy(3.0)
    with open(sys.argv[1], "w") as f:
        json.dump({"stall_start_ns": t0, "stall_end_ns": t1}, f)


if __name__ == "__main__":
    main()
