#ifndef MICMON_CJACKSHIMS_H
#define MICMON_CJACKSHIMS_H

#include <jack/jack.h>
#include <time.h>

/// `jack_client_open` is variadic, which Swift cannot call. This takes the server name
/// (NULL for the default server) and adds `JackServerName` to the options when it is given.
jack_client_t *micmon_jack_client_open(const char *client_name, jack_options_t options,
                                       jack_status_t *status, const char *server_name);

// Weak references: resolved only when the sanitizer runtime is linked (see ARCHITECTURE.md).
extern void __rtsan_realtime_enter(void) __attribute__((weak));
extern void __rtsan_realtime_exit(void) __attribute__((weak));

/// Tells LLVM's RealtimeSanitizer that the calling thread enters (exits) realtime context.
/// No-ops unless the rtsan runtime is linked into the process (the symbols are weak). Inline,
/// so that the process callback pays a test of a weak address, not a call into the shim.
static inline void micmon_rtsan_realtime_enter(void) {
    if (__rtsan_realtime_enter) __rtsan_realtime_enter();
}
static inline void micmon_rtsan_realtime_exit(void) {
    if (__rtsan_realtime_exit) __rtsan_realtime_exit();
}
/// 1 when the RealtimeSanitizer runtime is linked in.
int micmon_rtsan_is_linked(void);

/// Sets flush-to-zero and denormals-are-zero on the calling thread (x86 MXCSR).
/// Call from the JACK thread-init callback so denormals never slow the process callback.
void micmon_enable_flush_to_zero(void);

/// Pins the calling thread to one processor (`sched_setaffinity`, a GNU call Swift cannot
/// reach). Returns 0, or -1 with errno set. For benchmarks; never on the realtime thread.
int micmon_pin_thread_to_processor(int processor);

/// Monotonic time in nanoseconds (CLOCK_MONOTONIC), safe to call on the realtime thread.
unsigned long long micmon_monotonic_nanoseconds(void);

/// CLOCK_MONOTONIC_RAW in microseconds, rounded down: what jack2's `jack_get_time` returns with
/// the server's default (system) clock source (jackd 1.9.21 here; not CLOCK_MONOTONIC, which
/// NTP slews: the two were 98 ms apart after 9 hours). Inline: one call into libc's vDSO
/// wrapper, without jack_get_time's trip through libjack. Safe on the realtime thread.
static inline unsigned long long micmon_monotonic_microseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC_RAW, &now);
    return (unsigned long long)now.tv_sec * 1000000ULL + (unsigned long long)now.tv_nsec / 1000ULL;
}

#endif
