#pragma once
// Blocks of whole rows of a checkerboard lattice: the parts of a box that a decomposed engine
// updates apart (its boundary layers before the halo exchange, the deep interior during it) and
// measures (its interior, without ghosts). Rows run along the last axis, which is never split.
// Naming a block's units costs a few multiply-highs (FastDivisor), not long divisions: the
// packed Ising update is only ~25 instructions a site.

#include <algorithm>
#include <cstdint>

#include "kernels/common/fast_divisor.hpp"
#include "kernels/common/host_device.hpp"
#include "kernels/lattice/checkerboard.hpp"

namespace lattica {

/// The rows whose coordinate along each axis a < D-1 is in [first[a], first[a] + count[a]).
/// Precondition: the box has fewer than 2^32 rows.
template <int D>
struct RowBlock {
  uint32_t first[D];
  FastDivisor count[D];    ///< of each axis (a divisor of 1 where the count is 0: rows is 0)
  uint32_t row_stride[D];  ///< rows between neighbours along axis a of the whole box
  int64_t rows;            ///< product of the counts
  /// The rows are consecutive in the box (e.g. whole layers of the slowest split axis, as in a
  /// grid that splits axis 0 only): over_row_block then runs a plain range.
  bool contiguous;
  int64_t first_row;  ///< the box row of the block's first row

  /// The block of `lattice` with the given per-axis ranges (axes < D-1).
  static RowBlock make(const Checkerboard<D>& lattice, const int64_t* first, const int64_t* count) {
    RowBlock b{};
    b.rows = 1;
    int64_t stride = 1;
    for (int a = D - 2; a >= 0; --a) {
      b.first[a] = static_cast<uint32_t>(first[a]);
      b.count[a] = FastDivisor::make(static_cast<uint32_t>(std::max<int64_t>(count[a], 1)));
      b.row_stride[a] = static_cast<uint32_t>(stride);
      stride *= lattice.extent[a];
      b.rows *= count[a];
    }
    b.first_row = b.rows > 0 ? b.row(0) : 0;
    b.contiguous =
        b.rows > 0 && b.row(static_cast<uint32_t>(b.rows - 1)) - b.first_row + 1 == b.rows;
    return b;
  }

  /// The box's row index of the block's r-th row (row-major over the block), r < rows.
  LATTICA_HD_INLINE int64_t row(uint32_t r) const {
    uint32_t row = 0;  // the box has fewer than 2^32 rows
    for (int a = D - 2; a >= 0; --a) {
      const uint32_t q = count[a].divide(r);
      row += (first[a] + (r - q * count[a].divisor)) * row_stride[a];
      r = q;
    }
    return row;
  }
};

/// Runs a functor over the units (sites, or packed words, of one colour) of a block of rows:
/// index t < units() becomes f's index base + the unit's colour-local index.
template <int D, class F>
struct InRowBlock {
  RowBlock<D> block;
  FastDivisor row_units;  ///< units per row and colour
  bool narrow;            ///< units() < 2^32: 32-bit division suffices
  int64_t base;           ///< added to every index (e.g. a replica's offset)
  F f;

  int64_t units() const { return block.rows * static_cast<int64_t>(row_units.divisor); }

  /// Returns what f returns, so reductions can use it too.
  LATTICA_HD_INLINE auto operator()(int64_t t) const {
    const int64_t length = row_units.divisor;
    int64_t r;
    if (narrow) {
      r = row_units.divide(static_cast<uint32_t>(t));
    } else {
      r = t / length;
    }
    return f(base + block.row(static_cast<uint32_t>(r)) * length + (t - r * length));
  }
};

/// f over consecutive units: index t becomes first + t.
template <class F>
struct InUnitRange {
  int64_t first;
  F f;
  LATTICA_HD_INLINE auto operator()(int64_t t) const { return f(first + t); }
};

/// Calls use(units, g) with g running f over the units of `block` (row_units per row, f's
/// indices offset by `base`): a plain range where the block's rows are consecutive, so its
/// kernel costs no more than the whole lattice's, else InRowBlock.
template <int D, class F, class Use>
void over_row_block(const RowBlock<D>& block, int64_t row_units, int64_t base, const F& f,
                    const Use& use) {
  const int64_t units = block.rows * row_units;
  if (block.contiguous) return use(units, InUnitRange<F>{base + block.first_row * row_units, f});
  const bool narrow = units < (int64_t(1) << 32);
  use(units, InRowBlock<D, F>{block, FastDivisor::make(static_cast<uint32_t>(row_units)), narrow,
                              base, f});
}

}  // namespace lattica
