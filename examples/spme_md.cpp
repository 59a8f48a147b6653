// Example: smooth particle-mesh Ewald (SPME) driving a tiny molecular-dynamics loop in C++.
//
// 64 ions (+1/-1, a perturbed rock-salt arrangement) in a periodic cubic box, unit masses,
// Coulomb constant 1, velocity Verlet for 20 steps with farfield_ewald forces F_i = q_i E_i.
// Checks: the step-0 forces against the classic Ewald sum (FARFIELD_EWALD_DIRECT at a tight
// tolerance), and that the total energy is conserved over the run. Fails otherwise.
// (Only Coulomb forces: a real MD code adds its short-range terms; 20 short steps are fine.)
// `tol` is the relative RMS force error the plan aims at, calibrated on condensed molecular
// systems (measured there within [tol/3, tol]); on this small ionic system the measured error
// is about 3 tol, so the check below allows 10 tol.
//
// Build against an installed farfield (prefix P):
//   CMake:      find_package(farfield 1.0 CONFIG REQUIRED)  (cmake -DCMAKE_PREFIX_PATH=P)
//               target_link_libraries(spme_md_cxx PRIVATE farfield::farfield)
//   pkg-config: c++ -std=c++17 spme_md.cpp $(pkg-config --cflags --libs farfield) -o spme_md
//               (PKG_CONFIG_PATH=P/lib/pkgconfig; at run time LD_LIBRARY_PATH=P/lib or -Wl,-rpath,P/lib)
// SPDX-License-Identifier: MIT OR Apache-2.0
#include <farfield.h>

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

// Every farfield call returns 0 or an error code; turn the latter into an exception.
static void check(int ier) {
    if (ier) throw std::runtime_error(std::string(farfield_status_string(ier)) + ": " + farfield_last_error_message());
}

// An Ewald plan with its destroy call tied to scope.
struct Ewald {
    farfield_ewald_plan plan = nullptr;
    Ewald(int method, const double box[9], int64_t n, double tol) {
        farfield_ewald_opts opts;
        check(farfield_ewald_default_opts(&opts, sizeof opts));
        opts.nthreads = 1;  // 0 = all cores
        check(farfield_ewald_makeplan(method, box, n, tol, &plan, &opts));
    }
    ~Ewald() { farfield_ewald_destroy(plan); }
    Ewald(const Ewald &) = delete;
    Ewald &operator=(const Ewald &) = delete;
    // fields E (3n, interleaved) and the energy U of charges q at positions xyz (3n, interleaved)
    double fields(const std::vector<double> &xyz, const std::vector<double> &q, std::vector<double> &e) const {
        double energy = 0;
        check(farfield_ewald_execute(plan, int64_t(q.size()), xyz.data(), q.data(), nullptr, e.data(), &energy, nullptr));
        return energy;
    }
};

int main() try {
    const int side = 4, n = side * side * side;
    const double len = 4.0, dt = 0.005;
    const double box[9] = {len, 0, 0, 0, len, 0, 0, 0, len};  // rows: cell vectors a, b, c
    std::vector<double> xyz(3 * n), q(n), v(3 * n, 0.0), e(3 * n);
    unsigned s = 7;
    for (int i = 0, idx = 0; i < side; i++)
        for (int j = 0; j < side; j++)
            for (int k = 0; k < side; k++, idx++) {
                const int site[3] = {i, j, k};
                for (int d = 0; d < 3; d++) {
                    s = 1664525u * s + 1013904223u;
                    xyz[3 * idx + d] = site[d] + 0.5 + 0.5 * (s / 4294967296.0 - 0.5);  // +-0.25
                }
                q[idx] = (i + j + k) % 2 ? -1.0 : 1.0;
            }

    // step 0: SPME at tol 1e-6 against the classic Ewald sum at 1e-12
    const double tol = 1e-6;
    Ewald spme(FARFIELD_EWALD_SPME, box, n, tol);
    Ewald direct(FARFIELD_EWALD_DIRECT, box, n, 1e-12);
    std::vector<double> e_ref(3 * n);
    double u = spme.fields(xyz, q, e);
    const double u_ref = direct.fields(xyz, q, e_ref);
    double num = 0, den = 0;
    for (int i = 0; i < 3 * n; i++) {
        const double f = q[i / 3] * e[i], f_ref = q[i / 3] * e_ref[i];
        num += (f - f_ref) * (f - f_ref);
        den += f_ref * f_ref;
    }
    const double force_err = std::sqrt(num / den);
    std::printf("step 0: U = %.10f (classic Ewald %.10f), relative RMS force error %.2e (tol %.0e)\n", u, u_ref,
                force_err, tol);

    // velocity Verlet (unit masses): v += dt/2 F; x += dt v; new F; v += dt/2 F
    auto kinetic = [&] {
        double k = 0;
        for (double vi : v) k += 0.5 * vi * vi;
        return k;
    };
    const double e0 = u + kinetic();
    double max_drift = 0;
    for (int step = 1; step <= 20; step++) {
        for (int i = 0; i < 3 * n; i++) v[i] += 0.5 * dt * q[i / 3] * e[i];
        for (int i = 0; i < 3 * n; i++) xyz[i] += dt * v[i];  // no need to wrap: the plan does
        u = spme.fields(xyz, q, e);
        for (int i = 0; i < 3 * n; i++) v[i] += 0.5 * dt * q[i / 3] * e[i];
        const double total = u + kinetic();
        max_drift = std::fmax(max_drift, std::fabs(total - e0));
        if (step % 5 == 0)
            std::printf("step %2d: potential %.8f  kinetic %.8f  total %.8f\n", step, u, kinetic(), total);
    }
    const double drift = max_drift / std::fabs(e0);
    std::printf("largest total-energy change over 20 steps: %.2e of |E|\n", drift);
    return force_err <= 10 * tol && drift <= 1e-6 ? 0 : 1;
} catch (const std::exception &ex) {
    std::fprintf(stderr, "farfield error: %s\n", ex.what());
    return 1;
}
