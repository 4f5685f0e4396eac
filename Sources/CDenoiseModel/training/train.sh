#!/bin/sh
# Makes one latency mode's learned gain estimator from nothing: training scenes, features from
# the Swift front end, training, and the generated C array (the other mode's array is kept as
# it is). Run from the repository root, with a release micmon-bench built (swift build -c
# release --product micmon-bench). WORK holds the venv, the scenes and the features (outside the
# repository).
#   Sources/CDenoiseModel/training/train.sh WORK standard|low
# standard: 900 rooms (10 min on 2 cores), their features (6 min), then 192 wide from scratch
#   for 100 min on one thread (15 GB at its peak): the built-in standard model's recipe.
# low: the first 300 rooms (4 min), their standard and low-mode features (8 min), G (128 wide,
#   from scratch on the standard features, 65 min), then G fine-tuned on the low mode's (18 min):
#   the built-in low model's recipe.
# Each run stops on its time budget, so each mode takes under two hours of wall clock. Run the
# modes one after the other: beside another job on the other core the standard run's epochs took
# 5.7 min instead of 4.2 (the two share the memory bus), and it peaks at 14.7 GB resident.
# docs/noise-suppression.md ("Ninth step") has the scores.
set -eu
WORK=$1
MODE=$2
HERE=$(dirname "$0")
PY=$WORK/train-venv/bin/python
[ -x "$PY" ] || { python3 -m venv "$WORK/train-venv" && "$WORK/train-venv/bin/pip" install -q -r "$HERE/requirements.txt"; }
export XLA_FLAGS=--xla_cpu_multi_thread_eigen=false OMP_NUM_THREADS=1
F="--batch 8 --correction 4 --keep 1 --keep-above 0.8 --clean-target-snr 30"
case $MODE in
standard) ROOMS=900 ;;
low) ROOMS=300 ;;
*) echo "usage: train.sh WORK standard|low" >&2; exit 2 ;;
esac
DATA=$WORK/train-data-c25n$ROOMS
FEATURES=$WORK/features-c25n$ROOMS
nice -n 10 "$PY" "$HERE/gen_data.py" --out "$DATA" --rooms $ROOMS --jobs 2 --clean-share 0.25 --noise-only-share 0.08
nice -n 10 "$PY" "$HERE/features.py" --data "$DATA" --bench .build/release/micmon-bench --latency standard \
    --out "$FEATURES-standard.npz" --jobs 2
if [ "$MODE" = standard ]; then
    nice -n 5 "$PY" "$HERE/train.py" --data "$FEATURES-standard.npz" --out "$WORK/params-standard.npz" \
        --minutes 100 --dense 192 --units 192 $F
else
    nice -n 10 "$PY" "$HERE/features.py" --data "$DATA" --bench .build/release/micmon-bench --latency low \
        --out "$FEATURES-low.npz" --jobs 2
    nice -n 5 "$PY" "$HERE/train.py" --data "$FEATURES-standard.npz" --out "$WORK/params-G.npz" \
        --minutes 65 --dense 128 --units 128 $F
    nice -n 5 "$PY" "$HERE/train.py" --data "$FEATURES-low.npz" --out "$WORK/params-low.npz" \
        --minutes 18 --lr 1e-3 --init "$WORK/params-G.npz" --dense 128 --units 128 $F
fi
# The other mode's array comes back out of the C source, so the new file holds both.
OTHER=$([ "$MODE" = standard ] && echo low || echo standard)
"$PY" "$HERE/import_c.py" --c Sources/CDenoiseModel/denoise_model.c --mode $OTHER --out "$WORK/params-kept-$OTHER.npz"
if [ "$MODE" = standard ]; then
    "$PY" "$HERE/export.py" --standard "$WORK/params-standard.npz" --low "$WORK/params-kept-low.npz" \
        --out Sources/CDenoiseModel/denoise_model.c --note "train.sh WORK standard"
else
    "$PY" "$HERE/export.py" --standard "$WORK/params-kept-standard.npz" --low "$WORK/params-low.npz" \
        --out Sources/CDenoiseModel/denoise_model.c --note "train.sh WORK low"
fi
