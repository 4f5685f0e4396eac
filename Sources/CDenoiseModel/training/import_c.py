"""Reads one mode's weights back out of Sources/CDenoiseModel/denoise_model.c into train.py's
parameter file, so that `train.py --init` can start from the model that is built in (export.py
writes each float with nine significant digits: the round trip is exact in float32).

Usage: python import_c.py --c denoise_model.c --mode standard|low --out PARAMS.npz
The hop, the training data's hash and the training command come from the file's comment.
"""
from __future__ import annotations

import argparse
import re

import numpy as np


def read_array(text, name):
    match = re.search(r"static const float " + name + r"\[(\d+)\] = \{(.*?)\};", text, re.S)
    if not match:
        raise SystemExit(f"no array {name} in the file")
    values = np.array([float(v.strip().rstrip("f")) for v in match.group(2).replace("\n", " ").split(",") if v.strip()],
                      np.float32)
    if values.size != int(match.group(1)):
        raise SystemExit(f"{name}: {values.size} values where the declaration says {match.group(1)}")
    return values


def provenance(text, mode):
    """The hop, data hash and train.py command export.py wrote in the comment for `mode`."""
    index = ["standard", "low"].index(mode)
    lines = text.splitlines()
    for i, line in enumerate(lines):
        match = re.match(rf"// mode {index}: .*?, hop (\d+),", line)
        if not match:
            continue
        data = re.match(r"//   training data sha256 ([0-9a-f]{64})", lines[i + 1])
        command = lines[i + 2][len("//   train.py "):] if lines[i + 2].startswith("//   train.py ") else ""
        if not data:
            raise SystemExit(f"mode {index}: no training data hash under its comment line")
        return int(match.group(1)), data.group(1), command
    raise SystemExit(f"no comment line for mode {index} in the file")


def unflatten(flat):
    version, d, e, h, b, correction = (float(v) for v in flat[:6])
    if version != 1:
        raise SystemExit(f"weights of version {version:g}: this reader knows version 1")
    d, e, h, b = int(d), int(e), int(h), int(b)
    shapes = [("mean", (d,)), ("inverse_deviation", (d,)), ("W", (e, d)), ("b", (e,)), ("Wi", (3 * h, e)),
              ("bi", (3 * h,)), ("Wh", (3 * h, h)), ("bh", (3 * h,)), ("Wo", (b, h)), ("bo", (b,))]
    out, at = {}, 8
    for key, shape in shapes:
        n = int(np.prod(shape))
        out[key] = flat[at:at + n].reshape(shape)
        at += n
    if at != flat.size:
        raise SystemExit(f"{flat.size} floats where the header's dimensions need {at}")
    return out, correction


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--c", required=True)
    ap.add_argument("--mode", choices=["standard", "low"], required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    with open(a.c) as f:
        text = f.read()
    params, correction = unflatten(read_array(text, a.mode + "_weights"))
    hop, data_sha256, command = provenance(text, a.mode)
    np.savez(a.out, **params, correction=correction, data_sha256=data_sha256, hop=hop, command=command, log="[]")
    print(f"{a.out}: {params['mean'].size} features, dense {params['W'].shape[0]}, GRU {params['Wh'].shape[1]}, "
          f"{params['Wo'].shape[0]} bands, correction {correction:g}")


if __name__ == "__main__":
    main()
