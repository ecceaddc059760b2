#!/usr/bin/env python3
"""mel_ref.py - an independent computation of the RNN-T reference features for
tests/unit/test_mel.c: the steps of FilterbankFeatures.forward
(speech_recognition/rnnt/pytorch/parts/features.py, configs/rnnt.toml [input_eval]) written
with torch.stft and a numpy Slaney mel filterbank (librosa.filters.mel's formulas; librosa
itself is not installed here).

  /usr/bin/python3 mel_ref.py IN.f32 OUT.f32     (raw little-endian float32 samples in,
                                                 float32 [seq_len, 240] out)
"""
import sys

import numpy as np
import torch


def slaney_hz_to_mel(f):
    f = np.asarray(f, dtype=np.float64)
    lin = f / (200.0 / 3)
    log_part = 15.0 + np.log(np.maximum(f, 1e-10) / 1000.0) / (np.log(6.4) / 27.0)
    return np.where(f >= 1000.0, log_part, lin)


def slaney_mel_to_hz(m):
    m = np.asarray(m, dtype=np.float64)
    lin = (200.0 / 3) * m
    log_part = 1000.0 * np.exp((np.log(6.4) / 27.0) * (m - 15.0))
    return np.where(m >= 15.0, log_part, lin)


def filterbank(sr=16000, n_fft=512, n_mels=80):
    freqs = np.linspace(0, sr / 2, n_fft // 2 + 1)
    edges = slaney_mel_to_hz(np.linspace(slaney_hz_to_mel(0.0), slaney_hz_to_mel(sr / 2), n_mels + 2))
    fb = np.zeros((n_mels, freqs.size))
    for i in range(n_mels):
        rise = (freqs - edges[i]) / (edges[i + 1] - edges[i])
        fall = (edges[i + 2] - freqs) / (edges[i + 2] - edges[i + 1])
        fb[i] = np.clip(np.minimum(rise, fall), 0, None) * (2.0 / (edges[i + 2] - edges[i]))
    return fb.astype(np.float32)


def features(x):
    n = x.shape[0]
    sig = torch.from_numpy(x).unsqueeze(0)
    sig = torch.cat([sig[:, :1], sig[:, 1:] - 0.97 * sig[:, :-1]], dim=1)
    win = torch.hann_window(320, periodic=False)
    spec = torch.stft(sig, n_fft=512, hop_length=160, win_length=320, center=True,
                      window=win, return_complex=True)
    power = spec.real ** 2 + spec.imag ** 2 + 1e-5 ** 2
    mel = torch.matmul(torch.from_numpy(filterbank()).unsqueeze(0), power)
    logmel = torch.log(mel + 1e-20)                      # [1, 80, F]
    frames = logmel.shape[2]
    parts = [logmel]
    for k in (1, 2):
        shifted = torch.zeros_like(logmel)
        shifted[:, :, :frames - k] = logmel[:, :, k:]
        parts.append(shifted)
    spliced = torch.cat(parts, dim=1)[:, :, ::3]          # [1, 240, ceil(F / 3)]
    seq_len = ((n + 159) // 160 + 2) // 3
    head = spliced[0, :, :seq_len]
    mean = head.mean(dim=1, keepdim=True)
    std = head.std(dim=1, keepdim=True) + 1e-5
    out = (spliced[0] - mean) / std
    return out[:, :seq_len].t().contiguous().numpy()     # [seq_len, 240]


def main():
    x = np.fromfile(sys.argv[1], dtype="<f4")
    features(x).astype("<f4").tofile(sys.argv[2])
    if len(sys.argv) > 3:
        filterbank().astype("<f4").tofile(sys.argv[3])


if __name__ == "__main__":
    main()
