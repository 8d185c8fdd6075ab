#pragma once
// Blocks of whole rows of a checkerboard lattice: the parts of a box that a decomposed engine
// updates apart (its boundary layers before the halo exchange, the deep interior during it) and
// measures (its interior, without ghosts). Rows run along the last axis, which is never split.

#include <cstdint>

#include "kernels/common/host_device.hpp"
#include "kernels/lattice/checkerboard.hpp"

namespace lattica {

/// The rows whose coordinate along each axis a < D-1 is in [first[a], first[a] + count[a]).
template <int D>
struct RowBlock {
  int64_t first[D];
  int64_t count[D];
  int64_t row_stride[D];  ///< rows between neighbours along axis a of the whole box
  int64_t rows;           ///< product of the counts

  /// The block of `lattice` with the given per-axis ranges (axes < D-1).
  static RowBlock make(const Checkerboard<D>& lattice, const int64_t* first, const int64_t* count) {
    RowBlock b{};
    b.rows = 1;
    int64_t stride = 1;
    for (int a = D - 2; a >= 0; --a) {
      b.first[a] = first[a];
      b.count[a] = count[a];
      b.row_stride[a] = stride;
      stride *= lattice.extent[a];
      b.rows *= count[a];
    }
    return b;
  }

  /// The box's row index of the block's r-th row (row-major over the block).
  LATTICA_HD_INLINE int64_t row(int64_t r) const {
    int64_t row = 0;
    for (int a = D - 2; a >= 0; --a) {
      const int64_t q = r / count[a];
      row += (first[a] + r - q * count[a]) * row_stride[a];
      r = q;
    }
    return row;
  }
};

/// Runs a functor over the units (sites or packed words of one colour) of a block of rows: index
/// t of replica * block units + unit of the block becomes f's index replica * replica_units +
/// the unit's colour-local index. Returns what f returns, so reductions can use it too.
template <int D, class F>
struct InRowBlock {
  RowBlock<D> block;
  int64_t row_units;      ///< units per row and colour
  int64_t replica_units;  ///< f's index step from one replica to the next
  F f;

  int64_t units() const { return block.rows * row_units; }

  LATTICA_HD_INLINE auto operator()(int64_t t) const {
    const int64_t block_units = block.rows * row_units;
    const int64_t replica = t / block_units;
    const int64_t unit = t - replica * block_units;
    const int64_t r = unit / row_units;
    return f(replica * replica_units + block.row(r) * row_units + (unit - r * row_units));
  }
};

template <int D, class F>
InRowBlock<D, F> in_row_block(const RowBlock<D>& block, int64_t row_units, int64_t replica_units,
                              const F& f) {
  return {block, row_units, replica_units, f};
}

}  // namespace lattica
