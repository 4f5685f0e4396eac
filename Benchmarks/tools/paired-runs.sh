#!/bin/bash
# Paired A/B runs of micmon builds (or the bare client) on one private dummy server, for changes
# smaller than micmon-bench's run-to-run noise. For each run it prints the per-thread CPU time
# (from /proc/PID/task/*/schedstat, in 0.1 ms, the process thread last and largest) and, for
# micmon, the callback's mean run time from the JSON summary (`execution_mean`, µs).
#
#   Benchmarks/tools/paired-runs.sh SECONDS ROUNDS BUILD... 
#   e.g.  cp .build/release/micmon /tmp/micmon-A   (then change, rebuild)
#         Benchmarks/tools/paired-runs.sh 12 5 /tmp/micmon-A .build/release/micmon
#
# BUILD may be "meter" for jack_meter on one port. Needs jackd2, jackmeter and sndfile-tools
# (sndfile-jackplay plays the source file, SOURCE_WAV, default: a 10 s demo take it records).
# The --json output makes micmon's main thread busier than in micmon-bench (20 lines a second).
# Many short rounds resolve more than a few long ones: 20 rounds of 4 s, compared as the median
# of each round's ratio, told apart builds 3 % apart that 5 rounds of 12 s did not.
set -u
SECONDS_PER_RUN=${1:-12}; ROUNDS=${2:-4}; shift 2
SERVER=paired-$$
WORK=$(mktemp -d)
PLAYER=0
trap '{ [ $PLAYER -gt 0 ] && kill -9 $PLAYER; pkill -TERM -f "jackd -n $SERVER"; wait; } 2>/dev/null; rm -rf "$WORK"' EXIT
export JACK_DEFAULT_SERVER=$SERVER
setpriv --pdeathsig TERM jackd -n "$SERVER" -S -d dummy -r 48000 -p 32 -C 2 -P 2 > "$WORK/jackd.log" 2>&1 &
sleep 1.5
SOURCE=${SOURCE_WAV:-}
if [ -z "$SOURCE" ]; then
    SOURCE=$WORK/source.wav
    first=$1; [ "$first" = meter ] && first=${2:-}
    "$first" demo --record "$SOURCE" --duration 10 > /dev/null 2>&1 || { echo "could not record a source with $first demo"; exit 1; }
fi
cp "$SOURCE" "$WORK/src.wav"
sndfile-jackplay -l 0 "$WORK/src.wav" > "$WORK/play.log" 2>&1 &
PLAYER=$!
sleep 1
for round in $(seq "$ROUNDS"); do
    for build in "$@"; do
        if [ "$build" = meter ]; then
            jack_meter -n jackplay:out_1 > /dev/null 2>&1 &
        else
            rm -f "$WORK/take.wav"
            "$build" record "$WORK/take.wav" -p jackplay:out_1 -p jackplay:out_2 --duration $((SECONDS_PER_RUN + 1)) \
                --bits float --json > "$WORK/out.json" 2> "$WORK/err.txt" &
        fi
        pid=$!
        sleep "$SECONDS_PER_RUN"
        total=0; threads=""
        for task in /proc/$pid/task/*; do
            read -r runtime _ < "$task/schedstat"
            total=$((total + runtime)); threads="$threads $((runtime / 100000))"
        done
        mean=""
        if [ "$build" = meter ]; then
            kill -TERM $pid   # jack_meter started in the background ignores SIGINT
            wait $pid
        else
            wait $pid
            mean=$(tail -1 "$WORK/out.json" | sed -n 's/.*"execution_mean":\([0-9.]*\).*/ execution_mean=\1/p')
        fi
        echo "round $round $(basename "$build"): total_ms=$((total / 1000000)) threads(0.1ms):$threads$mean"
    done
done
