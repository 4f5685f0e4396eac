"""Training scenes for the noise suppressor's learned gain estimator.

Simulated two-mic handset recordings at 48 kHz, made here from nothing but
  * speech: espeak-ng voices (its own sentences, voices other than the dev kit's) and the
    recorded speech Debian ships in klettres-data, ktuberling-data and gcin-voice (no other
    recorded speech);
  * noise: synthesized (babble from the same speech sources, coloured diffuse noise, fans and
    hum, traffic rumble);
  * rooms: pyroomacoustics shoeboxes with random size, RT60 and handset geometry.
The seed, rooms, voices and sentences are disjoint from the dev kit's (its scenes are for scoring
only, never for training).

Each scene is written to OUT/scenes/NNNN.npz (mix: n x 2 float32, primary then reference;
target: n float32, the direct path + 50 ms of early reflections of the talker at the primary)
and OUT/manifest.json records the parameters, the tool versions and the SHA-256 of all samples.

Usage: python gen_data.py --out DIR [--rooms N] [--scenes-per-room K] [--seed S] [--jobs J] [--resume]
       [--clean-share C] [--noise-only-share Z]
"""
from __future__ import annotations

import argparse
import glob
import hashlib
import json
import math
import os
import subprocess
import sys
import tempfile
import zlib
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import soundfile as sf
from scipy.signal import butter, resample_poly, sosfilt, fftconvolve

FS = 48000
SEED = 590217                # the dev kit uses 73104
DURATION_S = 6.0
EARLY_MS = 50.0
C_SOUND = 343.0

# espeak-ng voices and variants the dev kit does not use (it has en-us, en+f3, en-us+m3,
# en-gb-scotland+f2, en-029+m5, en-us+f4 as talkers and six others for babble).
VOICES = ["en+m1", "en+m2", "en+f1", "en+f2", "en-us+m4", "en-us+f5", "en-gb+m3", "en-gb+f4",
          "en-gb-x-rp+m4", "en-us-nyc+m5", "en-029+f3", "en-gb-scotland+m6", "de+m3", "fr+f4",
          "es+m2", "it+f2", "nl+m4", "sv+f1", "pl+m1", "pt+f3", "en+klatt", "en+klatt2"]
SENTENCES = [
    "The radio was playing an old song in the kitchen.",
    "We need three more chairs for the rehearsal tonight.",
    "My brother fixed the bicycle with a piece of wire.",
    "Is the north entrance still closed for repairs?",
    "Write the numbers down before you forget them.",
    "A small boat drifted slowly towards the harbour.",
    "The printer keeps jamming whenever I use thick paper.",
    "Honestly, I have no idea where the keys went.",
    "Ask the driver whether the bus stops near the museum.",
    "Green tea tastes better when the water is not boiling.",
    "They painted the fence white last summer.",
    "Hold the button for five seconds, then release it.",
    "Our flight was delayed because of the fog.",
    "Why would anyone leave the window open in winter?",
    "Put the heavy books on the bottom shelf.",
    "The children laughed at the clown's enormous shoes.",
    "Remember to charge the headset before the call.",
    "Four hundred people signed the petition yesterday.",
    "She plays the cello in a string quartet.",
    "Let me know if the sound cuts out again.",
    "Wir treffen uns morgen früh am Bahnhof.",
    "Le café est fermé le dimanche après midi.",
    "La música estaba demasiado alta anoche.",
    "Questa strada porta direttamente al mare.",
]
RECORDED_GLOBS = ["/usr/share/klettres/**/*.ogg", "/usr/share/ktuberling/sounds/**/*.ogg",
                  "/usr/share/gcin-voice/**/*.ogg"]
POOLS = ([], [])
NOISES = ["babble", "diffuse", "machine", "traffic", "mixed"]
CLEAN_SHARE = None           # --clean-share; None keeps the first data set's mix (5 % at 40 dB)
NOISE_ONLY_SHARE = 0.0       # --noise-only-share


