// The structure-factor pipeline on the host: FFTW conventions, the power of a plane wave and of
// a spike, G(r) by Wiener-Khinchin against a direct O(V^2) sum, shells and xi_2.

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/backend/cpu_exec.hpp"
#include "kernels/spectral/structure_factor.hpp"
#include "sim/correlators.hpp"

namespace lattica {
namespace {

const double kTwoPi = 6.283185307179586;

/// Sums of a single sample of a one-component field, through the production functors.
StructureFactorSums one_sample(const std::vector<int64_t>& dims, const std::vector<double>& field) {
  CpuExec exec(1);
  CpuFft fft(dims, 1);
  const int64_t volume = static_cast<int64_t>(field.size());
  const int64_t modes = fft.complex_size();
  std::vector<Complex> spectrum(static_cast<size_t>(modes));
  fft.forward(field.data(), spectrum.data());
  StructureFactorSums sums;
  sums.dims = dims;
  sums.components = 1;
  sums.samples = 1;
  sums.power_sum.assign(static_cast<size_t>(modes), 0.0);
  sums.power_squares.assign(static_cast<size_t>(modes), 0.0);
  exec.for_each(modes,
                AccumulatePower{spectrum.data(), sums.power_sum.data(), sums.power_squares.data(),
                                modes, 1, 1, static_cast<double>(volume)});
  double mean = 0;
  for (double x : field) mean += x;
  sums.mean_field_sum = {mean / volume};
  sums.min_axes = {0};
  return sums;
}

TEST(Spectral, PlaneWavePowerSitsAtItsMomentum) {
  const std::vector<int64_t> dims{12, 10};
  std::vector<double> field(120);
  for (int x = 0; x < 12; ++x)
    for (int y = 0; y < 10; ++y)
      field[x * 10 + y] = std::cos(kTwoPi * (2.0 * x / 12 + 3.0 * y / 10));
  const StructureFactorTables t = structure_factor_tables(one_sample(dims, field));
  ASSERT_EQ(t.spectrum_shape, (std::vector<int64_t>{12, 6}));
  // |sum_x cos(k0.x) e^{-ik.x}|^2 / V = V / 4 at k = +-k0; the stored half holds k0 = (2, 3).
  for (int i = 0; i < 12; ++i) {
    for (int j = 0; j < 6; ++j) {
      const double want = (i == 2 && j == 3) ? 30.0 : 0.0;
      EXPECT_NEAR(t.s[i * 6 + j], want, 1e-10) << i << " " << j;
    }
  }
}

TEST(Spectral, SpikeHasAFlatSpectrumAndGIsItsAutocorrelation) {
  const std::vector<int64_t> dims{4, 6, 8};
  std::vector<double> field(192, 0.0);
  field[37] = 2.0;
  const StructureFactorTables t = structure_factor_tables(one_sample(dims, field));
  for (double s : t.s) EXPECT_NEAR(s, 4.0 / 192, 1e-14);
  EXPECT_NEAR(t.g[0], 4.0 / 192, 1e-14);
  for (size_t r = 1; r < t.g.size(); ++r) EXPECT_NEAR(t.g[r], 0.0, 1e-14);
}

TEST(Spectral, WienerKhinchinEqualsDirectSum) {
  for (const std::vector<int64_t>& dims :
       {std::vector<int64_t>{16}, std::vector<int64_t>{6, 10}, std::vector<int64_t>{4, 2, 6},
        std::vector<int64_t>{2, 4, 2, 4}}) {
    int64_t volume = 1;
    for (int64_t l : dims) volume *= l;
    std::mt19937_64 gen(7);
    std::normal_distribution<double> normal(0.3, 1.0);
    std::vector<double> field(static_cast<size_t>(volume));
    for (double& x : field) x = normal(gen);
    const StructureFactorTables t = structure_factor_tables(one_sample(dims, field));
    // Direct: G(r) = (1/V) sum_x phi(x) phi(x + r), plain coordinate arithmetic.
    const int d = static_cast<int>(dims.size());
    auto coords = [&](int64_t i) {
      std::vector<int64_t> c(d);
      for (int a = d - 1; a >= 0; --a) {
        c[a] = i % dims[a];
        i /= dims[a];
      }
      return c;
    };
    for (int64_t r = 0; r < volume; ++r) {
      const auto rc = coords(r);
      double direct = 0;
      for (int64_t x = 0; x < volume; ++x) {
        const auto xc = coords(x);
        int64_t y = 0;
        for (int a = 0; a < d; ++a) y = y * dims[a] + (xc[a] + rc[a]) % dims[a];
        direct += field[x] * field[y];
      }
      EXPECT_NEAR(t.g[r], direct / volume, 1e-12) << "d = " << d << ", r = " << r;
    }
    // Connected parts subtract the mean field.
    EXPECT_NEAR(t.g_connected[0], t.g[0] - t.mean_field[0] * t.mean_field[0], 1e-14);
    // Shells hold every mode of the full lattice once.
    int64_t modes = 0;
    for (int64_t m : t.radial_modes) modes += m;
    EXPECT_EQ(modes, volume) << "d = " << d;
  }
}

TEST(Spectral, SecondMomentLength) {
  // S(k) = 1 / (k_hat^2 + 1/xi^2) (Ornstein-Zernike on the lattice) gives back xi exactly.
  const double xi = 3.7, length = 32;
  const double k_hat2 = 4 * std::sin(kTwoPi / length / 2) * std::sin(kTwoPi / length / 2);
  EXPECT_NEAR(second_moment_length(xi * xi, 1 / (k_hat2 + 1 / (xi * xi)), 32), xi, 1e-12);
  EXPECT_TRUE(std::isnan(second_moment_length(1.0, 2.0, 32)));
}

}  // namespace
}  // namespace lattica
