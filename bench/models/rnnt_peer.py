#!/usr/bin/env python3
"""rnnt_peer.py - the PyTorch side of bench/models/rnnt: the reference RNN-T pipeline
(speech_recognition/rnnt: FilterbankFeatures, Encoder/Prediction/Joint of
model_separable_rnnt.py, decoders.py ScriptGreedyDecoder) in Debian's PyTorch 1.13, eager,
on the SAME random weights as our run (bench/models/rnnt.c dumps them) and the same audio,
so both sides decode the same symbols and do the same work.

  /usr/bin/python3 bench/models/rnnt_peer.py --weights W.bin --audio A.f32 --threads 2 \
      --batches 1,16 [--single 4]

Batch 1 decodes --single utterances one by one (the reference SUT's way); batch B encodes B
utterances padded together and decodes them one after another as decoders.py does. Prints one
JSON object per batch size: {"batch", "utt_per_sec", "seconds", "tokens": [[ids]...]}.
"""
import argparse
import json
import struct
import sys
import time

import numpy as np
import torch


def read_weights(path):
    w = {}
    with open(path, "rb") as f:
        while True:
            head = f.read(4)
            if not head:
                break
            (nl,) = struct.unpack("<I", head)
            name = f.read(nl).decode()
            (nd,) = struct.unpack("<I", f.read(4))
            dims = struct.unpack("<%dq" % nd, f.read(8 * nd))
            count = int(np.prod(dims)) if nd else 1
            w[name] = np.frombuffer(f.read(4 * count), dtype="<f4").reshape(dims).copy()
    return w


def read_audio(path):
    out = []
    with open(path, "rb") as f:
        (n,) = struct.unpack("<I", f.read(4))
        for _ in range(n):
            (m,) = struct.unpack("<I", f.read(4))
            out.append(np.frombuffer(f.read(4 * m), dtype="<f4").copy())
    return out


def onnx_to_torch_gates(a, h):
    # ONNX gate blocks i, o, f, c -> torch i, f, g, o
    blocks = [a[k * h:(k + 1) * h] for k in range(4)]
    return np.concatenate([blocks[0], blocks[2], blocks[3], blocks[1]], axis=0)


def make_lstm(w, prefix):
    W, R, B = w[prefix + ".W"][0], w[prefix + ".R"][0], w[prefix + ".B"][0]
    h = R.shape[1]
    m = torch.nn.LSTM(W.shape[1], h)
    with torch.no_grad():
        m.weight_ih_l0.copy_(torch.from_numpy(onnx_to_torch_gates(W, h)))
        m.weight_hh_l0.copy_(torch.from_numpy(onnx_to_torch_gates(R, h)))
        m.bias_ih_l0.copy_(torch.from_numpy(onnx_to_torch_gates(B[:4 * h], h)))
        m.bias_hh_l0.copy_(torch.from_numpy(onnx_to_torch_gates(B[4 * h:], h)))
    return m.eval()


