#pragma once
// Site and mode functors of the structure-factor measurement, shared by both backends:
// the order-parameter field from lexicographic spins, then, after a batched real-to-complex
// FFT, add each mode's power S(k) = sum_c |phi_c(k)|^2 / V of every replica to running sums.

#include <cstdint>

#include "kernels/common/host_device.hpp"
#include "kernels/spectral/complex.hpp"

namespace lattica {

/// field[(r * C + c) * V + x] = component c of the order parameter of replica r at lexicographic
/// site x, from the spins already in lexicographic order; functor over R * C * V (coalesced).
template <class Model>
struct FieldComponents {
  typename Model::Params params;
  const typename Model::Spin* spins;  ///< replicas one after another, lexicographic order
  double* field;
  int64_t volume;
  int components;

  LATTICA_HD_INLINE void operator()(int64_t i) const {
    const int64_t copy = i / volume;  // r * C + c
    const int64_t x = i - copy * volume;
    const int64_t r = copy / components;
    const int c = static_cast<int>(copy - r * components);
    field[i] = Model::field_component(params, spins[r * volume + x], c);
  }
};

/// For each mode k of the half spectrum: the power of every replica, P_r(k) = sum_c |F_rc(k)|^2
/// / V, added to sum[k] and its square to squares[k]; functor over the modes. Each mode is
/// independent, so the sums are the same whatever the launch.
struct AccumulatePower {
  const Complex* spectrum;  ///< [(r * C + c) * modes + k]
  double* sum;
  double* squares;
  int64_t modes;
  int replicas;
  int components;
  double volume;

  LATTICA_HD_INLINE void operator()(int64_t k) const {
    double s = 0, s2 = 0;
    for (int r = 0; r < replicas; ++r) {
      double power = 0;
      for (int c = 0; c < components; ++c)
        power += norm2(spectrum[(static_cast<int64_t>(r) * components + c) * modes + k]);
      power /= volume;
      s += power;
      s2 += power * power;
    }
    sum[k] += s;
    squares[k] += s2;
  }
};

/// Per replica r of one measurement: S(0) and the mean of S over the smallest nonzero momenta
/// 2 pi / L e_a along the listed axes, into out[2 r], out[2 r + 1]; and the mean field
/// (1/V) sum_x phi_c(x), summed over replicas, added to mean_sum[c]. Functor over one index.
/// A spectrum cut over ranks lists only the modes it holds (index -1 for the others): out then
/// gets this rank's share of the sums, which add up over the ranks.
struct SpectrumSummary {
  const Complex* spectrum;
  double* out;
  double* mean_sum;
  int64_t modes;
  int64_t zero_mode;     ///< index of k = 0 in `spectrum`, or -1
  int64_t unit_mode[4];  ///< index of the unit momentum along each listed axis, or -1
  int axes;
  int replicas;
  int components;
  double volume;

  LATTICA_HD_INLINE void operator()(int64_t) const {
    for (int r = 0; r < replicas; ++r) {
      double s0 = 0, smin = 0;
      for (int c = 0; c < components; ++c) {
        const Complex* f = spectrum + (static_cast<int64_t>(r) * components + c) * modes;
        if (zero_mode >= 0) {
          s0 += norm2(f[zero_mode]);
          mean_sum[c] += f[zero_mode].re / volume;
        }
        for (int a = 0; a < axes; ++a) {
          if (unit_mode[a] >= 0) smin += norm2(f[unit_mode[a]]);
        }
      }
      out[2 * r] = s0 / volume;
      out[2 * r + 1] = smin / (axes * volume);
    }
  }
};

}  // namespace lattica
