/// The `--help` texts. Kept here, word for word, so a test can snapshot them.
enum Usage {
    static let version = "micmon 0.1.0"

    static let main = """
    micmon — dual-microphone meter and recorder for JACK

    Usage:
      micmon meter  [-p PORT]... [--json] [--duration S]
      micmon record FILE [-p PORT]... [--format F] [--bits B] [--duration S] [--force] [--json]
      micmon play   FILE [-o PORT]... [--volume V] [--pan P] [--loops N] [--rate R]
      micmon monitor [-p PORT]... [-o PORT]... [--gain DB] [--json] [--duration S]
      micmon latency [--duration S] [--send PORT] [--return PORT | --software-loop] [--json]
      micmon demo   [--record FILE] [--duration S] [--json]
      micmon denoise IN OUT [--block N]
      micmon --help | --version | COMMAND --help

    Commands:
      meter    live peak/RMS meters of two inputs, nothing written
      record   record the inputs to FILE (libsndfile) while metering them;
               with --monitor, also hear them on the outputs
      play     play a file through JACK (volume, pan, loops, varispeed)
      monitor  the inputs on the outputs in the same cycle (no added latency)
      latency  how late and how long each process callback runs, DSP load and
               xruns; with a loop, the round trip measured to a fraction of a frame
      demo     start a private JACK server on the dummy backend with a built-in
               two-mic demo voice, and meter (or --record) it; for machines
               without a sound card
      denoise  the dual-mic noise suppressor on a 2-channel file, offline,
               exactly as --denoise runs it live

    \(common)
    \(exitCodes)
    """

    static let common = """
    Common options:
      -p, --port PORT     source port for the next input (in_1, in_2, ...); repeatable.
                          Exact names or patterns: system:capture_*, 'player:out_?'.
                          Default: the first two physical capture ports.
      -n, --name NAME     JACK client name (default: micmon)
      -s, --server NAME   JACK server name (default: $JACK_DEFAULT_SERVER or "default")
          --duration S    stop after S seconds (a take then holds exactly S × rate frames)
          --json          print one JSON object per meter update instead of bars
          --wait-server   when the server goes away, finalize the take, wait for a
                          server of the same name and go on (record: into take-2.wav,
                          take-3.wav, ...); a lost server is then not an error
          --denoise       dual-mic noise suppression (meter, record, monitor, demo):
                          in_1 is the primary mic near the talker, in_2 the
                          reference a few cm further away. Adds a "clean" meter
                          and the noise reduction in dB; monitoring plays the
                          clean channel. 44.1 or 48 kHz; 5.3 ms of added delay.
      -h, --help          show help;  --version: show the version

    Meters: sample peak with IEC 60268-18 fall-back (20 dB in 1.7 s) and a 2 s
    hold, RMS integrated over 300 ms. dBFS: a full-scale sine reads 0.0 peak and
    -3.01 RMS. Silence reads -160 dBFS. Updates at 20 Hz on a terminal, once a
    second as plain lines when stdout is not a terminal; colour only on a
    terminal and never with NO_COLOR. micmon never reads stdin.
    """

    static let exitCodes = """
    Exit codes:
      0   ended as asked, nothing lost
      64  usage error or bad input (nothing was created)
      69  no JACK server, or the server went away (the take is finalized)
      70  internal error
      74  the file could not be written (finalized up to the fault)
      75  frames were dropped (the summary lists where; silence fills them)
    """

    static let meter = """
    micmon meter — live peak and RMS meters, nothing written

    Usage: micmon meter [-p PORT]... [--json] [--duration S] [-n NAME] [-s SERVER]

    Stops on --duration, SIGINT/SIGTERM, or when the server goes away, and prints
    a summary (per channel: max peak, mean RMS, clips; xruns).

    \(common)
    \(exitCodes)
    """

