#define _GNU_SOURCE
#include "CJackShims.h"

#include <sched.h>

#include <stddef.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

// Layout facts the Swift side relies on.
_Static_assert(sizeof(jack_nframes_t) == 4, "jack_nframes_t is a 32-bit frame count");
_Static_assert(sizeof(jack_default_audio_sample_t) == sizeof(float), "JACK audio samples are 32-bit floats");

jack_client_t *micmon_jack_client_open(const char *client_name, jack_options_t options,
                                       jack_status_t *status, const char *server_name) {
    if (server_name != NULL) {
        return jack_client_open(client_name, options | JackServerName, status, server_name);
    }
    return jack_client_open(client_name, options, status);
}

int micmon_rtsan_is_linked(void) { return __rtsan_realtime_enter != NULL; }

void micmon_enable_flush_to_zero(void) {
#if defined(__x86_64__) || defined(__i386__)
    _mm_setcsr(_mm_getcsr() | 0x8040); // FTZ (bit 15) | DAZ (bit 6)
#endif
}

unsigned long long micmon_monotonic_nanoseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec;
}

int micmon_pin_thread_to_processor(int processor) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(processor, &set);
    return sched_setaffinity(0, sizeof set, &set);
}
