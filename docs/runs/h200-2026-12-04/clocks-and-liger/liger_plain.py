# Liger's fused linear JSD timed with torch events on torch's default stream,
# inputs like the seed (the seed's generators: torch.rand inputs, nn.Linear-like uniform heads), cold L2 (256 MiB write before each).
import torch, statistics, time
from liger_kernel.chunked_loss.jsd_loss import LigerFusedLinearJSDFunction
torch.manual_seed(0)
T, H, Hs, V = 8192, 4096, 2048, 128256
dev = "cuda"
xs = torch.rand(T, Hs, device=dev).bfloat16().requires_grad_(True)
ws = ((torch.rand(V, Hs, device=dev) * 2 - 1) / Hs ** 0.5).bfloat16().requires_grad_(True)
xt = torch.rand(T, H, device=dev).bfloat16()
wt = ((torch.rand(V, H, device=dev) * 2 - 1) / H ** 0.5).bfloat16()
y = torch.randint(0, V, (T,), device=dev)
flush = torch.empty(256 << 20, dtype=torch.uint8, device=dev)
def once():
    xs.grad = None; ws.grad = None
    l = LigerFusedLinearJSDFunction.apply(xs, ws, xt, wt, y, None, None, 0.5, 0.5, 0.5, -100, 1.0, True, 1024)
    l.backward()
for s in (None, torch.cuda.Stream()):
    ctx = torch.cuda.stream(s) if s is not None else torch.cuda.stream(torch.cuda.current_stream())
    with ctx:
        for _ in range(3): once()
        torch.cuda.synchronize()
        ts = []
        for _ in range(25):
            flush.zero_()
            a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
            a.record(); once(); b.record(); b.synchronize()
            ts.append(a.elapsed_time(b))
    print("stream", "default" if s is None else "side", "median ms", round(statistics.median(ts), 2), "min", round(min(ts), 2))
