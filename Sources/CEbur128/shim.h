// libebur128 (libebur128-dev): EBU R128 / ITU-R BS.1770 loudness, loudness range and true peak.
#include <ebur128.h>

#include <math.h>

// libm's sine and cosine for Loudness, which imports no Glibc: the true-peak screen rebuilds
// libebur128's interpolator coefficients with the functions the library itself uses.
static inline double micmon_ebur128_sin(double x) { return sin(x); }
static inline double micmon_ebur128_cos(double x) { return cos(x); }

// libm's exponential for Loudness: the short-term screen turns libebur128's momentary loudness
// back into the mean energy it was computed from.
static inline double micmon_ebur128_exp(double x) { return exp(x); }

// libebur128's own conversion of a mean energy to loudness (its `ebur128_energy_to_loudness`,
// which it does not export), for readings Loudness derives from energies the library reported.
static inline double micmon_ebur128_energy_to_loudness(double energy) {
    return 10 * (log(energy) / log(10.0)) - 0.691;
}
