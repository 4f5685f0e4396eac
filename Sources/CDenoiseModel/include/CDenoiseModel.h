// The noise suppressor's learned gain estimator: its weights, generated from training by
// training/export.py into denoise_model.c (a `const float` array; docs/noise-suppression.md has
// the command and the hash of the data). Read-only data: any thread.
#ifndef MICMON_CDENOISEMODEL_H
#define MICMON_CDENOISEMODEL_H

#include <stddef.h>

/// The weights for a latency mode (0: standard, 128-sample hops; 1: low, 64-sample hops), and
/// their count in `*count`; NULL and 0 when no model is built in for that mode. The layout
/// (a header of dimensions, then the tensors) is described in NoiseSuppressorModel.swift.
const float *micmon_denoise_model(int mode, size_t *count);

#endif
