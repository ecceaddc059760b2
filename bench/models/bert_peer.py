#!/usr/bin/env python3
"""bert_peer.py - the PyTorch side of bench/models/bert: BERT-Large (hidden 1024, 16 heads,
FFN 4096, erf GELU, LayerNorm eps 1e-12, vocab 30,522, span head to 2 logits) samples/s at
one sequence length with Debian's python3-torch (1.13), random weights (speed does not
depend on their values), same thread count as ours. Configurations, each timed, the best
one per precision reported (../shared/reference/performance.md section 4):

  fp32  "jit":      the BertForQuestionAnswering graph written out (as transformers 2.x
                    computes it) -> torch.jit.trace -> freeze -> optimize_for_inference
        "fastpath": nn.TransformerEncoder (batch_first, post-norm, gelu) in eval/no_grad,
                    which 1.13 runs through its fused native encoder kernels
  bf16  "autocast": the jit-free model under torch.autocast("cpu", bfloat16)
        "cast":     the model converted with .to(torch.bfloat16) (performance.md: autocast
                    breaks the 1.13 fast path, the pure bf16 model reached 1.21 samples/s)
  int8  "dynamic":  torch.ao.quantization.quantize_dynamic of every nn.Linear (qint8,
                    "onednn" engine) - 1.13's only int8 path for transformers without
                    a calibration flow

Prints one JSON line per precision and batch: {"precision", "batch", "mode",
"images_per_sec" (samples/s of the best mode), "modes": {mode: samples/s},
"cpu_seconds", "images"} (bench_util.h's bu_run_peer reads images_per_sec/cpu_seconds/
images). Usable alone:
  OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 bench/models/bert_peer.py --precision fp32 \
      --batches 1 --threads 2 --layers 2
"""
import argparse
import json
import math
import sys
import time

import torch
import torch.nn.functional as F