def mel_filterbank(sr=16000, n_fft=512, n_mels=80):
    def h2m(f):
        f = np.asarray(f, dtype=np.float64)
        return np.where(f >= 1000.0, 15.0 + np.log(np.maximum(f, 1e-10) / 1000.0) / (np.log(6.4) / 27.0),
                        f / (200.0 / 3))

    def m2h(m):
        m = np.asarray(m, dtype=np.float64)
        return np.where(m >= 15.0, 1000.0 * np.exp((np.log(6.4) / 27.0) * (m - 15.0)), (200.0 / 3) * m)

    freqs = np.linspace(0, sr / 2, n_fft // 2 + 1)
    edges = m2h(np.linspace(h2m(0.0), h2m(sr / 2), n_mels + 2))
    fb = np.zeros((n_mels, freqs.size))
    for i in range(n_mels):
        rise = (freqs - edges[i]) / (edges[i + 1] - edges[i])
        fall = (edges[i + 2] - freqs) / (edges[i + 2] - edges[i + 1])
        fb[i] = np.clip(np.minimum(rise, fall), 0, None) * (2.0 / (edges[i + 2] - edges[i]))
    return torch.from_numpy(fb.astype(np.float32))


class Pipeline:
    def __init__(self, w):
        self.pre = [make_lstm(w, "encoder.pre_rnn.lstm.l%d" % i) for i in range(2)]
        self.post = [make_lstm(w, "encoder.post_rnn.lstm.l%d" % i) for i in range(3)]
        self.dec = [make_lstm(w, "prediction.dec_rnn.lstm.l%d" % i) for i in range(2)]
        self.embed = torch.from_numpy(w["prediction.embed.weight"])
        self.j1 = torch.nn.Linear(*w["joint.net.0.weight"].shape)
        self.j2 = torch.nn.Linear(*w["joint.net.3.weight"].shape)
        with torch.no_grad():
            self.j1.weight.copy_(torch.from_numpy(w["joint.net.0.weight"].T.copy()))
            self.j1.bias.copy_(torch.from_numpy(w["joint.net.0.bias"]))
            self.j2.weight.copy_(torch.from_numpy(w["joint.net.3.weight"].T.copy()))
            self.j2.bias.copy_(torch.from_numpy(w["joint.net.3.bias"]))
        self.fb = mel_filterbank().unsqueeze(0)
        self.win = torch.hann_window(320, periodic=False)
        self.hp = self.dec[0].hidden_size
        self.dt = torch.float32

    def to_bf16(self):
        """LSTMs, joint and embedding in bfloat16 (PyTorch runs bf16 LSTMs through oneDNN);
        the features stay float32 until the encoder's input."""
        self.dt = torch.bfloat16
        for m in list(self.pre) + list(self.post) + list(self.dec) + [self.j1, self.j2]:
            m.to(torch.bfloat16)
        self.embed = self.embed.to(torch.bfloat16)

    def features(self, x):
        n = x.shape[0]
        sig = torch.from_numpy(x).unsqueeze(0)
        sig = torch.cat([sig[:, :1], sig[:, 1:] - 0.97 * sig[:, :-1]], dim=1)
        spec = torch.stft(sig, n_fft=512, hop_length=160, win_length=320, center=True,
                          window=self.win, return_complex=True)
        power = torch.view_as_real(spec).pow(2).sum(-1) + 1e-5 ** 2
        x = torch.log(torch.matmul(self.fb, power) + 1e-20)
        frames = x.shape[2]
        seq = [x]
        for k in (1, 2):
            t = torch.zeros_like(x)
            t[:, :, :frames - k] = x[:, :, k:]
            seq.append(t)
        x = torch.cat(seq, dim=1)[:, :, ::3]
        seq_len = ((n + 159) // 160 + 2) // 3
        head = x[0, :, :seq_len]
        x = (x[0] - head.mean(dim=1, keepdim=True)) / (head.std(dim=1, keepdim=True) + 1e-5)
        return x[:, :seq_len].t(), seq_len  # [T, 240]

    def encode(self, feats, lens):
        T = max(lens)
        T += T % 2
        x = torch.zeros(T, len(feats), 240, dtype=self.dt)
        for i, f in enumerate(feats):
            x[:f.shape[0], i] = f.to(self.dt)
        for m in self.pre:
            x, _ = m(x)
        mask = torch.zeros(T, len(feats), 1, dtype=self.dt)
        for i, l in enumerate(lens):
            mask[:l, i] = 1
        x = (x * mask).transpose(0, 1).reshape(len(feats), T // 2, -1).transpose(0, 1)
        for m in self.post:
            x, _ = m(x)
        return x, [(l + 1) // 2 for l in lens]  # [T/2, B, H]

    def pred_step(self, tok, state):
        y = self.embed[tok].view(1, 1, -1)
        new = []
        for l, m in enumerate(self.dec):
            y, hc = m(y, state[l])
            new.append(hc)
        return y[0], new

    def decode(self, enc, length):
        zero = (torch.zeros(1, 1, self.hp, dtype=self.dt),
                torch.zeros(1, 1, self.hp, dtype=self.dt))
        state = [zero, zero]
        label = []
        for t in range(length):
            f = enc[t:t + 1]
            not_blank, symbols = True, 0
            while not_blank and symbols < 30:
                g, state2 = self.pred_step(label[-1] if label else 28, state)
                logits = self.j2(torch.relu(self.j1(torch.cat([f, g], dim=1))))[0]
                k = int(logits.argmax())
                if k == 28:
                    not_blank = False
                else:
                    label.append(k)
                    state = state2
                symbols += 1
        return label

    def run(self, audio):
        feats, lens = zip(*[self.features(a) for a in audio])
        enc, elens = self.encode(list(feats), list(lens))
        return [self.decode(enc[:, i], elens[i]) for i in range(len(audio))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--weights", required=True)
    ap.add_argument("--audio", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batches", default="1,16")
    ap.add_argument("--single", type=int, default=4)
    ap.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    p = Pipeline(read_weights(args.weights))
    if args.precision == "bf16":
        p.to_bf16()
    audio = read_audio(args.audio)
    with torch.inference_mode():
        p.run(audio[:1])  # warm-up
        for b in [int(x) for x in args.batches.split(",")]:
            t0 = time.perf_counter()
            if b == 1:
                tokens = [p.run([a])[0] for a in audio[:args.single]]
            else:
                tokens = p.run(audio[:b])
            dt = time.perf_counter() - t0
            print(json.dumps({"batch": b, "utt_per_sec": len(tokens) / dt, "seconds": dt,
                              "tokens": tokens}))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
