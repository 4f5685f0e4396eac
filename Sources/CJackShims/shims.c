#include "CJackShims.h"

#include <stddef.h>

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

const char *micmon_jack_pretty_name_key(void) { return JACK_METADATA_PRETTY_NAME; }
