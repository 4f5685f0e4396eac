#!/usr/bin/env bash
# micmon report against ffmpeg's ebur128 filter on the same one-hour file: CPU time (user + sys)
# of each, one run, and the ratio (target: micmon report <= 0.5 x ffmpeg). The file is a
# stereo 48 kHz 16-bit WAV made here with ffmpeg (a tone at changing levels plus noise), kept in
# a scratch folder that is removed at the end.
#
#   Benchmarks/tools/report-vs-ffmpeg.sh [MICMON] [SECONDS] [FILE]
#
# MICMON defaults to the release build (swift build -c release --product micmon), SECONDS to 3600.
# FILE, when given, is measured instead of the synthetic file (SECONDS is then ignored): the
# synthetic one's second channel is stationary white noise, the worst case for the true-peak
# screen (every block's bound is above its running maximum), so real recordings are worth a row.
set -euo pipefail
cd "$(dirname "$0")/../.."
micmon="${1:-.build/release/micmon}"
seconds="${2:-3600}"
[ -x "$micmon" ] || { echo "no micmon at $micmon: swift build -c release --product micmon" >&2; exit 64; }
command -v ffmpeg >/dev/null || { echo "ffmpeg is not installed" >&2; exit 64; }
folder="$(mktemp -d)"
trap 'rm -rf "$folder"' EXIT
if [ -n "${3:-}" ]; then
    file="$3"
else
    file="$folder/hour.wav"
    ffmpeg -hide_banner -loglevel error -f lavfi \
        -i "aevalsrc=exprs='(0.3+0.25*sin(2*PI*t/37))*sin(2*PI*440*t)|0.05*(random(0)*2-1)':s=48000:d=$seconds" \
        -c:a pcm_s16le "$file"
fi
cpu() { # prints user+sys seconds of the command
    /usr/bin/time -f "%U %S" -o "$folder/time" "$@" >/dev/null 2>"$folder/stderr" || { cat "$folder/stderr" >&2; exit 1; }
    awk '{ printf "%.2f", $1 + $2 }' "$folder/time"
}
# Warm the page cache once, so both read the file from memory.
cat "$file" >/dev/null
ours=$(cpu "$micmon" report --json "$file")
theirs=$(cpu ffmpeg -hide_banner -nostats -i "$file" -af ebur128=peak=true -f null -)
if [ -n "${3:-}" ]; then echo "file: $file"; else echo "file: ${seconds} s, 2 ch, 48 kHz, 16-bit WAV"; fi
echo "micmon report --json: ${ours} s CPU"
echo "ffmpeg -af ebur128=peak=true: ${theirs} s CPU"
awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "ratio: %.2f x ffmpeg (target <= 0.5)\n", a / b }'
