#include <jack/jack.h>
#include <jack/ringbuffer.h>
#include <jack/statistics.h>
