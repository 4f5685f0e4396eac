"""Features and targets for the learned gain estimator, from the scenes gen_data.py made.

The features are not recomputed here: each scene's mix goes through
`micmon-bench --dump-denoise-features`, which runs the suppressor's own Swift front end
(NoiseSuppressor.frameFeatures) block by block exactly as it runs live, so what the model sees
in training is, bit for bit, what it sees in the product. Only the target needs Python: the
band energies of the target speech through the same analysis window and framing as the
kernel, checked against the kernel's own primary-mic band energies (feature block 0) on every
scene.

Per frame and band the target gain is sqrt(target energy / canceller-output energy), at most 1
(the ideal ratio mask on the kernel's bands); the weight is 0 where the canceller's output is
silent.

Usage: python features.py --data DIR --bench PATH [--latency standard|low] --out FILE.npz [--jobs J]
"""
from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor

import numpy as np

FRAME = 512
CENTRES = [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 19, 22, 26, 30, 35, 41, 48, 56, 65, 76, 89, 104, 121, 141,
           164, 191, 222, 256]   # NoiseSuppressorBands.centres
NB = len(CENTRES)
FEATURES = 5 * NB + 2          # NoiseSuppressorBands.featureCount
FLOOR = 1e-10


def band_matrix():
    """(bins, bands) triangular shares, as NoiseSuppressorBandState builds them."""
    w = np.zeros((FRAME // 2 + 1, NB))
    for k in range(FRAME // 2 + 1):
        b = 0
        while b < NB - 2 and CENTRES[b + 1] <= k:
            b += 1
        s = min((k - CENTRES[b]) / (CENTRES[b + 1] - CENTRES[b]), 1.0)
        w[k, b] += 1 - s
        w[k, b + 1] += s
    return w


def analysis_window(hop):
    """The kernel's low-delay analysis window: sqrt-Hann rising over n − hop, falling over hop."""
    n, m = FRAME, hop
    i = np.arange(n)
    return np.where(i < n - m, np.sin(np.pi * i / (2 * (n - m))), np.cos(np.pi * (i - (n - m)) / (2 * m)))


def band_energies(x, hop, bands, window):
    """Frame t analyses samples [(t + 1)·hop − FRAME, (t + 1)·hop), zeros before the start."""
    t_count = len(x) // hop
    padded = np.concatenate([np.zeros(FRAME - hop, dtype=np.float64), x.astype(np.float64)])
    idx = np.arange(t_count)[:, None] * hop + np.arange(FRAME)[None, :]
    frames = padded[idx] * window[None, :]
    spec = np.fft.rfft(frames, axis=1)
    return (np.abs(spec) ** 2) @ bands


def dump(bench, mix, latency):
    args = [bench, "--dump-denoise-features"] + (["--denoise-latency", "low"] if latency == "low" else [])
    out = subprocess.run(args, input=np.ascontiguousarray(mix, dtype="<f4").tobytes(), capture_output=True,
                         check=True).stdout
    return np.frombuffer(out, dtype="<f4")


def hop_frames(latency):
    return 128 if latency == "standard" else 64


@functools.cache
def framing(hop):
    """The band matrix and analysis window, made once per process."""
    return band_matrix(), analysis_window(hop)


def scene_features(job):
    """One scene's features, target gains and weights, and its worst framing error."""
    data, bench, latency, index = job
    hop = hop_frames(latency)
    d = np.load(os.path.join(data, "scenes", f"{index:04d}.npz"))
    mix, target = d["mix"], d["target"]
    raw = dump(bench, mix, latency)
    t_count = len(mix) // hop
    per = FEATURES + hop
    assert raw.size == t_count * per, (raw.size, t_count, per)
    raw = raw.reshape(t_count, per)
    f = raw[:, :FEATURES].copy()
    # The Python framing and bands against the kernel's: primary-mic band energies.
    bands, window = framing(hop)
    e1 = band_energies(mix[:, 0], hop, bands, window)
    ok = e1 > 1e-6
    err = np.abs(np.log2(e1 + FLOOR) - f[:, :NB])[ok]
    et = band_energies(target, hop, bands, window)
    ey = np.maximum(2.0 ** f[:, NB:2 * NB] - FLOOR, 0)
    g = np.sqrt(np.clip(et / np.maximum(ey, 1e-30), 0, 1))
    w = (ey > 1e-7).astype(np.float32)
    return f.astype(np.float32), g.astype(np.float32), w, float(err.max()) if err.size else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--bench", required=True)
    ap.add_argument("--latency", default="standard", choices=["standard", "low"])
    ap.add_argument("--out", required=True)
    ap.add_argument("--jobs", type=int, default=1, help="scenes worked on at once (the output is the same)")
    a = ap.parse_args()
    hop = hop_frames(a.latency)
    manifest = json.load(open(os.path.join(a.data, "manifest.json")))
    feats, gains, weights, rooms, snrs = [], [], [], [], []
    worst = 0.0
    digest = hashlib.sha256()
    jobs = [(a.data, a.bench, a.latency, sc["index"]) for sc in manifest["scenes"]]
    with ProcessPoolExecutor(max_workers=a.jobs) as pool:
        for sc, (f, g, w, err) in zip(manifest["scenes"], pool.map(scene_features, jobs, chunksize=4)):
            d = np.load(os.path.join(a.data, "scenes", f"{sc['index']:04d}.npz"))
            digest.update(d["mix"].tobytes())
            digest.update(d["target"].tobytes())
            worst = max(worst, err)
            assert worst < 0.01, f"scene {sc['index']}: features do not match the Python framing ({worst})"
            feats.append(f)
            gains.append(g)
            weights.append(w)
            rooms.append(sc["room"])
            snrs.append(sc["snr_db"])
    t_count = feats[0].shape[0]
    # A run of gen_data.py stopped early lists its complete rooms only and has no hash yet: the
    # hash is then that of the scenes read here (what `--rooms K` reproduces).
    data_sha = manifest.get("sha256", digest.hexdigest())
    assert digest.hexdigest() == data_sha, "the scenes changed since gen_data.py"
    np.savez(a.out, features=np.stack(feats), gains=np.stack(gains), weights=np.stack(weights),
             rooms=np.array(rooms), snr_db=np.array(snrs, np.float32), hop=hop, data_sha256=data_sha,
             rooms_used=manifest.get("complete_rooms", -1))
    print(f"{len(feats)} scenes from {manifest.get('complete_rooms')} rooms, {t_count} frames each; framing check: "
          f"worst |log2 error| {worst:.2e}; data sha256 {data_sha}")


if __name__ == "__main__":
    sys.exit(main())