def hp(x, f=60.0):
    return sosfilt(butter(4, f, "highpass", fs=FS, output="sos"), x)


def trim_normalise(x):
    x = hp(x - np.mean(x))
    frame = 480
    e = np.convolve(x ** 2, np.ones(frame) / frame, mode="same")
    if e.max() <= 0:
        return None
    on = np.where(10 * np.log10(e / e.max() + 1e-20) > -40)[0]
    x = x[max(0, on[0] - 600): min(len(x), on[-1] + 600)]
    if len(x) < 2400:
        return None
    x = x / (np.sqrt(np.mean(x ** 2)) + 1e-12)
    ramp = np.linspace(0, 1, 240)
    x[:240] *= ramp
    x[-240:] *= ramp[::-1]
    return x


def resample_to_fs(x, fs):
    if fs == FS:
        return x
    g = math.gcd(FS, fs)
    return resample_poly(x, FS // g, fs // g)


def espeak_clip(args):
    voice, pitch, wpm, text = args
    with tempfile.NamedTemporaryFile(suffix=".wav") as f:
        r = subprocess.run(["espeak-ng", "-v", voice, "-p", str(pitch), "-s", str(wpm), "-w", f.name, text],
                           capture_output=True)
        if r.returncode != 0:
            return None
        x, fs = sf.read(f.name, dtype="float64")
    if x.ndim > 1:
        x = x.mean(axis=1)
    return trim_normalise(resample_to_fs(x, fs))


def recorded_clip(path):
    try:
        x, fs = sf.read(path, dtype="float64")
    except Exception:
        return None
    if x.ndim > 1:
        x = x.mean(axis=1)
    return trim_normalise(resample_to_fs(x, fs))


def speech_pools(rng, jobs):
    """(espeak clips, recorded clips)."""
    sel = [(v, int(rng.integers(25, 75)), int(rng.integers(130, 195)), s)
           for v in VOICES for s in rng.choice(SENTENCES, size=6, replace=False)]
    files = sorted(set(p for g in RECORDED_GLOBS for p in glob.glob(g, recursive=True)))
    files = [files[i] for i in rng.choice(len(files), size=min(600, len(files)), replace=False)]
    with ProcessPoolExecutor(jobs) as ex:
        es = [c for c in ex.map(espeak_clip, sel, chunksize=8) if c is not None]
        rec = [c for c in ex.map(recorded_clip, files, chunksize=16) if c is not None]
    return es, rec, files


def utterance(rng, pool, n, start, gap=(0.1, 0.6)):
    """Clips from `pool` one after another from `start` up to n, each at a random level."""
    out = np.zeros(n)
    pos = start
    while pos < n - 2400:
        c = pool[int(rng.integers(len(pool)))] * 10 ** (rng.uniform(-4, 4) / 20)
        m = min(len(c), n - pos)
        out[pos:pos + m] = c[:m]
        pos += m + int(rng.uniform(*gap) * FS)
    return out


def colored(rng, n, alpha, fmin=20.0):
    w = np.fft.rfft(rng.standard_normal(n))
    f = np.fft.rfftfreq(n, 1 / FS)
    shape = np.where(f >= fmin, np.maximum(f, fmin) ** (-alpha / 2), fmin ** (-alpha / 2) * (f / fmin) ** 2)
    x = np.fft.irfft(w * shape, n)
    return x / (np.std(x) + 1e-12)


def machine(rng, n):
    t = np.arange(n) / FS
    fan = colored(rng, n, rng.uniform(0.0, 1.2), fmin=rng.uniform(50, 150))
    lo = rng.uniform(150, 600)
    fan = fan + rng.uniform(0.5, 2.5) * sosfilt(butter(2, [lo, lo * rng.uniform(2, 8)], "bandpass", fs=FS,
                                                           output="sos"), fan)
    fan /= np.std(fan)
    fb = rng.uniform(70, 260) * (1 + 0.003 * np.sin(2 * np.pi * rng.uniform(0.1, 0.6) * t))
    ph = 2 * np.pi * np.cumsum(fb) / FS
    blade = sum(np.sin(h * ph + rng.uniform(0, 2 * np.pi)) / h ** rng.uniform(0.6, 1.4) for h in range(1, 6))
    mains = rng.choice([50.0, 60.0])
    hum = sum(rng.uniform(0.2, 1.0) / h ** 0.7 * np.sin(2 * np.pi * mains * h * t + rng.uniform(0, 2 * np.pi))
              for h in range(1, 10))
    return (fan + 10 ** (rng.uniform(-14, 0) / 20) * blade / np.std(blade)
            + 10 ** (rng.uniform(-18, -2) / 20) * hum / np.std(hum))


def traffic(rng, n):
    t = np.arange(n) / FS
    rumble = sosfilt(butter(2, rng.uniform(250, 900), "lowpass", fs=FS, output="sos"),
                     colored(rng, n, rng.uniform(1.2, 2.0), fmin=rng.uniform(18, 35)))
    rumble /= np.std(rumble)
    hiss = sosfilt(butter(2, [rng.uniform(150, 400), rng.uniform(2500, 7000)], "bandpass", fs=FS, output="sos"),
                   colored(rng, n, rng.uniform(0.5, 1.5)))
    hiss /= np.std(hiss)
    env = np.full(n, rng.uniform(0.2, 0.7))
    for _ in range(int(rng.integers(1, 5))):
        tc, w = rng.uniform(0, DURATION_S), rng.uniform(0.5, 2.0)
        env += rng.uniform(0.5, 2.0) * np.exp(-0.5 * ((t - tc) / w) ** 2)
    f_eng = rng.uniform(25, 60) + rng.uniform(-8, 8) * np.tanh((t - rng.uniform(1, 5)) / 1.5)
    eng = np.sin(2 * np.pi * np.cumsum(f_eng) / FS)
    return env * (rumble + rng.uniform(0.1, 0.8) * eng) + 10 ** (rng.uniform(-14, -3) / 20) * (env - 0.1) * hiss


def unit(v):
    return v / np.linalg.norm(v)


def make_room(rng):
    dim = np.array([rng.uniform(2.8, 8.0), rng.uniform(2.5, 6.5), rng.uniform(2.3, 3.4)])
    rt60 = float(rng.uniform(0.15, 0.75))
    lo, hi = np.full(3, 0.3), dim - 0.3
    mouth = np.array([rng.uniform(0.6, dim[0] - 0.6), rng.uniform(0.6, dim[1] - 0.6), rng.uniform(1.05, 1.75)])
    d_p = unit(rng.normal(size=3) + np.array([0, 0, -0.6]))
    to_primary = rng.uniform(0.025, 0.07)
    prim = mouth + to_primary * d_p
    # The phone runs from the primary towards the ear: away from the mouth, mostly across it.
    perp = unit(np.cross(d_p, rng.normal(size=3)))
    axis = unit(perp + rng.uniform(0.1, 0.9) * d_p)
    spacing = rng.uniform(0.07, 0.15)
    sec = prim + spacing * axis
    centre = (prim + sec) / 2

    def around(dmin, dmax, zlo=0.4, zhi=2.2):
        for _ in range(200):
            az = rng.uniform(0, 2 * np.pi)
            d = rng.uniform(dmin, dmax)
            p = centre + d * np.array([np.cos(az), np.sin(az), 0])
            p[2] = rng.uniform(zlo, min(zhi, dim[2] - 0.3))
            if np.all(p > lo) and np.all(p < hi):
                return p
        return np.clip(centre + np.array([dmin, 0, 0]), lo, hi)

    srcs = {"mouth": mouth}
    for i in range(4):
        srcs[f"talker{i}"] = around(1.0, 3.5, 1.0, 1.8)
    srcs["machine"] = around(1.0, 3.0, 0.2, 2.9)
    srcs["window"] = around(1.8, 4.5, 1.0, 2.0)
    for i in range(6):
        srcs[f"diff{i}"] = around(0.8, 5.0, 0.2, 3.2)
    return dict(dim=dim, rt60=rt60, mics=np.stack([prim, sec]), srcs=srcs,
                to_primary=to_primary, to_secondary=float(np.linalg.norm(sec - mouth)), spacing=spacing)


def room_rirs(room_spec):
    import pyroomacoustics as pra
    e_abs, max_order = pra.inverse_sabine(room_spec["rt60"], room_spec["dim"])
    room = pra.ShoeBox(room_spec["dim"], fs=FS, materials=pra.Material(e_abs), max_order=min(max_order, 14),
                       use_rand_ism=False)
    names = list(room_spec["srcs"])
    for nm in names:
        room.add_source(list(room_spec["srcs"][nm]))
    room.add_microphone_array(room_spec["mics"].T)
    room.compute_rir()
    rirs = {nm: [np.asarray(room.rir[m][i], dtype=np.float64) for m in range(2)] for i, nm in enumerate(names)}
    return rirs, int(max_order)


def late_tail(rng, rir, rt60):
    """Adds a stochastic exponential tail where the capped image-source order stops, so the
    reverberation decays over the room's RT60 whatever the cap."""
    n = int(1.2 * rt60 * FS)
    if len(rir) >= n:
        return rir
    peak = int(np.argmax(np.abs(rir)))
    start = max(peak + int(0.03 * FS), len(rir) - int(0.02 * FS))
    decay = 6.91 / (rt60 * FS)
    ref = np.sqrt(np.mean(rir[max(peak + 240, start - 2400):start] ** 2) + 1e-20)
    out = np.zeros(n)
    out[:len(rir)] = rir
    k = np.arange(start, n)
    tail = rng.standard_normal(len(k)) * ref * np.exp(-decay * (k - start))
    fade = np.clip((k - start) / (len(rir) - start + 1e-9), 0, 1) if len(rir) > start else np.ones(len(k))
    out[start:] = out[start:] * (1 - fade) + tail * fade
    return out


def active_level(x):
    frame = 480
    m = len(x) // frame
    e = np.mean(x[:m * frame].reshape(m, frame) ** 2, axis=1)
    act = e > e.max() * 10 ** (-35 / 10)
    return float(np.mean(e[act]))


def scene(job):
    idx, room_spec, rirs, noise_kind, seed = job
    es, rec = POOLS
    rng = np.random.default_rng(seed)
    n = int(DURATION_S * FS)
    rt60 = room_spec["rt60"]
    rirs = {k: [late_tail(rng, r, rt60) for r in v] for k, v in rirs.items()}

    def at_mics(src, sig):
        return [fftconvolve(sig, r)[:n] for r in rirs[src]]

    lead = int(rng.uniform(0.3, 1.5) * FS)
    recorded = rng.random() < 0.5
    dry = utterance(rng, rec if recorded else es, n, lead, gap=(0.05, 0.4) if recorded else (0.2, 0.8))
    speech = at_mics("mouth", dry)
    r0 = rirs["mouth"][0]
    peak = int(np.argmax(np.abs(r0)))
    cut = peak + int(EARLY_MS / 1000 * FS)
    early = r0[:cut + 96].copy()
    early[cut:] *= np.linspace(1, 0, 96)
    target = fftconvolve(dry, early)[:n]

    noise = [np.zeros(n), np.zeros(n)]

    def add(src, sig, gain=1.0):
        for m, y in enumerate(at_mics(src, sig)):
            noise[m] += gain * y

    kinds = [noise_kind] if noise_kind != "mixed" else list(rng.choice(NOISES[:4], size=2, replace=False))
    for kind in kinds:
        g = 10 ** (rng.uniform(-3, 3) / 20)
        if kind == "babble":
            for i in range(int(rng.integers(1, 5))):
                pool = rec if rng.random() < 0.5 else es
                s = utterance(rng, pool, n, int(rng.uniform(0, 0.5) * FS), gap=(0.05, 0.5))
                add(f"talker{i}", g * s / (np.std(s) + 1e-12))
        elif kind == "diffuse":
            alpha = rng.uniform(0.0, 2.0)
            for i in range(int(rng.integers(3, 7))):
                add(f"diff{i}", g * colored(rng, n, alpha + rng.uniform(-0.3, 0.3)) / 2)
        elif kind == "machine":
            add("machine", g * machine(rng, n))
        else:
            add("window", g * traffic(rng, n))
            add(f"diff{int(rng.integers(6))}", g * 0.3 * sosfilt(
                butter(2, 300, "lowpass", fs=FS, output="sos"), colored(rng, n, 1.5)))
    if CLEAN_SHARE is None:
        snr = float(rng.uniform(-7, 15)) if rng.random() > 0.05 else 40.0
    else:
        # A share of near-clean scenes (30–60 dB), so the model learns to leave clean speech alone.
        snr = float(rng.uniform(30, 60)) if rng.random() < CLEAN_SHARE else float(rng.uniform(-7, 15))
    level_db = float(rng.uniform(-36, -18))
    s_lvl = active_level(speech[0])
    n_pow = np.mean(noise[0] ** 2) + 1e-20
    noise_gain = math.sqrt(s_lvl / n_pow * 10 ** (-snr / 10))
    scale = 10 ** (level_db / 20) / math.sqrt(s_lvl)
    mismatch_db = float(rng.uniform(-4, 4) if rng.random() < 0.5 else rng.uniform(-1, 1))
    sensor_db = float(rng.uniform(-75, -60))
    # A share of the noisy scenes hold noise alone (the user not talking): the same scene without
    # its talker, chosen by a stream of its own so that every other scene stays as it was.
    noise_only = bool(NOISE_ONLY_SHARE and snr < 30
                      and np.random.default_rng([seed, 1]).random() < NOISE_ONLY_SHARE)
    talker = 0.0 if noise_only else 1.0
    mix = np.zeros((n, 2))
    for m in range(2):
        sensor = rng.standard_normal(n) * 10 ** ((level_db + sensor_db) / 20)
        gm = 10 ** (mismatch_db / 20) if m == 1 else 1.0
        mix[:, m] = gm * (scale * (talker * speech[m] + noise_gain * noise[m]) + sensor)
    target = scale * target if not noise_only else np.zeros_like(target)
    params = dict(index=idx, noise=noise_kind, noise_only=noise_only, kinds=[str(k) for k in kinds],
                  snr_db=round(snr, 2),
                  speech_dbfs=round(level_db, 2), mismatch_db=round(mismatch_db, 2), recorded_speech=recorded,
                  lead_s=round(lead / FS, 3), sensor_db=round(sensor_db, 1))
    return idx, mix.astype(np.float32), target.astype(np.float32), params


def room_job(job):
    """One room: its geometry and impulse responses, then its scenes, written to OUT/scenes."""
    ri, seed, scenes_per_room, out = job
    rng = np.random.default_rng([seed, ri])
    spec = make_room(rng)
    rirs, order = room_rirs(spec)
    room = dict(dim=np.round(spec["dim"], 3).tolist(), rt60=round(spec["rt60"], 3), max_order=order,
                mouth_to_primary_m=round(spec["to_primary"], 4),
                mouth_to_secondary_m=round(spec["to_secondary"], 4), spacing_m=round(spec["spacing"], 4))
    params = []
    for s in range(scenes_per_room):
        idx = ri * scenes_per_room + s
        kind = NOISES[(ri + s) % len(NOISES)]
        _, mix, target, p = scene((idx, spec, rirs, kind, int(rng.integers(2 ** 31))))
        p["room"] = ri
        np.savez(os.path.join(out, "scenes", f"{idx:04d}.npz"), mix=mix, target=target)
        params.append(p)
    return room, params


def data_hash(out, scenes):
    digest = hashlib.sha256()
    for p in scenes:
        d = np.load(os.path.join(out, "scenes", f"{p['index']:04d}.npz"))
        digest.update(d["mix"].tobytes())
        digest.update(d["target"].tobytes())
    return digest.hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--rooms", type=int, default=40)
    ap.add_argument("--scenes-per-room", type=int, default=4)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--resume", action="store_true", help="keep the complete rooms of a stopped run in --out")
    ap.add_argument("--clean-share", type=float, default=None,
                    help="share of scenes at 30-60 dB SNR (without it: 5 %% at 40 dB, the first data set)")
    ap.add_argument("--noise-only-share", type=float, default=0.0, help="share of noisy scenes without a talker")
    a = ap.parse_args()
    global CLEAN_SHARE, NOISE_ONLY_SHARE
    CLEAN_SHARE = a.clean_share
    NOISE_ONLY_SHARE = a.noise_only_share
    os.makedirs(os.path.join(a.out, "scenes"), exist_ok=True)
    # Room r depends only on (seed, r) and the speech pools, so the first K rooms of any run are
    # the data of `--rooms K`: a run stopped early still has a reproducible command.
    es, rec, files = speech_pools(np.random.default_rng(a.seed), a.jobs)
    global POOLS
    POOLS = (es, rec)  # inherited by the forked workers
    print(f"speech: {len(es)} espeak-ng clips, {len(rec)} recorded clips", flush=True)
    import pyroomacoustics as pra
    import scipy
    manifest = dict(seed=a.seed, duration_s=DURATION_S, scenes_per_room=a.scenes_per_room, rooms=[], scenes=[],
                    clean_share=a.clean_share, noise_only_share=a.noise_only_share,
                    recorded_files=len(files),
                    espeak_ng=subprocess.run(["espeak-ng", "--version"], capture_output=True, text=True).stdout.strip(),
                    packages={p: subprocess.run(["dpkg-query", "-W", "-f=${Version}", p], capture_output=True,
                                                text=True).stdout.strip()
                              for p in ["espeak-ng", "klettres-data", "ktuberling-data", "gcin-voice"]},
                    python=dict(numpy=np.__version__, scipy=scipy.__version__, pyroomacoustics=pra.__version__,
                                soundfile=sf.__version__))
    first = 0
    old_path = os.path.join(a.out, "manifest.json")
    if a.resume and os.path.exists(old_path):
        # Rooms depend only on (seed, room), so a stopped run goes on where it stopped.
        old = json.load(open(old_path))
        assert old["seed"] == a.seed and old["scenes_per_room"] == a.scenes_per_room, "another data set"
        assert old.get("clean_share") == a.clean_share, "another data set (--clean-share)"
        assert old.get("noise_only_share", 0.0) == a.noise_only_share, "another data set (--noise-only-share)"
        first = old.get("complete_rooms", 0)
        manifest["rooms"], manifest["scenes"] = old["rooms"][:first], old["scenes"][:first * a.scenes_per_room]
    with ProcessPoolExecutor(a.jobs) as ex:
        jobs = [(ri, a.seed, a.scenes_per_room, a.out) for ri in range(first, a.rooms)]
        for ri, (room, params) in enumerate(ex.map(room_job, jobs), start=first):
            manifest["rooms"].append(room)
            manifest["scenes"] += params
            manifest["complete_rooms"] = ri + 1
            with open(os.path.join(a.out, "manifest.json"), "w") as f:
                json.dump(manifest, f, indent=1)
            print(f"room {ri + 1}/{a.rooms}", flush=True)
    manifest["sha256"] = data_hash(a.out, manifest["scenes"])
    with open(os.path.join(a.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print("sha256", manifest["sha256"])


if __name__ == "__main__":
    sys.exit(main())
