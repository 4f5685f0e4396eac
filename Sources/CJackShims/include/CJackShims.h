#ifndef MICMON_CJACKSHIMS_H
#define MICMON_CJACKSHIMS_H

#include <jack/jack.h>
#include <jack/metadata.h>

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

/// JACK_METADATA_PRETTY_NAME, the metadata key of a port's or client's display name: a C global
/// that Swift 6 cannot read as a constant. Not for the realtime thread (it is never needed there).
const char *micmon_jack_pretty_name_key(void);

#endif
