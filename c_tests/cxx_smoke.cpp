// C++17 smoke test: the C header used from C++ with std::complex<double> / std::complex<float>
// (farfield_complex / farfield_complexf), checked against direct sums.
// SPDX-License-Identifier: MIT OR Apache-2.0
#include "farfield.h"

#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

static_assert(std::is_same_v<farfield_complex, std::complex<double>>);
static_assert(std::is_same_v<farfield_complexf, std::complex<float>>);
static_assert(sizeof(farfield_nufft_opts) == 64 && offsetof(farfield_nufft_opts, struct_size) == 0 &&
              offsetof(farfield_nufft_opts, gpu_stream) == 56);
static_assert(sizeof(farfield_nufft_info) == 72 && offsetof(farfield_nufft_info, struct_size) == 0);
static_assert(std::is_trivially_copyable_v<farfield_nufft_opts>);
static_assert(sizeof(farfield_fmm_opts) == 40 && offsetof(farfield_fmm_opts, gpu_stream) == 32);

namespace {
int failures = 0;
void expect(bool ok, const char *what) {
    if (!ok) {
        std::fprintf(stderr, "check failed: %s (last error: %s)\n", what, farfield_last_error_message());
        ++failures;
    }
}

// RAII owner of a plan.
struct PlanDeleter {
    void operator()(farfield_nufft_plan_s *p) const { farfield_nufft_destroy(p); }
};
using Plan = std::unique_ptr<farfield_nufft_plan_s, PlanDeleter>;

template <class R>
double rel_err(const std::vector<std::complex<R>> &a, const std::vector<std::complex<double>> &b) {
    double num = 0, den = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        num += std::norm(std::complex<double>(a[i]) - b[i]);
        den += std::norm(b[i]);
    }
    return std::sqrt(num / den);
}
} // namespace

int main() {
    const std::complex<double> I(0, 1);
    std::mt19937_64 gen(5);
    const double pi = 3.14159265358979323846;
    std::uniform_real_distribution<double> u(-pi, pi);

    // 2D type 2, double
    const int64_t n[2] = {14, 11};
    const int64_t m = 120;
    std::vector<double> x(m), y(m);
    for (int64_t j = 0; j < m; ++j) x[j] = u(gen), y[j] = u(gen);
    std::vector<std::complex<double>> f(n[0] * n[1]), c(m), ref(m);
    for (auto &v : f) v = {u(gen), u(gen)};

    farfield_nufft_plan raw = nullptr;
    farfield_nufft_opts opts;
    expect(farfield_nufft_default_opts(&opts, sizeof opts) == FARFIELD_OK && opts.struct_size == sizeof opts,
           "default_opts");
    opts.nthreads = 1;
    expect(farfield_nufft_makeplan(2, 2, n, -1, 1, 1e-10, &raw, &opts) == FARFIELD_OK, "makeplan");
    Plan plan(raw);
    expect(farfield_nufft_setpts(plan.get(), m, x.data(), y.data(), nullptr, 0, nullptr, nullptr, nullptr) ==
               FARFIELD_OK,
           "setpts");
    expect(farfield_nufft_execute(plan.get(), c.data(), f.data()) == FARFIELD_OK, "execute");
    for (int64_t j = 0; j < m; ++j) {
        std::complex<double> s = 0;
        for (int64_t k2 = 0; k2 < n[1]; ++k2)
            for (int64_t k1 = 0; k1 < n[0]; ++k1)
                s += f[k1 + n[0] * k2] * std::exp(-I * (double(k1 - n[0] / 2) * x[j] + double(k2 - n[1] / 2) * y[j]));
        ref[j] = s;
    }
    const double err = rel_err(c, ref);
    std::printf("cxx f64 2D type 2: rel err %.3e\n", err);
    expect(err <= 1e-9, "f64 accuracy");

    // 1D type 1, single precision
    const int64_t n1[1] = {25};
    std::vector<float> xf(m);
    std::vector<std::complex<float>> cf(m), ff(n1[0]);
    for (int64_t j = 0; j < m; ++j) xf[j] = float(u(gen)), cf[j] = {float(u(gen)), float(u(gen))};
    farfield_nufftf_plan pf = nullptr;
    expect(farfield_nufftf_makeplan(1, 1, n1, +1, 1, 1e-5f, &pf, nullptr) == FARFIELD_OK, "nufftf makeplan");
    expect(farfield_nufftf_setpts(pf, m, xf.data(), nullptr, nullptr, 0, nullptr, nullptr, nullptr) == FARFIELD_OK,
           "nufftf setpts");
    expect(farfield_nufftf_execute(pf, cf.data(), ff.data()) == FARFIELD_OK, "nufftf execute");
    farfield_nufftf_destroy(pf);
    std::vector<std::complex<double>> fref(n1[0]);
    for (int64_t k = 0; k < n1[0]; ++k)
        for (int64_t j = 0; j < m; ++j)
            fref[k] += std::complex<double>(cf[j]) * std::exp(I * (double(k - n1[0] / 2) * double(xf[j])));
    const double errf = rel_err(ff, fref);
    std::printf("cxx f32 1D type 1: rel err %.3e\n", errf);
    expect(errf <= 1e-4, "f32 accuracy");

    // errors and strings from C++
    farfield_nufft_plan bad = nullptr;
    expect(farfield_nufft_makeplan(1, 4, n, +1, 1, 1e-6, &bad, nullptr) == FARFIELD_ERR_DIM, "dim error");
    expect(bad == nullptr, "plan NULL after failure");
    expect(std::string(farfield_last_error_message()).size() > 0, "last error message");
    expect(std::string(farfield_version()) == std::to_string(FARFIELD_VERSION_MAJOR) + "." +
                                                  std::to_string(FARFIELD_VERSION_MINOR) + "." +
                                                  std::to_string(FARFIELD_VERSION_PATCH),
           "version");

    if (failures) {
        std::fprintf(stderr, "cxx_smoke: %d check(s) FAILED\n", failures);
        return 1;
    }
    std::printf("cxx_smoke: all checks passed\n");
    return 0;
}
