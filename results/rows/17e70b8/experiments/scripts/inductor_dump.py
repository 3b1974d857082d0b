"""Scratch: torch.compile's generated code and chosen launch for the row ops at a few shapes."""
import os, sys, torch
import torch.nn.functional as F
torch._logging.set_logs(output_code=True)
cases = [("softmax", 65536, 512, torch.float32), ("layernorm", 65536, 512, torch.bfloat16),
         ("rmsnorm", 65536, 512, torch.bfloat16), ("rmsnorm", 4096, 32768, torch.float32),
         ("layernorm", 32768, 1024, torch.bfloat16)]
for op, r, c, dt in cases:
    x = torch.randn(r, c, device="cuda", dtype=dt)
    w = torch.randn(c, device="cuda", dtype=dt); b = torch.randn(c, device="cuda", dtype=dt)
    f = {"softmax": lambda t: F.softmax(t, dim=-1),
         "rmsnorm": lambda t: F.rms_norm(t, (c,), w, eps=1e-6),
         "layernorm": lambda t: F.layer_norm(t, (c,), w, b, eps=1e-5)}[op]
    g = torch.compile(f, dynamic=False)
    print(f"===== CASE {op} {r}x{c} {dt}", file=sys.stderr, flush=True)
    g(x); torch.cuda.synchronize()
    torch._dynamo.reset()
