// farfield GPU FMM kernels (CUDA C++), see src/gpu/fmm/. Compiled by NVRTC and, unchanged, by
// the CUDA-on-CPU emulator (see spread.cu for the rules).

#ifndef FF_EMULATION
#define FF_EXTERN_C extern "C"
#define FF_REGISTER(name)
#endif
