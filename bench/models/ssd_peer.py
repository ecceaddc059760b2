#!/usr/bin/env python3
"""ssd_peer.py - the PyTorch side of bench/models/ssd: SSD-ResNet34 (1200x1200, the MLPerf
v1.1 "SSD-large" of benchmarks.md section 1.2) images/s with Debian's python3-torch /
python3-torchvision (1.13), the same topology as src/models/ssd_resnet34.c:

  torchvision ResNet34 conv1..layer3 with layer3's first block at stride 1 (150x150x256),
  five extra blocks (1x1 -> ReLU -> 3x3 stride 2,2,2,2,1 pad 1,1,1,0,0 -> ReLU),
  six loc/conf heads (3x3, stride 3, pad 1), reshaped to (N, 4|81, -1) and concatenated:
  15,130 anchors.

Modes as in torch_peer.py:
  fp32  torch.jit.trace + torch.jit.optimize_for_inference
  bf16  torch.autocast("cpu", torch.bfloat16) + channels_last, eager
  int8  FX graph mode post-training static quantisation ("onednn" qconfig and engine,
        calibrated on random images)

Weights are random (as ours): speed does not depend on their values. Prints one JSON object
per batch size on stdout (the keys bench_util.h reads):
{"precision": .., "batch": .., "images_per_sec": median, "runs": [...], "cpu_seconds": ..,
 "images": ..}.
  /usr/bin/python3 bench/models/ssd_peer.py --precision fp32 --batches 1 --threads 2
"""
import argparse
import json
import sys
import time

import torch
import torchvision


class SSDR34(torch.nn.Module):
    def __init__(self):
        super().__init__()
        r = torchvision.models.resnet34(weights=None)
        # layer3's first block at stride 1 (ssd_r34.py's base_model_r34)
        r.layer3[0].conv1.stride = (1, 1)
        r.layer3[0].downsample[0].stride = (1, 1)
        self.trunk = torch.nn.Sequential(r.conv1, r.bn1, r.relu, r.maxpool, r.layer1,
                                         r.layer2, r.layer3)
        out_ch = [256, 512, 512, 256, 256, 256]
        mid = [256, 256, 128, 128, 128]
        st = [2, 2, 2, 2, 1]
        pad = [1, 1, 1, 0, 0]
        nd = [4, 6, 6, 6, 4, 4]
        self.extra = torch.nn.ModuleList()
        for i in range(5):
            self.extra.append(torch.nn.Sequential(
                torch.nn.Conv2d(out_ch[i], mid[i], 1), torch.nn.ReLU(),
                torch.nn.Conv2d(mid[i], out_ch[i + 1], 3, stride=st[i], padding=pad[i]),
                torch.nn.ReLU()))
        self.loc = torch.nn.ModuleList(
            [torch.nn.Conv2d(out_ch[i], nd[i] * 4, 3, stride=3, padding=1) for i in range(6)])
        self.conf = torch.nn.ModuleList(
            [torch.nn.Conv2d(out_ch[i], nd[i] * 81, 3, stride=3, padding=1) for i in range(6)])

    def forward(self, x):
        src = [self.trunk(x)]
        for e in self.extra:
            src.append(e(src[-1]))
        n = x.shape[0]
        locs = [self.loc[i](s).reshape(n, 4, -1) for i, s in enumerate(src)]
        confs = [self.conf[i](s).reshape(n, 81, -1) for i, s in enumerate(src)]
        return torch.cat(locs, 2), torch.cat(confs, 2)


def build(precision, example):
    m = SSDR34().eval()
    if precision == "int8":
        from torch.ao.quantization import get_default_qconfig_mapping
        from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
        torch.backends.quantized.engine = "onednn"
        qm = prepare_fx(m, get_default_qconfig_mapping("onednn"), (example,))
        with torch.no_grad():
            for _ in range(2):
                qm(torch.randn(1, 3, 1200, 1200))
        return convert_fx(qm)
    if precision == "bf16":
        return m.to(memory_format=torch.channels_last)
    with torch.no_grad():
        t = torch.jit.trace(m, example)
        return torch.jit.optimize_for_inference(torch.jit.freeze(t))


def run(m, precision, x, iters):
    with torch.no_grad():
        if precision == "bf16":
            with torch.autocast("cpu", dtype=torch.bfloat16):
                for _ in range(iters):
                    m(x)
        else:
            for _ in range(iters):
                m(x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--precision", choices=["fp32", "bf16", "int8"], required=True)
    ap.add_argument("--batches", default="1")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--iters", type=int, default=0, help="per run (0: ~3 s of work)")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    for b in [int(v) for v in a.batches.split(",")]:
        x = torch.randn(b, 3, 1200, 1200)
        if a.precision == "bf16":
            x = x.to(memory_format=torch.channels_last)
        m = build(a.precision, torch.randn(b, 3, 1200, 1200))
        run(m, a.precision, x, 2)  # warm-up (jit profiling runs happen here)
        t0 = time.perf_counter()
        run(m, a.precision, x, 1)
        one = time.perf_counter() - t0
        iters = a.iters or max(1, int(a.seconds / max(one, 1e-3)))
        rates, cpu = [], 0.0
        for _ in range(a.reps):
            c0, t0 = time.process_time(), time.perf_counter()
            run(m, a.precision, x, iters)
            dt = time.perf_counter() - t0
            cpu += time.process_time() - c0
            rates.append(b * iters / dt)
        rates.sort()
        print(json.dumps({"precision": a.precision, "batch": b, "threads": torch.get_num_threads(),
                          "images_per_sec": rates[len(rates) // 2], "runs": rates,
                          "cpu_seconds": cpu, "images": b * iters * a.reps,
                          "torch": torch.__version__}))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
