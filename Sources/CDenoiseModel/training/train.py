"""Trains the learned gain estimator on features.py's output (JAX, CPU).

Model (as NoiseSuppressorModelKernel.swift runs it): normalised features → dense tanh (E units)
→ GRU (H units, PyTorch gate convention) → dense sigmoid σ per band. Without --correction, σ is
the band's gain; with --correction R it corrects the classic gain: ĝ = min(classic · 2^(R(2σ − 1)), 1)
(the classic band gain is feature block 4; the kernel applies the correction to each bin's classic
gain). Loss: weighted mean of (sqrt ĝ − sqrt g)², the RNNoise-style compressed gain error, with ĝ
floored as the kernel floors it, plus --keep λ times (sqrt classic − sqrt ĝ)² where ĝ is below
the classic gain and the ideal gain is at least --keep-above: suppressing more than the classic
gain where speech dominates costs extra. --clean-target-snr S makes the target 1 (pass
everything) in scenes of at least S dB SNR, so near-clean speech keeps its reverberation. Whole
scenes are sequences, starting from a zero state as the kernel does. The rooms of the last
`--validation` share of the scenes are held out and reported.
--energy-weight α weighs each band and frame by (its canceller-output power / the scene's mean
band power)^α (default 0: every band and frame the same): SI-SDR and PESQ are dominated by the
loud time-frequency regions (about 1 % of the bands and frames hold half a scene's energy), and
α = 0.25 is a loudness-like compression of that. The run's validation loss is then the weighted
one (it chooses the checkpoint); validation_plain, the unweighted loss, is logged beside it.

Usage: python train.py --data FEATURES.npz --out PARAMS.npz [--minutes M] [--dense E] [--units H]
       [--correction R] [--keep λ] [--keep-above G] [--clean-target-snr S] [--init PARAMS.npz]
       [--widen-from PARAMS.npz] [--energy-weight α]
--widen-from starts from a narrower model (train.py's output, or import_c.py's) widened to
--dense E / --units H so that the wider network computes exactly what it did (see widen()).
Threads: run with XLA_FLAGS=--xla_cpu_multi_thread_eigen=false OMP_NUM_THREADS=1 and nice.
"""
from __future__ import annotations

import argparse
import functools
import json
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

GAIN_FLOOR = 10 ** (-30 / 20)   # NoiseSuppressorCoefficients.learnedGainFloor
BANDS = 31                      # NoiseSuppressorBands.count; feature block 4 is the classic gain


def init_params(key, d, e, h, b, correction=0.0):
    ks = jax.random.split(key, 4)

    def uni(k, shape, fan):
        lim = 1 / np.sqrt(fan)
        return jax.random.uniform(k, shape, jnp.float32, -lim, lim)

    # A correcting model starts at σ ≈ ½: the classic gain, nearly unchanged.
    wo, bo = (uni(ks[3], (b, h), h) * 0.1, jnp.zeros(b)) if correction > 0 else (uni(ks[3], (b, h), h), jnp.ones(b))
    return dict(W=uni(ks[0], (e, d), d), b=jnp.zeros(e), Wi=uni(ks[1], (3 * h, e), h), bi=jnp.zeros(3 * h),
                Wh=uni(ks[2], (3 * h, h), h), bh=jnp.zeros(3 * h), Wo=wo, bo=bo)


def widen(old, key, e, h):
    """A narrower model's parameters in a network of E dense and H GRU units, function-preserving.

    The old units keep their weights (the top-left blocks, each GRU gate's rows at the gate's new
    offset). New units get init_params' random incoming weights (features → dense; dense and state
    → their gates) and zero biases, but nothing flows out of them yet: their columns in the gate
    weights of the old GRU units and in the output layer are zero. So the old units see exactly
    what they saw and the output is the old model's; the new units' outputs are nonzero, so their
    outgoing weights get gradients from the first step on.
    """
    e0, d = old["W"].shape
    h0 = old["Wh"].shape[1]
    b = old["Wo"].shape[0]
    assert e >= e0 and h >= h0, f"--dense {e} --units {h} is narrower than the model ({e0}, {h0})"
    fresh = {k: np.asarray(v) for k, v in init_params(key, d, e, h, b).items()}
    W = fresh["W"].copy()
    W[:e0] = old["W"]
    bias = np.zeros(e, np.float32)
    bias[:e0] = old["b"]
    Wi, Wh = fresh["Wi"].copy(), fresh["Wh"].copy()
    bi, bh = np.zeros(3 * h, np.float32), np.zeros(3 * h, np.float32)
    for gate in range(3):
        new_rows, old_rows = slice(gate * h, gate * h + h0), slice(gate * h0, gate * h0 + h0)
        Wi[new_rows] = 0
        Wi[new_rows, :e0] = old["Wi"][old_rows]
        Wh[new_rows] = 0
        Wh[new_rows, :h0] = old["Wh"][old_rows]
        bi[new_rows] = old["bi"][old_rows]
        bh[new_rows] = old["bh"][old_rows]
    Wo = np.zeros((b, h), np.float32)
    Wo[:, :h0] = old["Wo"]
    return dict(W=W, b=bias, Wi=Wi, bi=bi, Wh=Wh, bh=bh, Wo=Wo, bo=np.asarray(old["bo"], np.float32))


