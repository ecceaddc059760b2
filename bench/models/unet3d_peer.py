#!/usr/bin/env python3
"""unet3d_peer.py - the PyTorch side of bench/models/unet3d: the same 3D U-Net as
src/models/unet3d.c (nnU-Net Generic_UNet shape: 6 levels of 32..320 filters, Conv3d 3x3x3
+ InstanceNorm3d(affine) + LeakyReLU(0.01) (BraTS) or ReLU (KiTS) pairs, stride-2 first
conv below level 0, ConvTranspose3d 2x2x2 without bias, cat(upsampled, skip), 1x1x1 head),
random weights, eval under torch.no_grad, same thread count, channels_last_3d (PyTorch's
faster layout here: 10.2 s vs 11.9 s NCDHW for a KiTS sub-volume); bf16 under
torch.autocast. Prints one JSON line
{"images_per_sec": median volumes/s, "cpu_seconds": ..., "images": ...}.
  /usr/bin/python3 bench/models/unet3d_peer.py --dataset kits19 --threads 2 --precision bf16
"""
import contextlib
import argparse
import json
import time

import torch
from torch import nn


def block(cin, cout, stride, leaky):
    return nn.Sequential(nn.Conv3d(cin, cout, 3, stride, 1, bias=True),
                         nn.InstanceNorm3d(cout, eps=1e-5, affine=True),
                         nn.LeakyReLU(0.01) if leaky else nn.ReLU())


class UNet3D(nn.Module):
    def __init__(self, cin, classes, filters, leaky):
        super().__init__()
        f = filters
        self.enc = nn.ModuleList()
        for l in range(6):
            self.enc.append(nn.Sequential(block(cin if l == 0 else f[l - 1], f[l],
                                                1 if l == 0 else 2, leaky),
                                          block(f[l], f[l], 1, leaky)))
        self.up = nn.ModuleList()
        self.dec = nn.ModuleList()
        for l in range(4, -1, -1):
            self.up.append(nn.ConvTranspose3d(f[l + 1], f[l], 2, 2, bias=False))
            self.dec.append(nn.Sequential(block(2 * f[l], f[l], 1, leaky), block(f[l], f[l], 1, leaky)))
        self.head = nn.Conv3d(f[0], classes, 1, 1, 0, bias=False)

    def forward(self, x):
        skips = []
        for e in self.enc:
            x = e(x)
            skips.append(x)
        for k, (u, d) in enumerate(zip(self.up, self.dec)):
            x = d(torch.cat((u(x), skips[4 - k]), dim=1))
        return self.head(x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default="kits19", choices=["kits19", "brats19"])
    ap.add_argument("--tiny", action="store_true")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    div = 4 if a.tiny else 1
    filters = [v // div for v in (32, 64, 128, 256, 320, 320)]
    if a.dataset == "kits19":
        cin, classes, leaky = 1, 3, False
        shape = (32, 32, 32) if a.tiny else (128, 128, 128)
    else:
        cin, classes, leaky = 4, 4, True
        shape = (64, 64, 32) if a.tiny else (224, 224, 160)
    m = UNet3D(cin, classes, filters, leaky).eval().to(memory_format=torch.channels_last_3d)
    x = (torch.rand((1, cin) + shape) * 2 - 1).to(memory_format=torch.channels_last_3d)
    runs = []
    amp = (torch.autocast("cpu", dtype=torch.bfloat16) if a.precision == "bf16"
           else contextlib.nullcontext())
    with torch.no_grad(), amp:
        for _ in range(2):
            m(x)
        t0 = time.perf_counter()
        m(x)
        iters = max(1, int(a.seconds / max(time.perf_counter() - t0, 1e-4)))
        c0 = time.process_time()
        for _ in range(a.reps):
            t0 = time.perf_counter()
            for _ in range(iters):
                m(x)
            runs.append(iters / (time.perf_counter() - t0))
        cpu = time.process_time() - c0
    print(json.dumps({"images_per_sec": sorted(runs)[len(runs) // 2], "cpu_seconds": cpu,
                      "images": iters * a.reps, "runs": runs}))


if __name__ == "__main__":
    main()
