#ifndef MICMON_CJACKSHIMS_H
#define MICMON_CJACKSHIMS_H

#include <jack/jack.h>

/// `jack_client_open` is variadic, which Swift cannot call. This takes the server name
/// (NULL for the default server) and adds `JackServerName` to the options when it is given.
jack_client_t *micmon_jack_client_open(const char *client_name, jack_options_t options,
                                       jack_status_t *status, const char *server_name);

/// Tells LLVM's RealtimeSanitizer that the calling thread enters (exits) realtime context.
/// No-ops unless the rtsan runtime is linked into the process (the symbols are weak).
void micmon_rtsan_realtime_enter(void);
void micmon_rtsan_realtime_exit(void);
/// 1 when the RealtimeSanitizer runtime is linked in.
int micmon_rtsan_is_linked(void);

/// Sets flush-to-zero and denormals-are-zero on the calling thread (x86 MXCSR).
/// Call from the JACK thread-init callback so denormals never slow the process callback.
void micmon_enable_flush_to_zero(void);

/// Monotonic time in nanoseconds (CLOCK_MONOTONIC), safe to call on the realtime thread.
unsigned long long micmon_monotonic_nanoseconds(void);

#endif
