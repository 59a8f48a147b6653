//! Without a CUDA device (`FARFIELD_DISABLE_CUDA=1` hides any there is), `cufinufft_makeplan`
//! returns `FINUFFT_ERR_CUDA_FAILURE` (15) and leaves the handle NULL, in both precisions and
//! types 1–3,
//! silently unless `opts.debug`; argument errors are still reported as such first. The
//! computations themselves are checked on the CUDA-on-CPU emulator
//! (`gpu-emu/tests/cufinufft_compat.rs`).

use cufinufft::api::*;
use cufinufft::opts::cufinufft_opts;

#[test]
fn makeplan_without_a_device_is_a_cuda_failure() {
    std::env::set_var("FARFIELD_DISABLE_CUDA", "1");
    let nm = [16i64, 8, 4];
    let mut o = std::mem::MaybeUninit::<cufinufft_opts>::uninit();
    let mut o = unsafe {
        cufinufft_default_opts(o.as_mut_ptr());
        o.assume_init()
    };
    unsafe {
        for ty in [1, 2, 3] {
            for dim in 1..=3 {
                let mut p: cufinufft_plan = 0x10 as cufinufft_plan;
                assert_eq!(cufinufft_makeplan(ty, dim, nm.as_ptr(), 1, 2, 1e-6, &mut p, std::ptr::null_mut()), 15);
                assert!(p.is_null());
                let mut pf: cufinufftf_plan = std::ptr::null_mut();
                assert_eq!(cufinufftf_makeplan(ty, dim, nm.as_ptr(), -1, 1, 1e-5, &mut pf, &mut o), 15);
                assert!(pf.is_null());
            }
        }
        // with debug the message goes to stderr; the code is the same
        o.debug = 1;
        let mut p: cufinufft_plan = std::ptr::null_mut();
        assert_eq!(cufinufft_makeplan(1, 2, nm.as_ptr(), 1, 1, 1e-6, &mut p, &mut o), 15);
        // bad arguments are reported before the device is looked for
        assert_eq!(cufinufft_makeplan(1, 0, nm.as_ptr(), 1, 1, 1e-6, &mut p, std::ptr::null_mut()), 12);
        assert_eq!(cufinufft_makeplan(1, 2, nm.as_ptr(), 1, 0, 1e-6, &mut p, std::ptr::null_mut()), 9);
        assert_eq!(cufinufft_makeplan(4, 2, nm.as_ptr(), 1, 1, 1e-6, &mut p, std::ptr::null_mut()), 10);
    }
}
