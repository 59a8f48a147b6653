//! Demo section: periodic electrostatics of the JAC DHFR benchmark (23,558 atoms, the shared
//! data's `jac_dhfr`) with smooth PME and spectral Ewald at a relative RMS force accuracy of
//! 1e-5 — energy, time per evaluation, chosen parameters, and the two methods' forces against
//! each other — then the NaCl Madelung constant from a rock-salt crystal against its published
//! value. Without the shared data only the crystal runs. JSON keys under `ewald`.

use super::DemoArgs;
use crate::ewald::{evaluate, rel_rms_force, KJ_PER_MOL, NACL_A, NACL_MADELUNG};
use crate::system;
use crate::CliResult;
use farfield::ewald::{EwaldOpts, Method};
use serde_json::{json, Map, Value};
use std::time::Instant;

/// The JAC DHFR system's folder in the data folder (docs/design.md §11.1).
pub const JAC_DHFR: &str = "jac_dhfr";

/// Requested relative RMS force accuracy of the section.
pub const TOL: f64 = 1e-5;

/// Runs the section, prints its lines and adds `ewald` to the summary.
pub fn section(args: &DemoArgs, summary: &mut Map<String, Value>) -> CliResult<()> {
    let t0 = Instant::now();
    let opts = EwaldOpts { nthreads: args.threads, ..EwaldOpts::default() };
    let mut obj = Map::new();
    println!();
    let jac = super::data_path(JAC_DHFR).filter(|d| d.join("positions.npy").exists());
    if let Some(dir) = &jac {
        let sys = system::read_dir(dir, true)?;
        println!("farfield demo — periodic electrostatics: JAC DHFR ({} atoms, net charge {:+.0} e, cubic box {:.4} nm), tol {TOL:e}",
                 sys.n(), sys.net_charge(), sys.cell.expect("box")[0]);
        let mut runs = Vec::new();
        for (label, method) in [("spme", Method::Spme), ("spectral", Method::Spectral)] {
            let r = evaluate(&sys, method, TOL, &opts, 3)?;
            let p = &r.params;
            println!("{:20} energy {:.4} kJ/mol; {:.4} s per evaluation (real {:.4} s, k-space {:.4} s); xi {:.3}/nm, r_c {:.3} nm, grid {}^3, order {}",
                     format!("{label}:"), r.energy * KJ_PER_MOL, r.time_s, r.real_s, r.kspace_s, p.xi, p.rc, p.grid[0], p.order);
            obj.insert(label.into(), json!({
                "energy_kj_mol": r.energy * KJ_PER_MOL,
                "time_s": r.time_s,
                "real_s": r.real_s,
                "kspace_s": r.kspace_s,
                "xi": p.xi,
                "rc": p.rc,
                "grid": p.grid,
                "order_or_support": p.order,
            }));
            runs.push(r);
        }
        let df = rel_rms_force(&sys.q, &runs[1].field, &runs[0].field);
        let du = (runs[1].energy - runs[0].energy).abs() / runs[0].energy.abs();
        println!("agreement:          SPME vs spectral Ewald: forces {df:.2e} rel. RMS, energies {du:.2e} rel. (each within {TOL:e} of the exact sum, \
                  see `farfield ewald --check`)");
        obj.insert("system".into(), json!("jac_dhfr"));
        obj.insert("n".into(), json!(sys.n()));
        obj.insert("methods_force_rel_diff".into(), json!(df));
        obj.insert("methods_energy_rel_diff".into(), json!(du));
    } else {
        println!("farfield demo — periodic electrostatics ({JAC_DHFR} not found in {}: crystal only)", super::data_dir().display());
    }
    let k = 4;
    let sys = system::nacl(k, NACL_A);
    let r = evaluate(&sys, Method::Spme, 1e-10, &opts, 1)?;
    // U = −M N/2 / d with d = a/2 the nearest-neighbour distance
    let madelung = -r.energy * (0.5 * NACL_A) / (0.5 * sys.n() as f64);
    let err = (madelung - NACL_MADELUNG).abs() / NACL_MADELUNG;
    println!("NaCl crystal:       {} ions, SPME at tol 1e-10: Madelung constant {madelung:.12} (published {NACL_MADELUNG}), rel. error {err:.1e}",
             sys.n());
    obj.insert("nacl_madelung".into(), json!(madelung));
    obj.insert("nacl_madelung_rel_error".into(), json!(err));
    let wall = t0.elapsed().as_secs_f64();
    println!("section:    {wall:.3} s wall");
    obj.insert("tol".into(), json!(TOL));
    obj.insert("wall_s".into(), json!(wall));
    summary.insert("ewald".into(), Value::Object(obj));
    Ok(())
}
