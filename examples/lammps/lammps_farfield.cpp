// LAMMPS on farfield's k-space: the long-range part of the Coulomb interaction of a LAMMPS run
// computed by farfield (SPME, k-space-only plan), the rest by LAMMPS.
//
// Debian's LAMMPS (2022-01-06) has no plugin loader, so this program drives LAMMPS through its
// library interface (library.h):
//   * LAMMPS keeps its real-space Coulomb term and its special-bond corrections in its own pair
//     style (lj/charmm/coul/long, lj/cut/coul/long), told the Ewald splitting parameter by
//     `kspace_style ewald ... ; kspace_modify gewald <xi> compute no`: it computes no k-space;
//   * `fix ext all external pf/callback 1 1` calls back every step: farfield's plan with
//     opts.terms = FARFIELD_EWALD_TERMS_KSPACE (k-space sum, self term, background) and
//     opts.rc = the pair style's Coulomb cutoff (so xi and the mesh are chosen for it from tol)
//     gives the fields, energy and virial, which become forces q_i E_i, energy and virial in
//     LAMMPS's units (times force->qqrd2e; the library works without a Coulomb constant).
//     No exclusions are given to farfield: LAMMPS's coul/long pair styles subtract the whole
//     (1 - factor_coul) q_i q_j / r of special pairs themselves.
//
// For each system (the peptide of lammps-examples, an SPC/E water box) it runs three copies of
// the same input from the same state: the reference `kspace_style ewald 1e-8`, farfield at
// `tol`, and LAMMPS's `kspace_style pppm 1e-5`, and reports the force and energy error at step
// 0 against the reference, the largest potential-energy difference over the steps, the largest
// position deviation after `steps` steps, and the time per step of farfield and pppm.
//
// Build (with an installed farfield and Debian's liblammps-dev):
//   cmake -S examples -B build-examples -DCMAKE_PREFIX_PATH=<farfield prefix>
//   cmake --build build-examples --target lammps_farfield
// Run:
//   build-examples/lammps_farfield peptide /usr/share/lammps/examples [steps=100] [tol=1e-5] [threads=1]
//   build-examples/lammps_farfield water   /usr/share/lammps/examples
// Exit status 0 when the farfield run agrees with the reference within the accuracy asked
// (RMS force error at step 0 <= tol times the reference's RMS Coulomb force, trajectory and
// energies within the bounds stated at the end), 1 otherwise; 2 on a setup error.
#include <farfield.h>
#include <library.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

struct System {
    std::string name, setup, data, after, fixes;
    double coul_cut;
};

// The inputs: the peptide as in LAMMPS's peptide example, in.peptide (CHARMM force field,
// SHAKE, NVT), and the SPC/E box of LAMMPS's HEAT example (rigid water by SHAKE, NVT), each with
// a 10 Angstrom Coulomb cutoff and `pair_modify table 0` (LAMMPS's default 12-bit Coulomb table
// has errors of its own, different for each run's xi). The k-space line is inserted before
// read_data; farfield's fix before the integrator and SHAKE (`fixes`), so that SHAKE's
// constraint forces see the k-space forces.
System make_system(const std::string &which, const std::string &ex) {
    if (which == "peptide")
        return {"peptide",
                "units real\natom_style full\npair_style lj/charmm/coul/long 8.0 10.0 10.0\n"
                "bond_style harmonic\nangle_style charmm\ndihedral_style charmm\nimproper_style harmonic\n",
                ex + "/peptide/data.peptide",
                "pair_modify table 0\nneighbor 2.0 bin\nneigh_modify delay 0 every 1 check yes\ntimestep 2.0\n",
                "fix 1 all nvt temp 275.0 275.0 100.0 tchain 1\n"
                "fix 2 all shake 0.0001 10 0 b 4 6 8 10 12 14 18 a 31\n",
                10.0};
    return {"water",
            "units real\natom_style full\npair_style lj/cut/coul/long 10.0 10.0\nbond_style harmonic\nangle_style harmonic\n",
            ex + "/HEAT/data.spce",
            "pair_coeff 2 2 0.15535 3.166\npair_coeff 1 2 0 0\npair_coeff 1 1 0 0\n"
            "bond_coeff 1 1000.0 1.0\nangle_coeff 1 100.0 109.47\n"
            "pair_modify table 0\nneighbor 2.0 bin\nneigh_modify delay 0 every 1 check yes\ntimestep 2.0\n"
            "velocity all create 300.0 4928459 dist gaussian\n",
            "fix 1 all nvt temp 300.0 300.0 100.0 tchain 1\nfix 2 all shake 0.0001 10 0 b 1 a 1\n",
            10.0};
}

