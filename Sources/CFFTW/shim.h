// FFTW 3 (libfftw3-dev): single precision (fftwf_*) for the noise suppressor, double precision
// (fftw_*) for the delay estimator's correlations.
#include <fftw3.h>
