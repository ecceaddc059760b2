#!/usr/bin/env python3
"""torch_peer.py - the PyTorch side of bench/models: ResNet50-v1.5 images/s with Debian's
python3-torch / python3-torchvision (1.13), in the best configurations of
../shared/reference/performance.md section 4:

  fp32  torch.jit.trace + torch.jit.optimize_for_inference (freeze, MKLDNN layout,
        conv/bn/relu folding)
  bf16  torch.autocast("cpu", torch.bfloat16) + channels_last, eager (tracing under
        autocast fails its own consistency check in 1.13; performance.md's 22.7 / 40.4
        img/s figures are this mode)
  int8  post-training static quantisation of torchvision.models.quantization.resnet50
        (fused, "onednn" qconfig and engine, calibrated on random images)

The classifier is 2048 -> 1001 as in the MLPerf model. Weights are random (as ours): speed
does not depend on their values. Prints one JSON object per batch size on stdout:
{"precision": .., "batch": .., "images_per_sec": median, "runs": [...], "cpu_seconds": ..}.
Run by bench/models/models.c; usable alone:
  /usr/bin/python3 bench/models/torch_peer.py --precision fp32 --batches 1,32 --threads 2
"""
import argparse
import json
import sys
import time

import torch
import torchvision


def build(precision, example):
    if precision == "int8":
        from torchvision.models import quantization as qm
        torch.backends.quantized.engine = "onednn"
        m = qm.resnet50(weights=None, quantize=False)
        m.fc = torch.nn.Linear(2048, 1001)
        m.eval()
        m.fuse_model()
        m.qconfig = torch.ao.quantization.get_default_qconfig("onednn")
        torch.ao.quantization.prepare(m, inplace=True)
        with torch.no_grad():
            for _ in range(4):
                m(torch.randn(4, 3, 224, 224))
        torch.ao.quantization.convert(m, inplace=True)
        return m
    m = torchvision.models.resnet50(weights=None)
    m.fc = torch.nn.Linear(2048, 1001)
    m.eval()
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
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--iters", type=int, default=0, help="per run (0: ~3 s of work)")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    for b in [int(v) for v in a.batches.split(",")]:
        x = torch.randn(b, 3, 224, 224)
        if a.precision == "bf16":
            x = x.to(memory_format=torch.channels_last)
        m = build(a.precision, torch.randn(b, 3, 224, 224))
        run(m, a.precision, x, 2)  # warm-up (jit profiling runs happen here)
        t0 = time.perf_counter()
        run(m, a.precision, x, 1)
        one = time.perf_counter() - t0
        iters = a.iters or max(1, int(3.0 / max(one, 1e-3)))
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
