#!/bin/sh
# Makes the learned gain estimator from nothing: training scenes, features from the Swift front
# end, training, and the generated C array. Run from the repository root, with a release
# micmon-bench built (swift build -c release --product micmon-bench). Everything CPU-heavy runs
# niced on one thread per process. WORK holds the venv, the scenes and the features (outside the
# repository). This script makes the recipe's first link in one run: a 64-wide model per mode
# from scratch on ROOMS rooms. It does not remake the built-in models: the standard mode's is a
# chain, G (128 wide, from scratch on 300 rooms) -> wide192 -> r600 (600 rooms) -> r900 (900
# rooms), and the low mode's L is G on the low mode's features; docs/noise-suppression.md
# ("Fifth step" onwards) has each step's command.
#   Sources/CDenoiseModel/training/train.sh WORK [ROOMS] [MINUTES]
set -eu
WORK=$1
ROOMS=${2:-150}
MINUTES=${3:-40}
HERE=$(dirname "$0")
PY=$WORK/venv/bin/python
[ -x "$PY" ] || { python3 -m venv "$WORK/venv" && "$WORK/venv/bin/pip" install -q -r "$HERE/requirements.txt"; }
export XLA_FLAGS=--xla_cpu_multi_thread_eigen=false OMP_NUM_THREADS=1
nice -n 10 "$PY" "$HERE/gen_data.py" --out "$WORK/data" --rooms "$ROOMS" --jobs 2 --clean-share 0.25 \
    --noise-only-share 0.08
for mode in standard low; do
    nice -n 10 "$PY" "$HERE/features.py" --data "$WORK/data" --bench .build/release/micmon-bench \
        --latency $mode --out "$WORK/features-$mode.npz"
    nice -n 5 "$PY" "$HERE/train.py" --data "$WORK/features-$mode.npz" --out "$WORK/params-$mode.npz" \
        --minutes "$MINUTES" --batch 8 --correction 4 --keep 1 --keep-above 0.8 --clean-target-snr 30
done
"$PY" "$HERE/export.py" --standard "$WORK/params-standard.npz" --low "$WORK/params-low.npz" \
    --out Sources/CDenoiseModel/denoise_model.c --note "train.sh WORK $ROOMS $MINUTES"
