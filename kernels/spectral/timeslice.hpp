#pragma once
// Momentum-projected time-slice correlators. The last lattice axis is time (T = L_{d-1}); each
// replica's and component's lexicographic field is then a column-major T x V_s matrix, and one
// batched GEMM with a V_s x 2 n_p matrix of cos and sin columns projects every time slice onto
// n_p momenta: O_c(t, p) = sum_x phi_c(x, t) e^{-i p.x} (real part from the cos column, minus
// the imaginary part from the sin column; the correlator does not see the sign).

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/common/host_device.hpp"

namespace lattica {

/// The projected momenta for `per_axis` = N: p = 0, then n e_a (n = 1 .. N) along each spatial
/// axis a < d - 1, as integer vectors n (p_a = 2 pi n_a / L_a); row-major [n_p][d - 1].
inline std::vector<int64_t> timeslice_momenta(int d, int per_axis) {
  const int spatial = d - 1;
  std::vector<int64_t> n(static_cast<size_t>(spatial), 0);  // p = 0
  for (int a = 0; a < spatial; ++a) {
    for (int k = 1; k <= per_axis; ++k) {
      for (int b = 0; b < spatial; ++b) n.push_back(b == a ? k : 0);
    }
  }
  return n;
}

/// Column-major V_s x 2 n_p matrix: column 2j = cos(p_j . x), column 2j + 1 = sin(p_j . x), for
/// spatial sites x in row-major order over axes 0 .. d-2 of the box of `extents` starting at
/// global coordinates `origin` (a rank's box; the whole lattice when both are empty). The same
/// doubles on both backends.
inline std::vector<double> plane_wave_matrix(const std::vector<int64_t>& dims,
                                             const std::vector<int64_t>& momenta,
                                             const std::vector<int64_t>& origin = {},
                                             const std::vector<int64_t>& extents = {}) {
  const int spatial = static_cast<int>(dims.size()) - 1;
  const std::vector<int64_t>& box = extents.empty() ? dims : extents;
  int64_t volume = 1;
  for (int a = 0; a < spatial; ++a) volume *= box[a];
  const int64_t count = spatial > 0 ? static_cast<int64_t>(momenta.size()) / spatial : 1;
  const double two_pi = 6.283185307179586476925286766559;
  std::vector<double> w(static_cast<size_t>(volume * 2 * count));
  for (int64_t j = 0; j < count; ++j) {
    for (int64_t x = 0; x < volume; ++x) {
      // The phase as a fraction of a turn, summed exactly in integers per axis then scaled.
      double phase = 0;
      int64_t rest = x;
      for (int a = spatial - 1; a >= 0; --a) {
        const int64_t coordinate = rest % box[a] + (origin.empty() ? 0 : origin[a]);
        rest /= box[a];
        const int64_t turns = (momenta[j * spatial + a] * coordinate) % dims[a];
        phase += static_cast<double>(turns) / static_cast<double>(dims[a]);
      }
      w[static_cast<size_t>(x + volume * 2 * j)] = std::cos(two_pi * phase);
      w[static_cast<size_t>(x + volume * (2 * j + 1))] = std::sin(two_pi * phase);
    }
  }
  return w;
}

/// C(dt, p_j) = (1 / (T V_s)) sum_c sum_t Re[O_c(t + dt, p_j) conj(O_c(t, p_j))] (t + dt
/// periodic) for every replica r, into out[(r * T + dt) * n_p + j]; functor over R * T * n_p.
struct CorrelateTimeslices {
  const double* projections;  ///< [(r * C + c)] column-major T x 2 n_p
  double* out;
  int64_t time;
  int64_t momenta;
  int components;
  double normalisation;  ///< 1 / (T V_s)

  LATTICA_HD_INLINE void operator()(int64_t i) const {
    const int64_t j = i % momenta;
    const int64_t dt = (i / momenta) % time;
    const int64_t r = i / (momenta * time);
    double sum = 0;
    for (int c = 0; c < components; ++c) {
      const double* o = projections + (r * components + c) * time * 2 * momenta;
      const double* re = o + time * 2 * j;
      const double* im = re + time;
      for (int64_t t = 0; t < time; ++t) {
        const int64_t later = t + dt < time ? t + dt : t + dt - time;
        sum += re[later] * re[t] + im[later] * im[t];
      }
    }
    out[i] = sum * normalisation;
  }
};

}  // namespace lattica
