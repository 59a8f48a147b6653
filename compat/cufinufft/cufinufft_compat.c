/* libcufinufft.so (farfield's cuFINUFFT 2.5 compatibility library) is linked by CMake from the
   Rust static library of compat/cufinufft; this translation unit only gives the target a source. */
int farfield_cufinufft_compat_marker_(void);
int farfield_cufinufft_compat_marker_(void) { return 0; }
