#!/usr/bin/env bash
# micmon report against ffmpeg's ebur128 filter on the same file, and the floor beneath both:
# CPU time (user + sys) of each, RUNS alternating runs (micmon, ffmpeg, floor; then the reverse),
# the median of each and the ratios (target: micmon report <= 0.5 x ffmpeg). ffmpeg runs
# `-af ebur128=peak=true`: momentary, short-term, integrated loudness, LRA and true peak (4x
# oversampled), the work `micmon report` does for its loudness and true peak. The floor is
# `micmon-bench --only report-floor`: libebur128 alone with integrated loudness and LRA per
# channel, no true peak, no statistics (the least any libebur128-based report can cost).
#
#   Benchmarks/tools/report-vs-ffmpeg.sh [MICMON] [SECONDS] [FILE]
#
# MICMON defaults to the release build (swift build -c release --product micmon micmon-bench;
# micmon-bench is taken from beside MICMON, or from $BENCH), SECONDS to 3600, RUNS to 3.
# Without FILE the file is a stereo 48 kHz 16-bit WAV made here with ffmpeg (a tone at changing
# levels plus noise: the second channel is stationary white noise, the worst case for the
# true-peak screen). FILE is measured as it is; with LOOP=1 it is first looped to SECONDS as a
# 32-bit float WAV (the format a take is recorded in): e.g. the dev kit's scenes made an hour.
# The files made here are kept in a scratch folder that is removed at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."
micmon="${1:-.build/release/micmon}"
seconds="${2:-3600}"
runs="${RUNS:-3}"
bench="${BENCH:-$(dirname "$micmon")/micmon-bench}"
[ -x "$micmon" ] || { echo "no micmon at $micmon: swift build -c release --product micmon" >&2; exit 64; }
command -v ffmpeg >/dev/null || { echo "ffmpeg is not installed" >&2; exit 64; }
folder="$(mktemp -d)"
trap 'rm -rf "$folder"' EXIT
if [ -n "${3:-}" ] && [ "${LOOP:-0}" = 1 ]; then
    file="$folder/looped.wav"
    ffmpeg -hide_banner -loglevel error -stream_loop -1 -i "$3" -t "$seconds" -c:a pcm_f32le "$file"
    label="$3 looped to ${seconds} s, 32-bit float WAV"
elif [ -n "${3:-}" ]; then
    file="$3"
    label="$file"
else
    file="$folder/hour.wav"
    ffmpeg -hide_banner -loglevel error -f lavfi \
        -i "aevalsrc=exprs='(0.3+0.25*sin(2*PI*t/37))*sin(2*PI*440*t)|0.05*(random(0)*2-1)':s=48000:d=$seconds" \
        -c:a pcm_s16le "$file"
    label="${seconds} s, 2 ch, 48 kHz, 16-bit WAV (synthetic)"
fi
cpu() { # prints user+sys seconds of the command
    /usr/bin/time -f "%U %S" -o "$folder/time" "$@" >/dev/null 2>"$folder/stderr" || { cat "$folder/stderr" >&2; exit 1; }
    awk '{ printf "%.2f", $1 + $2 }' "$folder/time"
}
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# Warm the page cache once, so every run reads the file from memory.
cat "$file" >/dev/null
ours="" theirs="" floor=""
for run in $(seq 1 "$runs"); do
    order="micmon ffmpeg floor"
    [ $((run % 2)) = 0 ] && order="floor ffmpeg micmon"
    for program in $order; do
        case $program in
        micmon) t=$(cpu "$micmon" report --json "$file"); ours="$ours $t" ;;
        ffmpeg) t=$(cpu ffmpeg -hide_banner -nostats -i "$file" -af ebur128=peak=true -f null -); theirs="$theirs $t" ;;
        floor)
            [ -x "$bench" ] || continue
            t=$(cpu "$bench" --only report-floor --report-file "$file" --report-repeats 1 --json "$folder/floor.json")
            floor="$floor $t" ;;
        esac
        echo "run $run: $program $t s" >&2
    done
done
echo "file: $label"
echo "CPU (user + sys), median of $runs alternating runs:"
m=$(echo "$ours" | median); f=$(echo "$theirs" | median)
echo "  micmon report --json:          $m s  (runs:$ours)"
echo "  ffmpeg -af ebur128=peak=true:  $f s  (runs:$theirs)"
awk -v a="$m" -v b="$f" 'BEGIN { printf "  micmon / ffmpeg: %.2f x (target <= 0.5)\n", a / b }'
if [ -n "$floor" ]; then
    l=$(echo "$floor" | median)
    echo "  floor (libebur128 I + LRA):    $l s  (runs:$floor)"
    awk -v a="$l" -v b="$f" 'BEGIN { printf "  floor / ffmpeg: %.2f x\n", a / b }'
else
    echo "  floor: no micmon-bench at $bench (swift build -c release --product micmon-bench)"
fi