// The state of farfield's k-space inside the callback.
struct Kspace {
    void *lmp = nullptr;
    farfield_ewald_plan plan = nullptr;
    double qqrd2e = 0.0;
    std::vector<double> xyz, field;
    double seconds = 0.0;
    int calls = 0;
    int status = 0;
};

double box_of(void *lmp, double cell[9]) {
    const double *lo = static_cast<double *>(lammps_extract_global(lmp, "boxlo"));
    const double *hi = static_cast<double *>(lammps_extract_global(lmp, "boxhi"));
    const double xy = *static_cast<double *>(lammps_extract_global(lmp, "xy"));
    const double xz = *static_cast<double *>(lammps_extract_global(lmp, "xz"));
    const double yz = *static_cast<double *>(lammps_extract_global(lmp, "yz"));
    // rows a, b, c of LAMMPS's (lower-triangular) cell
    const double c[9] = {hi[0] - lo[0], 0, 0, xy, hi[1] - lo[1], 0, xz, yz, hi[2] - lo[2]};
    std::copy(c, c + 9, cell);
    return c[0] * c[4] * c[8];
}

// fix external callback: farfield's k-space forces, energy and virial for the nlocal atoms.
void kspace_callback(void *ptr, int64_t, int nlocal, int *, double **x, double **fext) {
    auto *k = static_cast<Kspace *>(ptr);
    auto t0 = std::chrono::steady_clock::now();
    const double *q = static_cast<double *>(lammps_extract_atom(k->lmp, "q"));
    k->qqrd2e = *static_cast<double *>(lammps_extract_global(k->lmp, "qqrd2e"));  // set by LAMMPS's init
    k->xyz.resize(3 * static_cast<size_t>(nlocal));
    k->field.resize(3 * static_cast<size_t>(nlocal));
    for (int i = 0; i < nlocal; i++)
        for (int d = 0; d < 3; d++) k->xyz[3 * i + d] = x[i][d];
    double cell[9], u = 0.0, w[9];
    box_of(k->lmp, cell);
    int s = farfield_ewald_set_box(k->plan, cell);
    if (s == FARFIELD_OK) s = farfield_ewald_execute(k->plan, nlocal, k->xyz.data(), q, nullptr, k->field.data(), &u, w);
    if (s != FARFIELD_OK) {
        std::fprintf(stderr, "farfield: %s\n", farfield_last_error_message());
        k->status = s;
        return;
    }
    for (int i = 0; i < nlocal; i++)
        for (int d = 0; d < 3; d++) fext[i][d] = k->qqrd2e * q[i] * k->field[3 * i + d];
    lammps_fix_external_set_energy_global(k->lmp, "ext", k->qqrd2e * u);
    // LAMMPS's order xx, yy, zz, xy, xz, yz; farfield's W = sum r_ij (x) F_ij is LAMMPS's virial
    double v[6] = {w[0], w[4], w[8], w[1], w[2], w[5]};
    for (double &c : v) c *= k->qqrd2e;
    lammps_fix_external_set_virial_global(k->lmp, "ext", v);
    k->seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    k->calls++;
}

