#include <jack/jack.h>
#include <jack/ringbuffer.h>
#include <jack/statistics.h>
#include <jack/metadata.h>
