//! `farfield demo`: demonstrations of the library on real data, one function per section.
//!
//! Sections so far:
//! * [`mri`]: MRI-style reconstruction from golden-angle radial k-space samples with the 2D
//!   type-2 (forward) and type-1 (adjoint) NUFFT.
//! * [`poisson`]: the free-space Poisson solvers on the Gaussian test problem at N = 64.
//! * [`ewald`]: periodic electrostatics of JAC DHFR (SPME and spectral Ewald) and the NaCl
//!   Madelung constant.
//! * [`fmm`]: the fast multipole method on a Plummer cluster of 10⁵ charges at tol 10⁻⁶.
//!
//! A section takes the common settings, returns its numbers, prints its lines and adds its
//! keys to the JSON summary. New sections (Poisson, Ewald, FMM, …) go in their own file next
//! to `mri.rs` and get a call in [`run`].

pub mod ewald;
pub mod fmm;
pub mod mri;
pub mod poisson;

use crate::json;
use crate::npy::{self, Image};
use crate::phantom;
use crate::plot;
use crate::CliResult;
use clap::Args;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// Environment variable naming a folder of real input data to use instead of the repository's
/// `data/` (layout: docs/design.md §11.1).
pub const DATA_DIR_ENV: &str = "FARFIELD_DATA_DIR";

/// The MRI slice in the data folder (256×256, docs/design.md §11.1).
pub const MRI_IMAGE: &str = "images/mri_s1045_256.npy";

/// The data folder: `$FARFIELD_DATA_DIR` when set and not empty, else `data/` of the current
/// directory when it exists (the README's commands run from the repository root), else the
/// repository's `data/` this binary was built from.
pub fn data_dir() -> PathBuf {
    if let Some(d) = std::env::var_os(DATA_DIR_ENV).filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    let cwd = PathBuf::from("data");
    if cwd.join(MRI_IMAGE).exists() {
        return cwd;
    }
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../data"))
}

/// `<data folder>/<rel>` ([`data_dir`]).
pub fn data_path(rel: &str) -> Option<PathBuf> {
    Some(data_dir().join(rel))
}

/// Arguments of `farfield demo`.
#[derive(Args, Debug, Clone)]
pub struct DemoArgs {
    /// Image to reconstruct: a 2D real .npy array (float64, or any real dtype), C or Fortran
    /// order, first index = image row, at least 8×8 pixels. Default: the MRI slice
    /// data/images/mri_s1045_256.npy (or under $FARFIELD_DATA_DIR) when that exists, else a 256×256 Shepp–Logan
    /// phantom.
    #[arg(long, value_name = "FILE.npy")]
    pub image: Option<PathBuf>,
    /// Output directory for the PNG and the reconstructions (created if missing).
    #[arg(long, value_name = "DIR", default_value = "farfield-demo")]
    pub out: PathBuf,
    /// Threads for the NUFFTs (0 = all cores).
    #[arg(long, value_name = "K", default_value_t = 0, value_parser = crate::args::whole::<usize>)]
    pub threads: usize,
    /// Print a JSON summary as the last line of stdout.
    #[arg(long)]
    pub json: bool,
    /// NUFFT tolerance.
    #[arg(long, value_name = "TOL", default_value_t = 1e-6)]
    pub tol: f64,
    /// Conjugate-gradient iterations.
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = crate::args::whole::<usize>)]
    pub iters: usize,
    /// Number of radial spokes (default: Nyquist, ⌈(π/2)·N⌉).
    #[arg(long, value_name = "N", value_parser = crate::args::whole::<usize>)]
    pub spokes: Option<usize>,
    /// Use the analytic Shepp–Logan phantom instead of the MRI slice.
    #[arg(long, conflicts_with = "image")]
    pub phantom: bool,
    /// Phantom size N (N×N pixels; implies --phantom). Small sizes make a fast smoke test.
    #[arg(long, value_name = "N", conflicts_with = "image", hide = true, value_parser = crate::args::whole::<usize>)]
    pub size: Option<usize>,
}

/// The image a demo runs on, with a name for the report.
pub struct Source {
    /// Human-readable name (file path or "shepp-logan NxN").
    pub name: String,
    /// The pixels.
    pub image: Image,
}