def forward(p, x):
    """x: (batch, T, D) normalised → gains (batch, T, B)."""
    h_units = p["Wh"].shape[1]
    dense = jnp.tanh(x @ p["W"].T + p["b"])
    gi = dense @ p["Wi"].T + p["bi"]                     # (batch, T, 3H)

    def step(h, gi_t):
        gh = h @ p["Wh"].T + p["bh"]
        z = jax.nn.sigmoid(gi_t[:, :h_units] + gh[:, :h_units])
        r = jax.nn.sigmoid(gi_t[:, h_units:2 * h_units] + gh[:, h_units:2 * h_units])
        n = jnp.tanh(gi_t[:, 2 * h_units:] + r * gh[:, 2 * h_units:])
        h = (1 - z) * n + z * h
        return h, h

    h0 = jnp.zeros((x.shape[0], h_units))
    _, hs = jax.lax.scan(step, h0, jnp.swapaxes(gi, 0, 1))
    hs = jnp.swapaxes(hs, 0, 1)
    return jax.nn.sigmoid(hs @ p["Wo"].T + p["bo"])


def applied_gain(p, x, classic, correction):
    """The band gain the kernel applies: σ, or the classic gain corrected by σ."""
    sigma = forward(p, x)
    if correction > 0:
        sigma = jnp.minimum(classic * jnp.exp2(correction * (2 * sigma - 1)), 1.0)
    return jnp.maximum(sigma, GAIN_FLOOR)


def loss_fn(p, x, g, w, classic, correction, keep, keep_above):
    ghat = applied_gain(p, x, classic, correction)
    err = (jnp.sqrt(ghat) - jnp.sqrt(g)) ** 2
    if keep > 0:
        below = jnp.maximum(jnp.sqrt(classic) - jnp.sqrt(ghat), 0) * (g >= keep_above)
        err = err + keep * below ** 2
    return jnp.sum(w * err) / (jnp.sum(w) + 1e-9)


def adam_init(p):
    return jax.tree.map(jnp.zeros_like, p), jax.tree.map(jnp.zeros_like, p)


@functools.partial(jax.jit, static_argnums=(9, 10, 11))
def train_step(p, m, v, t, lr, x, g, w, classic, correction, keep, keep_above):
    loss, grads = jax.value_and_grad(loss_fn)(p, x, g, w, classic, correction, keep, keep_above)
    gnorm = jnp.sqrt(sum(jnp.sum(q ** 2) for q in jax.tree.leaves(grads)))
    scale = jnp.minimum(1.0, 1.0 / (gnorm + 1e-9))     # clip the gradient norm at 1
    grads = jax.tree.map(lambda q: q * scale, grads)
    m = jax.tree.map(lambda a, q: 0.9 * a + 0.1 * q, m, grads)
    v = jax.tree.map(lambda a, q: 0.999 * a + 0.001 * q * q, v, grads)
    mhat = jax.tree.map(lambda a: a / (1 - 0.9 ** t), m)
    vhat = jax.tree.map(lambda a: a / (1 - 0.999 ** t), v)
    p = jax.tree.map(lambda a, mh, vh: a - lr * mh / (jnp.sqrt(vh) + 1e-8), p, mhat, vhat)
    return p, m, v, loss


eval_loss = jax.jit(loss_fn, static_argnums=(5, 6, 7))


