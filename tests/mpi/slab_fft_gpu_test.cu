// slab_fft_test.cpp on GPU ranks: the distributed FFT and the box <-> slab moves in device
// memory, exchanged through NCCL (one rank alone: local copies), against the host's FFTW.
#define LATTICA_SLAB_FFT_TEST_CUDA 1
#include "slab_fft_test.cpp"