    static let record = """
    micmon record — record the inputs to a file while metering them

    Usage: micmon record FILE [-p PORT]... [--format F] [--bits B] [--duration S]
                              [--force] [--monitor [-o PORT]... [--gain DB]]
                              [--json] [-n NAME] [-s SERVER]

    Record options:
          --format F      wav | w64 | rf64 | caf | flac. Default: from FILE's
                          extension, else wav. A wav take becomes RF64 on its own
                          before it reaches 4 GB.
          --bits B        16 | 24 | 32 | float (default float; flac: 16 or 24,
                          default 24). The rate is the server's.
          --force         overwrite FILE if it exists
          --monitor       also play the inputs on out_1, out_2 while recording
                          (-o and --gain as in micmon monitor)
          --channels C    with --denoise: raw (the inputs), clean (the clean
                          channel, mono) or all (inputs then clean; default)

    Every frame the server delivers is written. The header is rewritten twice a
    second, so even kill -9 leaves a file that opens, missing at most the last
    half second. A period that cannot be queued is counted as dropped and written
    as silence in its place, so the file keeps its timeline; the summary lists
    each drop and the exit code is 75.
    When the server runs cycles without micmon (an xrun: its frame counter jumps),
    the take goes on with what the graph delivers next, nothing inserted; the
    summary lists these server gaps apart from drops.

    \(common)
    \(exitCodes)
    """

    static let monitor = """
    micmon monitor — hear the inputs on the outputs, with meters for both

    Usage: micmon monitor [-p PORT]... [-o PORT]... [--gain DB] [--json]
                          [--duration S] [-n NAME] [-s SERVER]

    in_1 goes to out_1 and in_2 to out_2 in the same process cycle, so
    monitoring adds no period of latency. At --gain 0 the outputs are the
    inputs, bit for bit.

    Monitor options:
      -o, --output PORT   destination for the next output (out_1, out_2);
                          repeatable, exact names or patterns. Default: the
                          first two physical playback ports.
          --gain DB       output gain, -60 … 24 dB (default 0)

    \(common)
    \(exitCodes)
    """

    static let latency = """
    micmon latency — callback timing, and the true round trip through a loop

    Usage: micmon latency [--duration S] [--send PORT] [--return PORT | --software-loop]
                          [--json] [-n NAME] [-s SERVER]

    Registers out_1 and in_1 and measures for S seconds (default 5), or until
    SIGINT/SIGTERM, then prints a summary either way:
    - every process cycle: how late the callback woke after the cycle start and
      how long it ran; p50/p90/p99/p99.9/max in µs and % of the period, and a
      histogram; micmon's DSP load and the server's (jack_cpu_load); xruns and
      late cycles with their times;
    - with a loop: out_1 emits a periodic broadband signal (a 4096-frame chirp,
      -6 dBFS peak) and in_1's return is cross-correlated with it. The round
      trip in frames (sub-sample) and ms, min/mean/max over the run, polarity,
      the time to lock, JACK's reported port latencies and what they leave
      unaccounted. Round trips up to 2 s are measured; "no signal" when what
      comes back is silence or not the signal.

    Latency options:
          --send PORT     connect out_1 to PORT (an input port, e.g.
                          system:playback_1)
          --return PORT   connect PORT (an output port, e.g. system:capture_1)
                          to in_1. For a cable through an interface, give both.
          --software-loop connect out_1 straight to in_1 (JACK adds a period)
          --duration S    measure for S seconds (default 5)
          --json          print the summary as one JSON object (see the README)
      -n, --name NAME     JACK client name (default: micmon)
      -s, --server NAME   JACK server name (default: $JACK_DEFAULT_SERVER or "default")
          --denoise       dual-mic noise suppression (meter, record, monitor, demo):
                          in_1 is the primary mic near the talker, in_2 the
                          reference a few cm further away. Adds a "clean" meter
                          and the noise reduction in dB; monitoring plays the
                          clean channel. 44.1 or 48 kHz; 5.3 ms of added delay.
      -h, --help          show help;  --version: show the version

    micmon disconnects what it connected when it exits. PORT is an exact name or
    a pattern (its first match). micmon never reads stdin.

    \(exitCodes)
    """

    static let demo = """
    micmon demo — try micmon without a sound card

    Usage: micmon demo [--record FILE [--format F] [--bits B] [--force] [--channels C]]
                       [--denoise] [--duration S] [--json]

    Starts a private JACK server (dummy backend, 48 kHz, 256 frames, its own
    server name, so it never touches yours) and a built-in two-mic demo source:
    a voice-like signal strongest at the primary mic, with noise on both. Then
    it meters the source, or records it with --record. Everything it started is
    stopped when it exits. Needs jackd (Debian: jackd2).

    \(common)
    \(exitCodes)
    """
}
