#pragma once
// A distributed real <-> complex FFT over the ranks of a run: the lattice cut into slabs of
// axis 0, one per rank, with the single-process FFT's conventions (kernels/spectral/fft_cpu.hpp:
// unnormalised, row-major, half spectrum on the last axis). Each rank holds the rows of axis 0
// of the field and of the spectrum that it owns; nothing is gathered.

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/spectral/complex.hpp"
#include "sim/communicator.hpp"

namespace lattica {

class CpuFft;

/// An axis cut into near-equal consecutive parts: the first (extent % parts) get one more.
struct AxisSplit {
  int64_t extent = 0;
  int parts = 1;
  int64_t first(int part) const;  ///< first index of `part`
  int64_t count(int part) const;  ///< indices in `part` (0 when parts > extent for some)
};

/// Batched transforms of a lattice of extents `dims` (2 or more axes) decomposed into slabs of
/// axis 0 over the ranks of `comm`. forward: a local FFT over axes 1.. of the rank's rows, a
/// transpose (all-to-all) to slabs of the half spectrum's other modes, the FFT along axis 0,
/// and the transpose back, so the spectrum comes out in the rows of the input. Any extents and
/// rank counts work; a rank beyond the extent of axis 0 holds no rows but takes part.
class SlabFft {
 public:
  /// Plans `batch` transforms; collective only in use (forward, inverse). Throws
  /// std::invalid_argument for fewer than 2 axes, an extent below 1 or a batch below 1.
  SlabFft(Communicator& comm, const std::vector<int64_t>& dims, int batch);
  ~SlabFft();
  SlabFft(const SlabFft&) = delete;
  SlabFft& operator=(const SlabFft&) = delete;

  /// The rows of axis 0 this rank holds, of the field and of the spectrum alike.
  int64_t first_row() const { return rows_.first(rank_); }
  /// Every rank's rows of axis 0.
  const AxisSplit& row_split() const { return rows_; }
  int64_t rows() const { return rows_.count(rank_); }
  /// Elements of this rank's field, [batch][rows()][dims[1]]...[dims[d-1]], and spectrum,
  /// [batch][rows()][dims[1]]...[dims[d-1] / 2 + 1].
  int64_t local_real_size() const { return batch_ * rows() * row_real_; }
  int64_t local_complex_size() const { return batch_ * rows() * row_modes_; }

  /// out = this rank's rows of sum_x in(x) exp(-i k.x) for every batch member (collective).
  void forward(const double* in, Complex* out);
  /// out = this rank's rows of sum_k in(k) exp(+i k.x) over the Hermitian spectrum (collective;
  /// the single-process inverse, so inverse(forward(f)) = V f). in is kept.
  void inverse(const Complex* in, double* out);

 private:
  /// The spectrum from rows (this rank's, [b][row][mode]) to columns_ ([b][mode][every row of
  /// axis 0], this rank's modes), and back: the two all-to-all transposes.
  void rows_to_columns(const Complex* rows);
  void columns_to_rows(Complex* rows);
  /// f(index in the rows layout, index in rows_side_) for every element this rank exchanges.
  template <class F>
  void for_rows_side(F f) const;
  /// f(index in columns_, index in columns_side_) for every element this rank exchanges.
  template <class F>
  void for_columns_side(F f) const;
  /// The 1-D transforms along axis 0 of columns_, in place (forward: exp(-i k x)).
  void transform_columns(bool forward);

  Communicator& comm_;
  int rank_, ranks_;
  int64_t batch_;
  AxisSplit rows_;                    ///< axis 0 over the ranks
  AxisSplit modes_;                   ///< the half spectrum of axes 1.. over the ranks
  int64_t row_real_;                  ///< real sites of one row of axis 0
  int64_t row_modes_;                 ///< half-spectrum modes of one row
  std::unique_ptr<CpuFft> rows_fft_;  ///< over axes 1.. of this rank's rows; null without rows
  struct ColumnPlans;
  std::unique_ptr<ColumnPlans> columns_fft_;  ///< along axis 0; null without modes
  /// Pieces exchanged with each rank: the rows side (this rank's rows, the peer's modes) and
  /// the columns side (the peer's rows, this rank's modes), in elements.
  std::vector<int64_t> rows_counts_, rows_offsets_, columns_counts_, columns_offsets_;
  std::vector<Complex> rows_buffer_, columns_, rows_side_, columns_side_;
};

}  // namespace lattica
