// libebur128 (libebur128-dev): EBU R128 / ITU-R BS.1770 loudness, loudness range and true peak.
#include <ebur128.h>
