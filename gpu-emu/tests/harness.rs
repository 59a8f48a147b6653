//! Self-test of the CUDA-on-CPU emulator: a correct reduction (shared-memory tree, warp
//! shuffles, double atomicAdd) gives the exact sum; the planted bugs (a tree reduction missing
//! its __syncthreads(), a neighbour read with no barrier) give wrong results; shuffles have
//! CUDA's semantics; every kernel the library's host code launches exists.

use farfield::gpu::device::{download_vec, upload_new, Arg, Device};
use farfield_gpu_emu::{has_kernel, set_stagger, EmuDevice};
use std::sync::Mutex;

// the stagger flag is global: tests of this file that set it run one at a time
static LOCK: Mutex<()> = Mutex::new(());

fn values(n: usize) -> Vec<f64> {
    // multiples of 1/8: every partial sum is exact, so the correct result is order-independent
    (0..n).map(|i| ((i * 7919) % 1001) as f64 / 8.0 - 50.0).collect()
}

fn reduce(dev: &EmuDevice, kernel: &str, x: &[f64], block: u32) -> f64 {
    let xb = upload_new(dev, x).unwrap();
    let out = dev.alloc(8).unwrap();
    let nb = x.len().div_ceil(block as usize) as u32;
    dev.launch(kernel, nb, block, block * 8, &[Arg::Buf(&xb), Arg::I32(x.len() as i32), Arg::Buf(&out)]).unwrap();
    download_vec::<_, f64>(dev, &out, 1).unwrap()[0]
}

#[test]
fn correct_reduction_is_exact_and_planted_race_is_caught() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let dev = EmuDevice::default();
    let x = values(20 * 256 - 37);
    let exact: f64 = x.iter().sum();
    for stagger in [false, true] {
        set_stagger(stagger);
        for block in [64u32, 256] {
            assert_eq!(reduce(&dev, "ff_test_reduce_ok", &x, block), exact, "block {block} stagger {stagger}");
        }
    }
    // the planted race: each thread runs its whole loop before the next starts (in thread
    // order, or a pseudo-random one under stagger), so the missing barrier shows
    set_stagger(true);
    let wrong = (0..4).filter(|_| reduce(&dev, "ff_test_reduce_racy", &x, 256) != exact).count();
    set_stagger(false);
    assert!(wrong >= 1, "the harness did not expose the missing __syncthreads in the tree reduction");
}

#[test]
fn missing_barrier_before_neighbour_read_is_caught() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let dev = EmuDevice::default();
    let n = 8 * 128;
    let x = values(n);
    let xb = upload_new(&dev, &x).unwrap();
    let expect: Vec<f64> = (0..n).map(|i| x[i] + x[(i / 128) * 128 + (i % 128 + 1) % 128]).collect();
    let run = |k: &str| -> Vec<f64> {
        let out = dev.alloc(8 * n).unwrap();
        dev.launch(k, 8, 128, 128 * 8, &[Arg::Buf(&xb), Arg::I32(n as i32), Arg::Buf(&out)]).unwrap();
        download_vec::<_, f64>(&dev, &out, n).unwrap()
    };
    set_stagger(true);
    let good = run("ff_test_neighbour_sync");
    let bad = run("ff_test_neighbour_nosync");
    set_stagger(false);
    assert_eq!(good, expect);
    // unwritten shared memory is poisoned (NaN), so an early read cannot pass by accident
    let nbad = bad.iter().zip(&expect).filter(|(a, b)| a.to_bits() != b.to_bits()).count();
    assert!(nbad > 0, "the harness did not expose the missing __syncthreads before the neighbour read");
}

#[test]
fn shuffles_follow_cuda_semantics() {
    let dev = EmuDevice::default();
    let n = 64;
    let x: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let xb = upload_new(&dev, &x).unwrap();
    let out = dev.alloc(8 * n).unwrap();
    dev.launch("ff_test_shuffles", 1, n as u32, 0, &[Arg::Buf(&xb), Arg::Buf(&out)]).unwrap();
    let got = download_vec::<_, f64>(&dev, &out, n).unwrap();
    for i in 0..n {
        let lane = i % 32;
        let xor = (i - lane + (lane ^ 1)) as f64;
        // down by 2 within segments of 4: lanes 0,1 of a segment read lanes 2,3; lanes 2,3 keep theirs
        let down = if lane % 4 + 2 < 4 { (i + 2) as f64 } else { i as f64 };
        assert_eq!(got[i], xor + 1000.0 * down, "thread {i}");
    }
}

#[test]
fn warp_votes_are_per_warp() {
    let dev = EmuDevice::default();
    let n = 96;
    let out = dev.alloc(8 * n).unwrap();
    dev.launch("ff_test_votes", 2, n as u32 / 2, 0, &[Arg::Buf(&out)]).unwrap();
    let got = download_vec::<_, u64>(&dev, &out, n).unwrap();
    for (i, &g) in got.iter().enumerate() {
        // blocks of 48 threads: a full warp (votes once) and a warp of 16 lanes (votes twice)
        let t = i % 48;
        let (warp, lanes) = if t < 32 { (0, 32) } else { (1, 16) };
        let want: u64 = (0..=warp).map(|r| (0..lanes).filter(|&l| l <= 3 * r).map(|l| 1u64 << l).sum::<u64>()).sum();
        let any31 = if lanes == 32 { 1000 } else { 0 };
        assert_eq!(g, want + any31 + 2000, "thread {i}");
    }
}