struct Run {
    std::vector<double> f0, x_end, pe;  // forces at step 0 (by atom ID), positions at the end, pe per step
    std::vector<double> x0, q;          // positions and charges at step 0 (by atom ID)
    double qqrd2e = 0.0, cell[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    double ms_per_step = 0.0, kspace_ms = 0.0, xi = 0.0, len[3] = {0, 0, 0};
    std::vector<int64_t> grid{0, 0, 0};
    int natoms = 0;
};

// mode 0: reference ewald 1e-8; 1: farfield at tol; 2: pppm 1e-5; 3: the reference without
// charges (step 0 only: the Coulomb forces are the reference's minus these).
Run run(const System &sys, int mode, int steps, double tol, int threads) {
    // LAMMPS's own output only with FARFIELD_LAMMPS_SCREEN set
    const char *argv[] = {"lammps_farfield", "-log", "none", "-nocite", "-screen", "none"};
    void *lmp = lammps_open_no_mpi(std::getenv("FARFIELD_LAMMPS_SCREEN") ? 4 : 6, const_cast<char **>(argv), nullptr);
    Run r;
    Kspace k;
    k.lmp = lmp;
    std::string kspace = mode == 0 ? "kspace_style ewald 1e-8\n" : mode == 2 ? "kspace_style pppm 1e-5\n" : "kspace_style ewald 1e-5\n";
    lammps_commands_string(lmp, (sys.setup + kspace + "read_data " + sys.data + "\n" + sys.after).c_str());
    if (mode == 3) {
        lammps_command(lmp, "set group all charge 0.0");
        lammps_command(lmp, "kspace_modify gewald 0.3");  // any value: there are no charges
        steps = 0;
    }
    r.natoms = static_cast<int>(lammps_get_natoms(lmp));
    box_of(lmp, r.cell);
    r.len[0] = r.cell[0], r.len[1] = r.cell[4], r.len[2] = r.cell[8];

    if (mode == 1) {
        // farfield's k-space-only plan for LAMMPS's Coulomb cutoff; LAMMPS takes its xi
        double cell[9];
        box_of(lmp, cell);
        farfield_ewald_opts o;
        farfield_ewald_default_opts(&o, sizeof o);
        o.nthreads = threads;
        o.terms = FARFIELD_EWALD_TERMS_KSPACE;
        o.rc = sys.coul_cut;
        if (farfield_ewald_makeplan(FARFIELD_EWALD_SPME, cell, r.natoms, tol, &k.plan, &o) != FARFIELD_OK) {
            std::fprintf(stderr, "farfield makeplan: %s\n", farfield_last_error_message());
            std::exit(2);
        }
        farfield_ewald_params p;
        p.struct_size = sizeof p;
        farfield_ewald_get_params(k.plan, &p);
        r.xi = p.xi;
        r.grid.assign(p.grid, p.grid + 3);
        char cmd[256];
        std::snprintf(cmd, sizeof cmd, "kspace_modify gewald %.17g compute no", p.xi);
        lammps_command(lmp, cmd);
        lammps_command(lmp, "fix ext all external pf/callback 1 1");
        lammps_command(lmp, "fix_modify ext energy yes virial yes");
        lammps_set_fix_external_callback(lmp, "ext", kspace_callback, &k);
    }
    lammps_commands_string(lmp, sys.fixes.c_str());
    lammps_command(lmp, "thermo_style custom step pe");
    lammps_command(lmp, "run 0");
    r.f0.resize(3 * static_cast<size_t>(r.natoms));
    lammps_gather_atoms(lmp, const_cast<char *>("f"), 1, 3, r.f0.data());
    r.x0.resize(3 * static_cast<size_t>(r.natoms));
    r.q.resize(static_cast<size_t>(r.natoms));
    lammps_gather_atoms(lmp, const_cast<char *>("x"), 1, 3, r.x0.data());
    lammps_gather_atoms(lmp, const_cast<char *>("q"), 1, 1, r.q.data());
    r.qqrd2e = *static_cast<double *>(lammps_extract_global(lmp, "qqrd2e"));
    r.pe.push_back(lammps_get_thermo(lmp, "pe"));
    for (int s = 0; s < steps; s++) {
        lammps_command(lmp, "run 1 pre no post no");
        r.pe.push_back(lammps_get_thermo(lmp, "pe"));
    }
    r.x_end.resize(3 * static_cast<size_t>(r.natoms));
    lammps_gather_atoms(lmp, const_cast<char *>("x"), 1, 3, r.x_end.data());
    if (mode == 1 || mode == 2) {  // the time per step, of a continued run
        k.seconds = 0.0;
        k.calls = 0;
        auto t0 = std::chrono::steady_clock::now();
        lammps_command(lmp, ("run " + std::to_string(steps) + " pre no post no").c_str());
        r.ms_per_step = 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / steps;
        r.kspace_ms = k.calls ? 1e3 * k.seconds / k.calls : 0.0;
    }
    if (lammps_has_error(lmp)) {
        char msg[512];
        lammps_get_last_error_message(lmp, msg, sizeof msg);
        std::fprintf(stderr, "LAMMPS: %s\n", msg);
        std::exit(2);
    }
    if (k.status != 0) std::exit(2);
    lammps_close(lmp);
    farfield_ewald_destroy(k.plan);
    return r;
}

double rms(const std::vector<double> &a);

// RMS of the Coulomb forces of all pairs (no exclusions) at step 0, by farfield's SPME at
// tol 1e-9, in LAMMPS's units.
double all_pairs_rms_force(const Run &r) {
    farfield_ewald_plan p = nullptr;
    std::vector<double> e(r.x0.size());
    if (farfield_ewald_makeplan(FARFIELD_EWALD_SPME, r.cell, r.natoms, 1e-9, &p, nullptr) != FARFIELD_OK ||
        farfield_ewald_execute(p, r.natoms, r.x0.data(), r.q.data(), nullptr, e.data(), nullptr, nullptr) != FARFIELD_OK) {
        std::fprintf(stderr, "farfield: %s\n", farfield_last_error_message());
        std::exit(2);
    }
    farfield_ewald_destroy(p);
    for (size_t k = 0; k < e.size(); k++) e[k] *= r.qqrd2e * r.q[k / 3];
    return rms(e);
}

double rms(const std::vector<double> &a) {
    double s = 0.0;
    for (double v : a) s += v * v;
    return std::sqrt(s / a.size());
}

double rms_diff(const std::vector<double> &a, const std::vector<double> &b) {
    double s = 0.0;
    for (size_t i = 0; i < a.size(); i++) s += (a[i] - b[i]) * (a[i] - b[i]);
    return std::sqrt(s / a.size());
}

// largest distance between the same atom in two runs (minimum image in the orthorhombic box)
double max_deviation(const std::vector<double> &a, const std::vector<double> &b, const double len[3]) {
    double m = 0.0;
    for (size_t i = 0; i < a.size() / 3; i++) {
        double r2 = 0.0;
        for (int d = 0; d < 3; d++) {
            double v = a[3 * i + d] - b[3 * i + d];
            v -= len[d] * std::round(v / len[d]);
            r2 += v * v;
        }
        m = std::max(m, std::sqrt(r2));
    }
    return m;
}

double max_pe_diff(const std::vector<double> &a, const std::vector<double> &b) {
    double m = 0.0;
    for (size_t i = 0; i < a.size(); i++) m = std::max(m, std::fabs(a[i] - b[i]));
    return m;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s peptide|water <lammps examples dir> [steps=100] [tol=1e-5] [threads=1]\n", argv[0]);
        return 2;
    }
    const std::string which = argv[1], ex = argv[2];
    const int steps = argc > 3 ? std::atoi(argv[3]) : 100;
    const double tol = argc > 4 ? std::atof(argv[4]) : 1e-5;
    const int threads = argc > 5 ? std::atoi(argv[5]) : 1;
    if ((which != "peptide" && which != "water") || steps < 1 || !(tol > 0 && tol < 1) || threads < 0) {
        std::fprintf(stderr, "bad arguments (system peptide or water, steps >= 1, 0 < tol < 1, threads >= 0)\n");
        return 2;
    }
    const System sys = make_system(which, ex);
    const Run ref = run(sys, 0, steps, tol, threads);
    const Run ff = run(sys, 1, steps, tol, threads);
    const Run pm = run(sys, 2, steps, tol, threads);
    const Run q0 = run(sys, 3, steps, tol, threads);

