#ifndef MICMON_CPLATFORM_H
#define MICMON_CPLATFORM_H

// What the Platform module needs from C that Swift cannot express: the x86 MXCSR, GNU affinity
// calls, and clock reads cheap enough to inline into the realtime glue.

#include <pthread.h>
#include <semaphore.h>
#include <time.h>

/// Sets flush-to-zero and denormals-are-zero on the calling thread (x86 MXCSR; elsewhere a
/// no-op). Called from JACK's thread-init callback, so denormals never slow the process callback.
void micmon_platform_enable_flush_to_zero(void);

/// Whether flush-to-zero is set on the calling thread (1) or not (0).
int micmon_platform_flush_to_zero_is_enabled(void);

/// Pins the calling thread to one processor (`sched_setaffinity`, a GNU call Swift cannot
/// reach). Returns 0, or -1 with errno set. For benchmarks; never on the realtime thread.
int micmon_platform_pin_thread_to_processor(int processor);

/// CLOCK_MONOTONIC in nanoseconds. Safe on the realtime thread (vDSO).
static inline unsigned long long micmon_platform_monotonic_nanoseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (unsigned long long)now.tv_sec * 1000000000ULL + (unsigned long long)now.tv_nsec;
}

/// CLOCK_MONOTONIC_RAW in microseconds, rounded down: jack2's `jack_get_time` with the server's
/// default (system) clock source. Safe on the realtime thread (vDSO).
static inline unsigned long long micmon_platform_monotonic_raw_microseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC_RAW, &now);
    return (unsigned long long)now.tv_sec * 1000000ULL + (unsigned long long)now.tv_nsec / 1000ULL;
}

/// Waits on `semaphore` until it is posted (returns 0) or `timeout_nanoseconds` of CLOCK_MONOTONIC
/// pass (returns -1, errno ETIMEDOUT); resumes after signals. `sem_clockwait`, a GNU call: a
/// wall-clock step never lengthens or shortens the wait.
int micmon_platform_semaphore_wait(sem_t *semaphore, unsigned long long timeout_nanoseconds);

/// Names a thread (at most 15 bytes and the NUL; the kernel refuses longer): its comm in
/// /proc/PID/task/TID/comm. 0 on success, an errno value otherwise.
int micmon_platform_set_thread_name(pthread_t thread, const char *name);

/// Puts the terminal on `descriptor` into key mode (no line editing, no echo; signals from the
/// keyboard stay on) after saving its settings, and makes sure they come back on every way out:
/// `micmon_platform_terminal_restore`, exit (atexit), and the signals that end or stop the process
/// (SIGQUIT, SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL: restored, then the default action;
/// SIGTSTP: restored while stopped, key mode again on SIGCONT). Returns 0, or -1 with errno set.
int micmon_platform_terminal_enter_key_mode(int descriptor);

/// Gives the terminal its saved settings back (async-signal-safe; a no-op when not in key mode).
void micmon_platform_terminal_restore(void);

/// The uid of the process at the other end of a connected unix socket (SO_PEERCRED), or -1
/// with errno set.
long long micmon_platform_peer_uid(int socket);

/// Binds `socket` to the unix socket path `path` (which must fit sun_path). Returns 0, or -1
/// with errno set (ENAMETOOLONG for a path that does not fit).
int micmon_platform_bind_unix(int socket, const char *path);

/// Connects `socket` to the unix socket at `path`. Returns 0, or -1 with errno set.
int micmon_platform_connect_unix(int socket, const char *path);

#endif