#[test]
fn every_library_kernel_is_in_the_emulator() {
    let mut names: Vec<String> = [
        "ff_bin_permute", "ff_scan_local", "ff_scan_single", "ff_scan_add", "ff_subprob_count", "ff_subprob_map",
        "ff_entry_count", "ff_entry_fill", "ff_rows_sort",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for t in ["f32", "f64"] {
        for k in [
            "fold", "bin_count", "zero_vecs", "csr_spread", "csr_interp", "group_spread", "group_interp", "box_map",
            "real_to_complex", "complex_real",
        ] {
            names.push(format!("ff_{k}_{t}"));
        }
        for d in 1..=3 {
            for k in ["gm_spread", "gm_interp", "sm_spread", "sm_interp", "pt_weights"] {
                names.push(format!("ff_{k}_{d}d_{t}"));
            }
        }
    }
    for t in ["f32", "f64"] {
        names.push(format!("ff_deconv_t1_{t}"));
        names.push(format!("ff_deconv_t2_{t}"));
        names.push(format!("ff_cmul_{t}"));
        // the type-3 set-up
        for k in ["bounds", "rescale", "prephase", "deconv"] {
            names.push(format!("ff_t3_{k}_{t}"));
        }
    }
    assert_eq!(names.len(), 73);
    // FMM operators (kernels/fmm_ops.cu)
    for k in [
        "p2m", "m2m", "l2l", "l2p", "p2p_lists", "p2p", "bg_partial", "bg_apply", "fin_reduce", "fin_range", "fin_energy", "fin_scatter",
        "rank", "excl",
    ] {
        names.push(format!("ff_fmm_{k}"));
    }
    // FMM M2L (fmm_m2l.cu)
    for k in ["group", "rows", "plain", "sym", "reduce", "lattice_rows"] {
        names.push(format!("ff_fmm_m2l_{k}"));
    }
    // Ewald real space (ewald_real.cu)
    for k in ["wrap", "bucket", "cell_order", "gather", "cell_bounds", "finish", "scatter"] {
        names.push(format!("ff_ewr_{k}"));
    }
    // the pair kernel: f64 or f32 pair functions, with or without the virial
    for k in ["f64", "f64_virial", "f32", "f32_virial"] {
        names.push(format!("ff_ewr_pairs_{k}"));
    }
    // Ewald k-space (ewald_kspace.cu)
    for t in ["f32", "f64"] {
        for k in ["prep", "scale", "spme_gather", "spectral_out"] {
            names.push(format!("ff_ewald_{k}_{t}"));
        }
    }
    for k in ["charge_sums", "sum_partials", "self_bg"] {
        names.push(format!("ff_ewald_{k}"));
    }
    // the SPME gather per order
    for t in ["f32", "f64"] {
        for p in farfield::gpu::ewald::kspace::SPECIALISED_ORDERS {
            names.push(format!("ff_ewald_spme_gather_{t}_p{p}"));
        }
    }
    // the width-specialised kernels (each module its own NVRTC program on CUDA)
    for m in farfield::gpu::WidthModule::all() {
        names.extend(m.kernels());
    }
    for n in &names {
        assert!(has_kernel(n), "{n} missing");
    }
    // the FMM tree (fmm_tree.cu)
    let fmm_tree = [
        "ff_fmmt_check_bounds", "ff_fmmt_sample", "ff_fmmt_keys", "ff_fmmt_key_orand", "ff_fmmt_rs_count",
        "ff_fmmt_rs_scatter", "ff_fmmt_rs_tile", "ff_fmmt_scan_local", "ff_fmmt_scan_single", "ff_fmmt_scan_add",
        "ff_fmmt_run_flags", "ff_fmmt_run_gather", "ff_fmmt_occ_chunks", "ff_fmmt_occ_combine", "ff_fmmt_leaf_flags",
        "ff_fmmt_leaf_fill", "ff_fmmt_level_flags", "ff_fmmt_level_fill", "ff_fmmt_particles",
    ];
    for n in fmm_tree {
        assert!(has_kernel(n), "{n} missing");
    }
    // the library kernels plus the six self-test kernels, nothing else
    assert_eq!(farfield_gpu_emu::kernel_count(), names.len() + fmm_tree.len() + 6);
}

/// `EmuDevice::defer_forks`: a forked handle's work waits until the host reads from that handle
/// or another handle waits on one of its marks; the parent's own reads do not run it.
#[test]
fn deferred_fork_runs_when_waited_for() {
    let dev = EmuDevice { defer_forks: true, ..EmuDevice::default() };
    let fork = dev.fork().unwrap();
    let mut a = dev.alloc(16).unwrap();
    let mut b = dev.alloc(16).unwrap();
    fork.upload(&mut a, &7u64.to_ne_bytes()).unwrap();
    fork.copy(&mut b, 8, &a, 0, 8).unwrap();
    assert_eq!(download_vec::<_, u64>(&dev, &b, 2).unwrap(), [0, 0], "the parent does not wait for the fork");
    dev.wait(&fork.mark().unwrap()).unwrap();
    assert_eq!(download_vec::<_, u64>(&dev, &b, 2).unwrap(), [0, 7], "a wait on the fork's mark runs its queue");
    fork.zero(&mut b).unwrap();
    assert_eq!(download_vec::<_, u64>(&fork, &b, 2).unwrap(), [0, 0], "a download from the fork runs its queue");
    // without defer_forks a fork runs its work at once
    let plain = EmuDevice::default().fork().unwrap();
    plain.upload(&mut a, &9u64.to_ne_bytes()).unwrap();
    assert_eq!(download_vec::<_, u64>(&dev, &a, 1).unwrap(), [9]);
}