H, HEADS, FFN, VOCAB, POS, TYPES = 1024, 16, 4096, 30522, 512, 2


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.q = torch.nn.Linear(H, H)
        self.k = torch.nn.Linear(H, H)
        self.v = torch.nn.Linear(H, H)
        self.o = torch.nn.Linear(H, H)
        self.ln1 = torch.nn.LayerNorm(H, eps=1e-12)
        self.f1 = torch.nn.Linear(H, FFN)
        self.f2 = torch.nn.Linear(FFN, H)
        self.ln2 = torch.nn.LayerNorm(H, eps=1e-12)

    def heads(self, x):
        n, s, _ = x.shape
        return x.view(n, s, HEADS, H // HEADS).permute(0, 2, 1, 3)

    def forward(self, h, mask):
        n, s, _ = h.shape
        q, k, v = self.heads(self.q(h)), self.heads(self.k(h)), self.heads(self.v(h))
        sc = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(H // HEADS) + mask
        ctx = torch.matmul(torch.softmax(sc, dim=-1), v).permute(0, 2, 1, 3).reshape(n, s, H)
        h1 = self.ln1(self.o(ctx) + h)
        return self.ln2(self.f2(F.gelu(self.f1(h1))) + h1)


class Bert(torch.nn.Module):
    """BertForQuestionAnswering as transformers 2.x computes it (the reference's model)."""

    def __init__(self, layers):
        super().__init__()
        self.we = torch.nn.Embedding(VOCAB, H)
        self.pe = torch.nn.Embedding(POS, H)
        self.te = torch.nn.Embedding(TYPES, H)
        self.ln = torch.nn.LayerNorm(H, eps=1e-12)
        self.layers = torch.nn.ModuleList([Layer() for _ in range(layers)])
        self.qa = torch.nn.Linear(H, 2)

    def forward(self, ids, mask, seg):
        pos = torch.arange(ids.shape[1]).unsqueeze(0)
        h = self.ln(self.we(ids) + self.pe(pos) + self.te(seg))
        m = (1.0 - mask[:, None, None, :].to(h.dtype)) * -10000.0
        for layer in self.layers:
            h = layer(h, m)
        lg = self.qa(h)
        return lg[..., 0], lg[..., 1]


class FastBert(torch.nn.Module):
    """The same sizes through nn.TransformerEncoder (1.13's fused inference fast path)."""

    def __init__(self, layers):
        super().__init__()
        self.we = torch.nn.Embedding(VOCAB, H)
        self.pe = torch.nn.Embedding(POS, H)
        self.te = torch.nn.Embedding(TYPES, H)
        self.ln = torch.nn.LayerNorm(H, eps=1e-12)
        el = torch.nn.TransformerEncoderLayer(H, HEADS, FFN, dropout=0.0, activation="gelu",
                                              layer_norm_eps=1e-12, batch_first=True)
        self.enc = torch.nn.TransformerEncoder(el, layers, enable_nested_tensor=False)
        self.qa = torch.nn.Linear(H, 2)

    def forward(self, ids, mask, seg):
        pos = torch.arange(ids.shape[1]).unsqueeze(0)
        h = self.ln(self.we(ids) + self.pe(pos) + self.te(seg))
        h = self.enc(h, src_key_padding_mask=mask == 0)
        lg = self.qa(h)
        return lg[..., 0], lg[..., 1]


def timed(fn, items, seconds, reps):
    fn()
    fn()  # warm-up (jit profiling runs, oneDNN primitive creation)
    t0 = time.perf_counter()
    fn()
    iters = max(1, int(seconds / max(time.perf_counter() - t0, 1e-3)))
    rates, cpu = [], 0.0
    for _ in range(reps):
        c0, t0 = time.process_time(), time.perf_counter()
        for _ in range(iters):
            fn()
        dt = time.perf_counter() - t0
        cpu += time.process_time() - c0
        rates.append(items * iters / dt)
    rates.sort()
    return rates[len(rates) // 2], cpu, items * iters * reps


def modes_for(precision, layers, x):
    """(name, callable) per configuration, built lazily so only one model is in memory."""
    def jit():
        m = Bert(layers).eval()
        with torch.no_grad():
            t = torch.jit.freeze(torch.jit.trace(m, x))
            t = torch.jit.optimize_for_inference(t)
        return lambda: t(*x)

    def fast():
        m = FastBert(layers).eval()
        return lambda: m(*x)

    def autocast():
        m = Bert(layers).eval()

        def run():
            with torch.autocast("cpu", dtype=torch.bfloat16):
                return m(*x)
        return run

    def cast():
        m = Bert(layers).eval().to(torch.bfloat16)
        return lambda: m(*x)

    def fast_cast():
        m = FastBert(layers).eval().to(torch.bfloat16)
        return lambda: m(*x)

    def dynamic():
        torch.backends.quantized.engine = "onednn"
        m = Bert(layers).eval()
        q = torch.ao.quantization.quantize_dynamic(m, {torch.nn.Linear}, dtype=torch.qint8)
        return lambda: q(*x)

    return {"fp32": [("jit", jit), ("fastpath", fast)],
            "bf16": [("autocast", autocast), ("cast", cast), ("fastpath-cast", fast_cast)],
            "int8": [("dynamic", dynamic)]}[precision]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--precision", choices=["fp32", "bf16", "int8"], required=True)
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--seq", type=int, default=384)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--modes", default="",
                    help="comma list; a precision with none of its modes listed runs all")
    a = ap.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    want = [m for m in a.modes.split(",") if m]
    if not any(name in want for name, _ in modes_for(a.precision, a.layers, None)):
        want = []  # none of this precision's modes named: run them all
    for b in [int(v) for v in a.batches.split(",")]:
        x = (torch.randint(0, VOCAB, (b, a.seq)), torch.ones(b, a.seq, dtype=torch.int64),
             torch.cat([torch.zeros(b, a.seq // 2, dtype=torch.int64),
                        torch.ones(b, a.seq - a.seq // 2, dtype=torch.int64)], dim=1))
        best, res = None, {}
        for name, make in modes_for(a.precision, a.layers, x):
            if want and name not in want:
                continue
            try:
                with torch.no_grad():
                    fn = make()
                    r = timed(fn, b, a.seconds, a.reps)
            except Exception as e:  # a mode this torch build cannot run
                print(f"bert_peer: {a.precision} {name}: {type(e).__name__}: {e}",
                      file=sys.stderr)
                continue
            res[name] = r[0]
            if best is None or r[0] > best[1][0]:
                best = (name, r)
            del fn
        if best is None:
            continue
        print(json.dumps({"precision": a.precision, "batch": b, "mode": best[0],
                          "threads": torch.get_num_threads(), "layers": a.layers,
                          "seq": a.seq, "images_per_sec": best[1][0], "modes": res,
                          "cpu_seconds": best[1][1], "images": best[1][2],
                          "torch": torch.__version__}))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
