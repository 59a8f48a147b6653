/* libfinufft.so (farfield's FINUFFT 2.5 compatibility library) is linked by CMake from the
   Rust static library of compat/finufft; this translation unit only gives the target a source. */
int farfield_finufft_compat_marker_(void);
int farfield_finufft_compat_marker_(void) { return 0; }