    // the scales of the force errors: the RMS Coulomb force of the reference (its forces minus
    // those of the same input without charges: special pairs excluded or scaled), and the RMS
    // Coulomb force of all pairs (no exclusions), the scale of farfield's tol
    const double fc_rms = rms_diff(ref.f0, q0.f0);
    const double fa_rms = all_pairs_rms_force(ref);
    const double ef = rms_diff(ff.f0, ref.f0), ep = rms_diff(pm.f0, ref.f0);
    const double *len = ref.len;
    const double dx_ff = max_deviation(ff.x_end, ref.x_end, len), dx_pm = max_deviation(pm.x_end, ref.x_end, len);
    const double de_ff = max_pe_diff(ff.pe, ref.pe), de_pm = max_pe_diff(pm.pe, ref.pe);
    std::printf("%s: %d atoms, %d steps of 2 fs, farfield SPME k-space at tol %.0e (xi %.6f 1/A, grid %lld x %lld x %lld, "
                "Coulomb cutoff %.1f A), %d thread(s)\n",
                sys.name.c_str(), ref.natoms, steps, tol, ff.xi, (long long)ff.grid[0], (long long)ff.grid[1],
                (long long)ff.grid[2], sys.coul_cut, threads);
    std::printf("  reference: LAMMPS kspace_style ewald 1e-8; pe(0) %.6f kcal/mol; RMS Coulomb force %.4f kcal/mol/A with the\n"
                "  special pairs excluded as the force field does (F_ff), %.4f kcal/mol/A of all pairs (F_all, the scale of tol)\n",
                ref.pe[0], fc_rms, fa_rms);
    std::printf("  %-17s %12s %10s %10s %12s %12s %9s\n", "k-space", "RMS dF", "/ F_all", "/ F_ff", "max |dPE|", "max |dx|", "ms/step");
    std::printf("  %-17s %12.3e %10.2e %10.2e %12.3e %12.3e %9.3f  (farfield's callback %.3f ms)\n", "farfield SPME", ef, ef / fa_rms,
                ef / fc_rms, de_ff, dx_ff, ff.ms_per_step, ff.kspace_ms);
    std::printf("  %-17s %12.3e %10.2e %10.2e %12.3e %12.3e %9.3f\n", "LAMMPS pppm 1e-5", ep, ep / fa_rms, ep / fc_rms, de_pm, dx_pm,
                pm.ms_per_step);
    std::printf("  (RMS dF at step 0 in kcal/mol/A; max |dPE| over the steps in kcal/mol; max |dx| after the last step in A)\n");
    // Acceptance: the force error at step 0 within tol of the RMS force; the potential energy
    // within tol of |pe| at every step (the energy error of molecular systems is below the
    // force error, the contract of farfield_ewald_makeplan); the trajectories together to
    // 1e-2 A after the steps (a deviation from force errors of order tol grows exponentially,
    // by ~e per 100 fs in liquids: 1e-5 relative force errors stay well below 1e-2 A in 200 fs).
    bool ok = ef <= tol * fa_rms && de_ff <= tol * std::fabs(ref.pe[0]) && dx_ff <= 1e-2;
    std::printf("%s: %s\n", sys.name.c_str(), ok ? "farfield agrees with the reference" : "FAILED");
    return ok ? 0 : 1;
}