def classic_loss(x_classic, g, w):
    """The loss of the classic gain itself, for comparison."""
    ghat = np.maximum(x_classic, GAIN_FLOOR)
    return float(np.sum(w * (np.sqrt(ghat) - np.sqrt(g)) ** 2) / (np.sum(w) + 1e-9))


def feature_statistics(f, scenes, chunk=64):
    """Each feature's mean and deviation (at least 1e-3) over the given scenes, float32.

    Two passes in float64, a few scenes at a time, so no copy of the features is made.
    """
    d = f.shape[2]
    n = len(scenes) * f.shape[1]
    total = np.zeros(d)
    for i in range(0, len(scenes), chunk):
        total += f[scenes[i:i + chunk]].reshape(-1, d).sum(0, dtype=np.float64)
    mean = total / n
    squares = np.zeros(d)
    for i in range(0, len(scenes), chunk):
        squares += ((f[scenes[i:i + chunk]].reshape(-1, d) - mean) ** 2).sum(0)
    dev = np.maximum(np.sqrt(squares / n), 1e-3)
    return mean.astype(np.float32), dev.astype(np.float32)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--dense", type=int, default=64)
    ap.add_argument("--units", type=int, default=64)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--validation", type=float, default=0.1)
    ap.add_argument("--correction", type=float, default=0.0, help="octaves either way; 0: σ is the gain")
    ap.add_argument("--keep", type=float, default=0.0)
    ap.add_argument("--keep-above", type=float, default=0.8)
    ap.add_argument("--clean-target-snr", type=float, default=None)
    ap.add_argument("--init", help="start from these parameters (train.py's output on the same features)")
    ap.add_argument("--energy-weight", type=float, default=0.0,
                    help="weigh each band and frame by (power / the scene's mean band power)^α; 0: uniform")
    ap.add_argument("--widen-from", help="start from these narrower parameters widened to --dense/--units, "
                    "computing exactly what they computed")
    a = ap.parse_args()
    data = np.load(a.data)
    f, g, w, rooms = data["features"], data["gains"], data["weights"], data["rooms"]
    s, t_count, d = f.shape
    b = g.shape[2]
    assert b == BANDS
    if a.clean_target_snr is not None:
        # Near-clean scenes keep their speech with its reverberation: target 1 where the canceller's
        # output stands 10 dB above the scene's own noise floor (the band's mean over the first
        # 0.25 s, before the talker starts), the ideal gain elsewhere (their noise is still noise).
        clean = data["snr_db"] >= a.clean_target_snr
        lead = int(0.25 * 48000 / int(data["hop"]))
        out = 2.0 ** f[:, :, BANDS:2 * BANDS]
        floor = out[:, :lead].mean(axis=1, keepdims=True)
        speech = clean[:, None, None] & (out > 10 * floor)
        g = np.where(speech, 1.0, g).astype(np.float32)
        print(f"{int(clean.sum())} scenes at ≥ {a.clean_target_snr} dB SNR: target gain 1 in "
              f"{speech[clean].mean():.0%} of their frames and bands", flush=True)
    classic = np.clip(f[:, :, 4 * BANDS:5 * BANDS], 0, 1).astype(np.float32)
    w_plain = None
    if a.energy_weight > 0:
        # Canceller-output power (feature block 1 is its log₂) against the scene's mean band power
        # over the weighted bands and frames, so every scene keeps its share whatever its level.
        power = 2.0 ** f[:, :, BANDS:2 * BANDS].astype(np.float64)
        mean_power = (power * w).sum(axis=(1, 2), keepdims=True) / (w.sum(axis=(1, 2), keepdims=True) + 1e-30)
        w_plain = w
        w = (w * (power / np.maximum(mean_power, 1e-30)) ** a.energy_weight).astype(np.float32)
        del power
        print(f"energy weight α = {a.energy_weight}: weights 10/50/90/99th percentile "
              f"{np.round(np.percentile(w[w_plain > 0][::97], [10, 50, 90, 99]), 3).tolist()}", flush=True)
    cut_room = np.quantile(rooms, 1 - a.validation)
    val = rooms > cut_room
    assert not (a.init and a.widen_from), "--init or --widen-from, not both"
    if a.init or a.widen_from:
        # The starting parameters keep the normalisation they were trained with.
        start_from = np.load(a.init or a.widen_from)
        mean, dev = start_from["mean"], 1 / start_from["inverse_deviation"]
    else:
        mean, dev = feature_statistics(f, np.flatnonzero(~val))
    # Normalised in place, and the training scenes taken by index batch by batch: one copy of the
    # features in memory (5 GB at 900 rooms) rather than three.
    f -= mean
    f /= dev
    x, train_scenes = f, np.flatnonzero(~val)
    xv, gv, wv, cv = jnp.asarray(x[val]), jnp.asarray(g[val]), jnp.asarray(w[val]), jnp.asarray(classic[val])
    wv_plain = jnp.asarray(w_plain[val]) if w_plain is not None else None
    print(f"train {len(train_scenes)} scenes, validation {int(val.sum())}, {t_count} frames, {d} features, {b} bands; "
          f"the classic gain's validation loss {classic_loss(classic[val], g[val], w[val]):.4f}", flush=True)
    hyper = (a.correction, a.keep, a.keep_above)
    p = init_params(jax.random.PRNGKey(a.seed), d, a.dense, a.units, b, a.correction)
    if a.init:
        assert float(start_from["correction"]) == a.correction
        p = {k: jnp.asarray(start_from[k]) for k in p}
    if a.widen_from:
        assert float(start_from["correction"]) == a.correction
        narrow = {k: jnp.asarray(start_from[k]) for k in p}
        p = {k: jnp.asarray(v) for k, v in widen(start_from, jax.random.PRNGKey(a.seed + 1), a.dense, a.units).items()}
        # Epoch 0: the widened model against the one it was widened from, on the validation scenes.
        if len(xv):
            v_narrow = float(eval_loss(narrow, xv, gv, wv, cv, *hyper))
            v_wide = float(eval_loss(p, xv, gv, wv, cv, *hyper))
            probe = xv[:1, :200]
            diff = float(jnp.max(jnp.abs(forward(p, probe) - forward(narrow, probe))))
            print(json.dumps(dict(epoch=0, validation=v_wide, validation_widened_from=v_narrow,
                                  max_output_difference=diff)), flush=True)
    elif a.init and len(xv):
        epoch0 = dict(epoch=0, validation=float(eval_loss(p, xv, gv, wv, cv, *hyper)))
        if wv_plain is not None:
            epoch0["validation_plain"] = float(eval_loss(p, xv, gv, wv_plain, cv, *hyper))
        print(json.dumps(epoch0), flush=True)
    m, v = adam_init(p)
    rng = np.random.default_rng(a.seed)
    start = time.time()
    step = 0
    epoch = 0
    best = (float("inf"), p)
    log = []
    while time.time() - start < a.minutes * 60:
        order = rng.permutation(len(train_scenes))
        losses = []
        for i in range(0, len(order) - a.batch + 1, a.batch):
            idx = train_scenes[order[i:i + a.batch]]
            step += 1
            frac = min((time.time() - start) / (a.minutes * 60), 1.0)
            lr = a.lr * (0.1 ** frac)                     # decays tenfold over the budget
            p, m, v, loss = train_step(p, m, v, step, lr, jnp.asarray(x[idx]), jnp.asarray(g[idx]),
                                       jnp.asarray(w[idx]), jnp.asarray(classic[idx]), *hyper)
            losses.append(float(loss))
            if time.time() - start > a.minutes * 60:
                break
        epoch += 1
        vl = float(eval_loss(p, xv, gv, wv, cv, *hyper)) if len(xv) else float("nan")
        log.append(dict(epoch=epoch, step=step, train=float(np.mean(losses)), validation=vl,
                        minutes=round((time.time() - start) / 60, 2)))
        if wv_plain is not None and len(xv):
            log[-1]["validation_plain"] = float(eval_loss(p, xv, gv, wv_plain, cv, *hyper))
        print(json.dumps(log[-1]), flush=True)
        if vl < best[0]:
            best = (vl, p)
        np.savez(a.out, mean=mean, inverse_deviation=1 / dev, **{k: np.asarray(q) for k, q in best[1].items()},
                 log=json.dumps(log), data_sha256=str(data["data_sha256"]), hop=int(data["hop"]),
                 correction=a.correction, command=" ".join(sys.argv[1:]))
    print("best validation", best[0])


if __name__ == "__main__":
    sys.exit(main())
