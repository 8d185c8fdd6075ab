#pragma once
// Host-side tables of the structure factor and the two-point function, from the engine's
// running sums: averages, errors, connected parts, G(r) by inverse FFT (Wiener-Khinchin), the
// radially binned S(|k|), and the second-moment correlation length. A decomposed run computes
// them rank by rank: each rank its rows of axis 0 of S and G (the distributed inverse FFT), the
// whole-lattice summaries added over the ranks, so no rank holds more than its rows.

#include <cstdint>
#include <vector>

#include "sim/engine/engine.hpp"

namespace lattica {

class Communicator;

struct StructureFactorTables {
  int64_t samples = 0;                       ///< of the sums
  int components = 0;                        ///< order-parameter components
  std::vector<int64_t> spectrum_shape;       ///< L_0, ..., L_{d-2}, L_{d-1}/2 + 1
  int64_t first_row = 0;                     ///< the first row of axis 0 of s ... g_connected
  int64_t rows = 0;                          ///< rows of axis 0 held (all of them in one process)
  std::vector<double> s;                     ///< <S(k)> on those rows of the half spectrum
  std::vector<double> s_error;               ///< its standard error, samples taken as independent
  std::vector<double> s_connected;           ///< S(k) - V |<m>|^2 delta_k0
  std::vector<double> g;                     ///< G(r) = (1/V) sum_x <phi(x) . phi(x + r)>, rows
  std::vector<double> g_connected;           ///< G(r) - |<m>|^2
  std::vector<std::vector<double>> momenta;  ///< per axis, k = 2 pi n / L in FFT order
  std::vector<double> radial_k, radial_s;    ///< S averaged over shells of width 2 pi / L_max
  std::vector<int64_t> radial_modes;         ///< full-lattice modes per shell
  std::vector<double> mean_field;            ///< <m_c> per component
  double xi2 = 0;  ///< second-moment correlation length from <S(0)> and <S(k_min)>
  /// false (measure.structure_factor_tables = "radial"): s ... g_connected are empty, and only
  /// the whole-lattice summaries are written.
  bool per_mode = true;
};

/// The tables from sums with at least one sample. Without `ranks` (or with one rank) the sums
/// hold every row; otherwise each rank's sums hold its rows of the slab FFT (SlabFft's split of
/// axis 0), the call is collective, and every rank gets its rows of S and G and the whole
/// lattice's momenta, shells, mean field and xi2 (sums over the ranks in rank order: equal to
/// one process's to rounding). Without `per_mode`, the per-mode tables are left empty (no
/// inverse FFT); the summaries are the same.
StructureFactorTables structure_factor_tables(const StructureFactorSums& sums,
                                              Communicator* ranks = nullptr, bool per_mode = true);

/// xi_2 = sqrt(S(0) / S(k_min) - 1) / (2 sin(pi / L)), k_min = 2 pi / L; NaN when
/// S(0) <= S(k_min) (no positive length fits).
double second_moment_length(double s0, double s_min, int64_t length);

}  // namespace lattica
