#!/usr/bin/env python3
"""dlrm_peer.py - the PyTorch side of bench/models/dlrm: the same DLRM (MLPerf v1.1
architecture, tables of min(official rows, cap) x 128, fp32, random weights) as the
reference dlrm_s_pytorch.py computes it (nn.EmbeddingBag sum per table with one index per
bag, bmm dot interaction, tril gather), eager under torch.no_grad (the reference's mode),
same thread count. Prints {"pairs_per_sec": median, "runs": [...]} on stdout.
  /usr/bin/python3 bench/models/dlrm_peer.py --cap 100000 --batch 2048 --threads 2
"""
import argparse
import json
import time

import torch

ROWS = [39884406, 39043, 17289, 7420, 20263, 3, 7120, 1543, 63, 38532951, 2953546, 403346,
        10, 2208, 11938, 155, 4, 976, 14, 39979771, 25641295, 39664984, 585935, 12972, 108, 36]


def mlp(sizes, last_sigmoid):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        last = i == len(sizes) - 2
        layers.append(torch.nn.Sigmoid() if last and last_sigmoid else torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


class DLRM(torch.nn.Module):
    def __init__(self, cap):
        super().__init__()
        self.rows = [min(r, cap) for r in ROWS]
        self.emb = torch.nn.ModuleList(
            [torch.nn.EmbeddingBag(r, 128, mode="sum") for r in self.rows])
        self.bot = mlp([13, 512, 256, 128], False)
        self.top = mlp([479, 1024, 1024, 512, 256, 1], True)
        li = [i for i in range(27) for j in range(i)]
        lj = [j for i in range(27) for j in range(i)]
        self.li, self.lj = torch.tensor(li), torch.tensor(lj)

    def forward(self, dense, ids, offsets):
        x = self.bot(dense)
        ly = [e(ids[:, t], offsets) for t, e in enumerate(self.emb)]
        t = torch.cat([x] + ly, dim=1).view(-1, 27, 128)
        z = torch.bmm(t, t.transpose(1, 2))
        zf = z[:, self.li, self.lj]
        return self.top(torch.cat([x, zf], dim=1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cap", type=int, default=100000)
    ap.add_argument("--batch", type=int, default=2048)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=3.0)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    m = DLRM(a.cap).eval()
    dense = torch.log1p(torch.randint(0, 1000, (a.batch, 13)).float())
    ids = torch.stack([torch.randint(0, r, (a.batch,)) for r in m.rows], dim=1)
    offsets = torch.arange(a.batch)
    runs = []
    with torch.no_grad():
        for _ in range(2):
            m(dense, ids, offsets)
        t0 = time.perf_counter()
        m(dense, ids, offsets)
        iters = max(1, int(a.seconds / max(time.perf_counter() - t0, 1e-4)))
        for _ in range(a.reps):
            t0 = time.perf_counter()
            for _ in range(iters):
                m(dense, ids, offsets)
            runs.append(a.batch * iters / (time.perf_counter() - t0))
    print(json.dumps({"pairs_per_sec": sorted(runs)[len(runs) // 2], "runs": runs}))


if __name__ == "__main__":
    main()
