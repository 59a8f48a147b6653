//! The launcher of the MPI tests (feature `mpi`, `harness = false`): started without an MPI
//! launcher, a test binary launches itself under `mpirun -np K` for K = 1, 2, 3, 4
//! (`--oversubscribe`, so 4 ranks run on a 2-core machine) and fails if any run fails; under
//! the launcher ([`is_child`]) each rank runs the checks.

use std::process::Command;

/// True in a rank started by [`launch`].
pub fn is_child() -> bool {
    std::env::var_os("FARFIELD_MPI_CHILD").is_some()
}

/// Initialises MPI in a rank and makes a failing rank abort the job: unwinding would reach
/// `MPI_Finalize` and wait there for ranks that wait in a collective for it.
pub fn init() -> mpi::environment::Universe {
    let universe = mpi::initialize().expect("MPI initialises once");
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default_hook(info);
        // SAFETY: MPI is initialised; MPI_Abort does not return.
        unsafe { mpi::ffi::MPI_Abort(mpi::ffi::RSMPI_COMM_WORLD, 101) };
    }));
    universe
}

/// Launches this binary (the test `name`) under `mpirun -np K` for K = 1…4; panics if a run
/// fails or takes more than 900 s.
pub fn launch(name: &str) {
    let exe = std::env::current_exe().expect("test binary path");
    let version = Command::new("mpirun").arg("--version").output();
    let Ok(version) = version else {
        panic!("mpirun not found: the `mpi` feature needs an MPI launcher (scripts/install-deps.sh installs Open MPI)");
    };
    let open_mpi = String::from_utf8_lossy(&version.stdout).contains("Open MPI");
    for np in 1..=4 {
        let mut cmd = Command::new("mpirun");
        cmd.arg("-np").arg(np.to_string());
        if open_mpi {
            cmd.arg("--oversubscribe");
            // Open MPI refuses root without these (containers and CI run as root)
            cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1").env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
        }
        cmd.arg(&exe).env("FARFIELD_MPI_CHILD", "1");
        let t = std::time::Instant::now();
        // a hang (a rank left behind in a collective) fails the test instead of blocking CI
        let mut child = cmd.spawn().expect("mpirun starts");
        let status = loop {
            if let Some(st) = child.try_wait().expect("wait for mpirun") {
                break st;
            }
            if t.elapsed().as_secs() > 900 {
                let _ = child.kill();
                panic!("mpirun -np {np} did not finish in 900 s");
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        };
        eprintln!("{name}: mpirun -np {np}: {status} ({:.1} s)", t.elapsed().as_secs_f64());
        assert!(status.success(), "mpirun -np {np} failed: {status}");
    }
}

/// Runs `f` and returns its result; if it has not returned within `secs` seconds (a rank left
/// waiting in a collective), this rank prints what hung and exits with status 102, which ends
/// the whole `mpirun` job (and so fails the test) instead of leaving it hanging.
#[allow(dead_code)]
pub fn within<T>(secs: u64, what: &str, f: impl FnOnce() -> T) -> T {
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let what_s = what.to_string();
    let watchdog = std::thread::spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(std::time::Duration::from_secs(secs)) {
            eprintln!("{what_s}: not finished within {secs} s on this rank (a rank is left waiting in a collective)");
            std::process::exit(102);
        }
    });
    let r = f();
    let _ = tx.send(());
    watchdog.join().expect("watchdog thread");
    r
}

/// The status of `r` (0 or the error's code) on every rank, in rank order.
#[allow(dead_code)]
pub fn statuses<T>(comm: &farfield::mpi::Comm, r: &Result<T, farfield::Error>) -> Vec<i64> {
    let code = match r {
        Ok(_) => 0,
        Err(e) => e.code() as i64,
    };
    comm.allgather_i64(&[code]).expect("MPI_Allgather of the statuses")
}