/// Picks the image: `--image`, else (`--phantom`/`--size`) the phantom, else the MRI slice of
/// the data folder ([`data_path`]) when it exists, else the phantom.
pub fn resolve_source(args: &DemoArgs) -> CliResult<Source> {
    if let Some(p) = &args.image {
        return Ok(Source { name: p.display().to_string(), image: read_image_arg(p)? });
    }
    let want_phantom = args.phantom || args.size.is_some();
    if !want_phantom {
        if let Some(p) = data_path(MRI_IMAGE).filter(|p| p.exists()) {
            return Ok(Source { name: p.display().to_string(), image: npy::read_image(&p)? });
        }
    }
    let n = args.size.unwrap_or(256);
    if n < 4 {
        return Err(format!("--size {n} is too small (need at least 4)"));
    }
    Ok(Source { name: format!("shepp-logan {n}x{n}"), image: phantom::shepp_logan(n) })
}

/// Smallest number of rows and of columns of an `--image`.
pub const MIN_IMAGE_SIDE: usize = 8;

/// What an `--image` file must hold, for the error messages.
const IMAGE_FORMAT: &str = "an image is a 2D .npy array of real pixel values, rows x columns (first index = row), \
                            both at least 8, e.g. data/images/mri_s1045_256.npy (256, 256)";

/// Reads `--image`: a 2D array of at least [`MIN_IMAGE_SIDE`]² pixels. Anything else — a 1-D
/// array, a 3-D one, a particle file (`positions.npy` of shape (N, 3), or its transpose) — is
/// refused with its shape and what an image must look like, instead of being reconstructed as
/// a 3-pixel-wide picture.
pub fn read_image_arg(p: &Path) -> CliResult<Image> {
    let (shape, data) = npy::read_array(p).map_err(|e| format!("--image {e}"))?;
    let shape_s = npy::shape_str(&shape);
    let not_image = |why: &str| {
        let hint = if shape.len() == 2 && (shape[1] == 3 || shape[0] == 3) {
            " (it looks like particle positions: positions.npy of `farfield ewald --input` is an (N, 3) array)"
        } else {
            ""
        };
        format!("--image {}: shape {shape_s} is not an image{why}{hint}; {IMAGE_FORMAT}", p.display())
    };
    if shape.len() != 2 {
        return Err(not_image(&format!(" ({}-D array)", shape.len())));
    }
    if shape[0] < MIN_IMAGE_SIDE || shape[1] < MIN_IMAGE_SIDE {
        return Err(not_image(""));
    }
    npy::image_from_array(shape, data).map_err(|e| format!("--image {}: {e}", p.display()))
}

/// Runs the demo.
pub fn run(args: &DemoArgs) -> CliResult<()> {
    if !(args.tol.is_finite() && args.tol > 0.0) {
        return Err(format!("--tol {} must be positive", args.tol));
    }
    let src = resolve_source(args)?;
    std::fs::create_dir_all(&args.out).map_err(|e| format!("cannot create {}: {e}", args.out.display()))?;
    let progress = crate::progress::visible();
    let mut summary = Map::new();
    summary.insert("image".into(), json!(src.name));
    summary.insert("rows".into(), json!(src.image.rows));
    summary.insert("cols".into(), json!(src.image.cols));
    summary.insert("pixels".into(), json!(src.image.rows * src.image.cols));

    println!("farfield demo — MRI-style radial reconstruction with the 2D NUFFT");
    section_mri(args, &src, progress, &mut summary)?;
    poisson::section(args, &mut summary)?;
    ewald::section(args, &mut summary)?;
    fmm::section(args, &mut summary)?;

    if args.json {
        json::emit(&Value::Object(summary));
    }
    Ok(())
}

