#include "sim/correlators.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "kernels/backend/cpu_exec.hpp"
#include "kernels/spectral/fft_cpu.hpp"
#include "sim/communicator.hpp"
#include "sim/parallel/slab_fft.hpp"

namespace lattica {

double second_moment_length(double s0, double s_min, int64_t length) {
  if (!(s0 > s_min) || !(s_min > 0)) return std::numeric_limits<double>::quiet_NaN();
  const double pi = 3.14159265358979323846;
  return std::sqrt(s0 / s_min - 1) / (2 * std::sin(pi / static_cast<double>(length)));
}

StructureFactorTables structure_factor_tables(const StructureFactorSums& sums, Communicator* ranks,
                                              bool per_mode) {
  if (ranks && ranks->size() == 1) ranks = nullptr;
  StructureFactorTables t;
  t.per_mode = per_mode;
  t.samples = sums.samples;
  t.components = sums.components;
  const int d = static_cast<int>(sums.dims.size());
  const double pi = 3.14159265358979323846;
  const int64_t volume = volume_of(sums.dims);
  const auto n = static_cast<double>(sums.samples);
  const size_t modes = sums.power_sum.size();  // of the rows held
  t.spectrum_shape = sums.dims;
  t.spectrum_shape.back() = sums.dims.back() / 2 + 1;
  const int64_t row_modes = volume_of(t.spectrum_shape) / t.spectrum_shape[0];
  const int64_t first_mode = sums.first_row * row_modes;  // global index of local mode 0
  t.first_row = sums.first_row;
  t.rows = ranks ? static_cast<int64_t>(modes) / row_modes : sums.dims[0];
  if (!per_mode) t.rows = 0;

  double m2 = 0;
  for (double m : sums.mean_field_sum) {
    t.mean_field.push_back(m / n);
    m2 += (m / n) * (m / n);
  }
  t.s.resize(modes);
  for (size_t k = 0; k < modes; ++k) t.s[k] = sums.power_sum[k] / n;

  // Wiener-Khinchin: G(r) = (1/V) sum_x phi(x) phi(x + r) = (1/V) sum_k S(k) exp(i k r). First,
  // so that the FFT's buffers are gone before the other tables take memory.
  if (per_mode) {
    t.g.resize(static_cast<size_t>(t.rows * (volume / sums.dims[0])));
    std::vector<Complex> spectrum(modes);
    for (size_t k = 0; k < modes; ++k) spectrum[k] = {t.s[k], 0.0};
    if (ranks) {
      const CpuExec host(0);
      SlabFft<CpuExec> fft(host, *ranks, sums.dims, 1);
      if (fft.first_row() != t.first_row || fft.rows() != t.rows)
        throw std::logic_error("structure_factor_tables: the sums are not this rank's rows");
      fft.inverse(spectrum.data(), t.g.data());
    } else {
      CpuFft(sums.dims, 1).inverse(spectrum.data(), t.g.data());
    }
  }

  if (per_mode) t.s_error.resize(modes);
  for (size_t k = 0; k < t.s_error.size(); ++k) {
    const double variance = std::max(0.0, sums.power_squares[k] / n - t.s[k] * t.s[k]);
    t.s_error[k] = sums.samples > 1 ? std::sqrt(variance / (n - 1)) : 0.0;
  }
  if (per_mode) t.s_connected = t.s;
  if (first_mode == 0 && !t.s_connected.empty())
    t.s_connected[0] -= static_cast<double>(volume) * m2;
  t.g_connected.resize(t.g.size());
  for (size_t r = 0; r < t.g.size(); ++r) {
    t.g[r] /= static_cast<double>(volume);
    t.g_connected[r] = t.g[r] - m2;
  }

  double largest_k2 = 0;
  for (int a = 0; a < d; ++a) {
    const int64_t l = sums.dims[a];
    const int64_t count = a == d - 1 ? l / 2 + 1 : l;
    std::vector<double> k(static_cast<size_t>(count));
    for (int64_t j = 0; j < count; ++j)
      k[j] = 2 * pi * static_cast<double>(j <= l / 2 ? j : j - l) / l;
    t.momenta.push_back(std::move(k));
    const double k_max = 2 * pi * static_cast<double>(l / 2) / l;
    largest_k2 += k_max * k_max;
  }

  // Shells of |k| of width 2 pi / L_max; each stored mode stands for itself and, on the
  // halved last axis, for its mirror -k unless it is its own mirror (k_last = 0 or pi).
  // Every rank sizes them for the whole lattice, so that their sums add up over the ranks.
  const int64_t longest = *std::max_element(sums.dims.begin(), sums.dims.end());
  const double width = 2 * pi / static_cast<double>(longest);
  const auto shells = static_cast<size_t>(std::llround(std::sqrt(largest_k2) / width)) + 1;
  std::vector<double> k_sum(shells, 0.0), s_sum(shells, 0.0);
  std::vector<int64_t> weight_sum(shells, 0);
  const int64_t last = t.spectrum_shape.back();
  for (size_t k = 0; k < modes; ++k) {
    int64_t rest = first_mode + static_cast<int64_t>(k);
    double k2 = 0;
    int64_t j_last = 0;
    for (int a = d - 1; a >= 0; --a) {
      const int64_t extent = a == d - 1 ? last : sums.dims[a];
      const int64_t j = rest % extent;
      rest /= extent;
      if (a == d - 1) j_last = j;
      k2 += t.momenta[a][j] * t.momenta[a][j];
    }
    const int64_t weight = (j_last == 0 || 2 * j_last == sums.dims.back()) ? 1 : 2;
    const double magnitude = std::sqrt(k2);
    const auto shell = static_cast<size_t>(std::llround(magnitude / width));
    k_sum[shell] += weight * magnitude;
    s_sum[shell] += weight * t.s[k];
    weight_sum[shell] += weight;
  }
  // S(0) and S at the unit momenta of the longest axes, from the rank that holds each.
  std::vector<double> named(1 + sums.min_axes.size(), 0.0);
  const auto held = [&](int64_t mode, double& into) {
    if (mode >= first_mode && mode < first_mode + static_cast<int64_t>(modes))
      into = t.s[static_cast<size_t>(mode - first_mode)];
  };
  held(0, named[0]);
  for (size_t i = 0; i < sums.min_axes.size(); ++i)
    held(half_spectrum_unit_mode(sums.dims.data(), d, sums.min_axes[i]), named[1 + i]);
  if (ranks) {  // the other ranks' entries are zeros: adding them changes no bit of these
    sum_over_ranks(*ranks, k_sum.data(), static_cast<int64_t>(shells));
    sum_over_ranks(*ranks, s_sum.data(), static_cast<int64_t>(shells));
    sum_over_ranks(*ranks, weight_sum.data(), static_cast<int64_t>(shells));
    sum_over_ranks(*ranks, named.data(), static_cast<int64_t>(named.size()));
  }
  for (size_t b = 0; b < shells; ++b) {
    if (weight_sum[b] == 0) continue;
    t.radial_k.push_back(k_sum[b] / weight_sum[b]);
    t.radial_s.push_back(s_sum[b] / weight_sum[b]);
    t.radial_modes.push_back(weight_sum[b]);
  }

  // <S(k_min)> over the unit momenta of the longest axes (as the per-measurement series).
  double s_min = 0;
  for (size_t i = 1; i < named.size(); ++i) s_min += named[i];
  s_min /= static_cast<double>(sums.min_axes.size());
  t.xi2 = second_moment_length(named[0], s_min, longest);
  if (!per_mode) t.s = {};  // the summaries are made; the rows are not written
  return t;
}

}  // namespace lattica
