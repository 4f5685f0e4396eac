#define _GNU_SOURCE
#include "CPlatform.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>
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

// The terminal's settings before key mode, and where they go back. Written before the handlers
// are installed, then only read (the handlers run on whichever thread takes the signal).
static struct termios saved_terminal;
static volatile sig_atomic_t terminal_descriptor = -1;
static volatile sig_atomic_t terminal_in_key_mode = 0;
static struct termios key_terminal;
static const int fatal_signals[] = {SIGQUIT, SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL};

void micmon_platform_terminal_restore(void) {
    if (terminal_in_key_mode && terminal_descriptor >= 0) {
        tcsetattr(terminal_descriptor, TCSAFLUSH, &saved_terminal);
        terminal_in_key_mode = 0;
    }
}

static void restore_then_default(int signal_number) {
    int saved_errno = errno;
    micmon_platform_terminal_restore();
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    sigaction(signal_number, &action, NULL);
    sigset_t unblock;
    sigemptyset(&unblock);
    sigaddset(&unblock, signal_number);
    pthread_sigmask(SIG_UNBLOCK, &unblock, NULL);
    raise(signal_number);
    errno = saved_errno;
}

static void stop_restored(int signal_number) {
    int saved_errno = errno;
    int was_in_key_mode = terminal_in_key_mode;
    micmon_platform_terminal_restore();
    struct sigaction action, previous;
    memset(&action, 0, sizeof action);
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    sigaction(SIGTSTP, &action, &previous);
    sigset_t unblock;
    sigemptyset(&unblock);
    sigaddset(&unblock, SIGTSTP);
    pthread_sigmask(SIG_UNBLOCK, &unblock, NULL);
    raise(SIGTSTP);  // stops here until SIGCONT
    pthread_sigmask(SIG_BLOCK, &unblock, NULL);
    sigaction(SIGTSTP, &previous, NULL);
    if (was_in_key_mode && terminal_descriptor >= 0) {
        tcsetattr(terminal_descriptor, TCSAFLUSH, &key_terminal);
        terminal_in_key_mode = 1;
    }
    (void)signal_number;
    errno = saved_errno;
}

static void restore_at_exit(void) { micmon_platform_terminal_restore(); }

int micmon_platform_terminal_enter_key_mode(int descriptor) {
    if (tcgetattr(descriptor, &saved_terminal) != 0) return -1;
    key_terminal = saved_terminal;
    key_terminal.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
    key_terminal.c_cc[VMIN] = 0;
    key_terminal.c_cc[VTIME] = 0;
    terminal_descriptor = descriptor;
    static int handlers_installed = 0;
    if (!handlers_installed) {
        handlers_installed = 1;
        atexit(restore_at_exit);
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_handler = restore_then_default;
        sigemptyset(&action.sa_mask);
        for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++) {
            sigaction(fatal_signals[i], &action, NULL);
        }
        action.sa_handler = stop_restored;
        sigaction(SIGTSTP, &action, NULL);
    }
    if (tcsetattr(descriptor, TCSAFLUSH, &key_terminal) != 0) return -1;
    terminal_in_key_mode = 1;
    return 0;
}

long long micmon_platform_peer_uid(int socket) {
    struct ucred credentials;
    socklen_t size = sizeof credentials;
    if (getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &credentials, &size) != 0) return -1;
    return (long long)credentials.uid;
}

static int unix_address(const char *path, struct sockaddr_un *address) {
    memset(address, 0, sizeof *address);
    address->sun_family = AF_UNIX;
    size_t length = strlen(path);
    if (length >= sizeof address->sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(address->sun_path, path, length + 1);
    return 0;
}

int micmon_platform_bind_unix(int socket, const char *path) {
    struct sockaddr_un address;
    if (unix_address(path, &address) != 0) return -1;
    return bind(socket, (struct sockaddr *)&address, sizeof address);
}

int micmon_platform_connect_unix(int socket, const char *path) {
    struct sockaddr_un address;
    if (unix_address(path, &address) != 0) return -1;
    return connect(socket, (struct sockaddr *)&address, sizeof address);
}

int micmon_platform_set_thread_name(pthread_t thread, const char *name) {
    return pthread_setname_np(thread, name);
}