/// The MRI section: sampling, adjoint and CG reconstructions, report, PNG and .npy outputs.
fn section_mri(args: &DemoArgs, src: &Source, progress: bool, summary: &mut Map<String, Value>) -> CliResult<()> {
    let im = &src.image;
    let settings = mri::MriSettings {
        tol: args.tol,
        threads: args.threads,
        spokes: args.spokes.unwrap_or(0),
        readout_oversampling: 2,
        cg_iters: args.iters,
        progress,
    };
    let (nx, ny) = (im.cols, im.rows);
    println!("image:      {} ({} rows x {} cols); pixel (row, col) <-> x = col - {}, y = row - {}",
             src.name, ny, nx, nx / 2, ny / 2);
    let r = mri::run(&im.data, nx, ny, &settings)?;
    let m = r.traj.len();
    let c = &r.clock;
    println!("trajectory: golden-angle radial, {} spokes x {} readout points = {} samples; k in [-pi, pi)^2 rad/pixel",
             r.traj.n_spokes(), r.traj.n_readout, m);
    println!("nufft:      f64, tol {:e}, {} threads, fine grid {}x{} (sigma {}), kernel width {}",
             args.tol, r.threads, r.nf[0], r.nf[1], r.upsampfac, r.kernel_width);
    println!("plans:      2 plans {:.4} s, setpts (both) {:.4} s", c.plan_s, c.setpts_s);
    let each = |(k, s): (usize, f64)| if k > 0 { s / k as f64 } else { 0.0 };
    println!("transforms: {} type 2 (A, image -> samples) {:.4} s each, {} type 1 (A^H, samples -> image) {:.4} s each",
             c.type2.0, each(c.type2), c.type1.0, each(c.type1));
    let pts_per_s = (m * c.transforms()) as f64 / c.exec_s();
    println!("NUFFT time: {:.4} s in {} transforms (+ {:.4} s plan/setpts); throughput {:.3e} points/s",
             c.exec_s(), c.transforms(), c.plan_s + c.setpts_s, pts_per_s);
    println!("adjoint:    A^H W y with ramp density compensation: rel l2 error {:.4} after scaling by {:.4} ({:.4} unscaled)",
             r.adjoint_rel_error, r.adjoint_scale, r.adjoint_rel_error_unscaled);
    println!("CG:         {} iterations on A^H W A x = A^H W y: rel l2 error {:.4} (no scaling), residual {:.2e}",
             r.cg_error_history.len(), r.cg_rel_error, r.cg_residual_history.last().copied().unwrap_or(1.0));
    println!("band limit: the samples cover |k| < pi; the image's spectrum outside holds {:.4} of its l2 norm \
              (about the lowest error any reconstruction from them can reach)", r.out_of_disc);
    if !r.cg_error_history.is_empty() {
        let hist: Vec<String> = r.cg_error_history.iter().map(|e| format!("{e:.4}")).collect();
        println!("            error by iteration: {}", hist.join(" "));
    }

    // outputs
    let png = args.out.join("mri_recon.png");
    let panels = plot::MriFigure {
        original: im,
        traj: &r.traj,
        adjoint: &r.adjoint,
        adjoint_scale: r.adjoint_scale,
        adjoint_error: r.adjoint_rel_error,
        cg: &r.cg,
        cg_error: r.cg_rel_error,
        cg_iters: r.cg_error_history.len(),
        show_spokes: 24,
    };
    plot::mri_figure(&png, &panels)?;
    let real_part = |v: &[num_complex::Complex64]| -> Vec<f64> { v.iter().map(|z| z.re).collect() };
    npy::write_array(&args.out.join("mri_cg.npy"), &[ny as u64, nx as u64], &real_part(&r.cg))?;
    npy::write_array(&args.out.join("mri_adjoint.npy"), &[ny as u64, nx as u64],
                     &real_part(&r.adjoint).iter().map(|v| v * r.adjoint_scale).collect::<Vec<_>>())?;
    println!("wrote:      {} (and mri_cg.npy, mri_adjoint.npy: real parts)", png.display());
    println!("section:    {:.3} s wall", r.wall_s);

    summary.insert("spokes".into(), json!(r.traj.n_spokes()));
    summary.insert("readout".into(), json!(r.traj.n_readout));
    summary.insert("samples".into(), json!(m));
    summary.insert("tol".into(), json!(args.tol));
    summary.insert("threads".into(), json!(r.threads));
    summary.insert("nf".into(), json!(r.nf));
    summary.insert("plan_s".into(), json!(c.plan_s));
    summary.insert("setpts_s".into(), json!(c.setpts_s));
    summary.insert("nufft_s".into(), json!(c.exec_s()));
    summary.insert("nufft_transforms".into(), json!(c.transforms()));
    summary.insert("type1_s_each".into(), json!(each(c.type1)));
    summary.insert("type2_s_each".into(), json!(each(c.type2)));
    summary.insert("points_per_s".into(), json!(pts_per_s));
    summary.insert("adjoint_rel_error".into(), json!(r.adjoint_rel_error));
    summary.insert("adjoint_scale".into(), json!(r.adjoint_scale));
    summary.insert("cg_iters".into(), json!(r.cg_error_history.len()));
    summary.insert("cg_residual".into(), json!(r.cg_residual_history.last().copied().unwrap_or(1.0)));
    summary.insert("recon_rel_error".into(), json!(r.cg_rel_error));
    summary.insert("out_of_disc_fraction".into(), json!(r.out_of_disc));
    summary.insert("png".into(), json!(png.display().to_string()));
    summary.insert("wall_s".into(), json!(r.wall_s));
    Ok(())
}
