#define _GNU_SOURCE
#include "CPlatform.h"

#include <errno.h>
#include <sched.h>
#include <semaphore.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

void micmon_platform_enable_flush_to_zero(void) {
#if defined(__x86_64__) || defined(__i386__)
    _mm_setcsr(_mm_getcsr() | 0x8040); // FTZ (bit 15) | DAZ (bit 6)
#endif
}

int micmon_platform_flush_to_zero_is_enabled(void) {
#if defined(__x86_64__) || defined(__i386__)
    return (_mm_getcsr() & 0x8040) == 0x8040;
#else
    return 0;
#endif
}

int micmon_platform_pin_thread_to_processor(int processor) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(processor, &set);
    return sched_setaffinity(0, sizeof set, &set);
}

int micmon_platform_semaphore_wait(sem_t *semaphore, unsigned long long timeout_nanoseconds) {
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    unsigned long long total = (unsigned long long)deadline.tv_nsec + timeout_nanoseconds % 1000000000ULL;
    deadline.tv_sec += (time_t)(timeout_nanoseconds / 1000000000ULL + total / 1000000000ULL);
    deadline.tv_nsec = (long)(total % 1000000000ULL);
    for (;;) {
        if (sem_clockwait(semaphore, CLOCK_MONOTONIC, &deadline) == 0) return 0;
        if (errno != EINTR) return -1;
    }
}
