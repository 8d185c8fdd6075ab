#pragma once
// Transposes, axis permutations and the checkerboard <-> lexicographic permutation on the host:
// the CPU backend's versions and the reference the GPU kernels (transpose.cuh) are tested
// against. Also the shape normalisation both share. No CUDA in this header.
//
// Conventions: arrays are row-major (last axis fastest). A permutation `perm` of a rank-D
// array follows numpy.transpose: output axis k is input axis perm[k], so the output has
// extents extents[perm[0]], ..., extents[perm[D-1]]. Inputs and outputs never overlap.

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/common/host_device.hpp"
#include "kernels/lattice/checkerboard.hpp"

namespace lattica {

constexpr int kMaxPermuteRank = 5;  ///< largest rank permute_axes accepts

/// A permutation after normalisation: axes of extent 1 dropped, and runs of input axes that
/// stay adjacent and in order in the output merged into one axis. What is left is the same
/// data movement with the fewest axes, e.g. [V][n] -> [n][V] for any AoS -> SoA split.
/// One spare axis lets the GPU code append an element's bytes as an axis of their own.
struct PermuteShape {
  int rank = 0;                              ///< 0 or 1: a plain copy
  int64_t extent[kMaxPermuteRank + 1] = {};  ///< input extents, all >= 2 after normalisation
  int perm[kMaxPermuteRank + 1] = {};        ///< output axis k is input axis perm[k]
  int64_t volume = 0;                        ///< number of elements (0: nothing to do)

  /// Input stride (in elements) of input axis a.
  int64_t in_stride(int a) const {
    int64_t s = 1;
    for (int b = a + 1; b < rank; ++b) s *= extent[b];
    return s;
  }
  /// Output stride (in elements) of input axis a.
  int64_t out_stride(int a) const {
    int64_t s = 1;
    for (int k = rank - 1; k >= 0 && perm[k] != a; --k) s *= extent[perm[k]];
    return s;
  }
};

/// Checks a permutation and normalises it (see PermuteShape). Throws std::invalid_argument
/// unless 1 <= rank <= kMaxPermuteRank, every extent is >= 0 and perm is a permutation of
/// 0 .. rank-1.
inline PermuteShape normalize_permutation(int rank, const int64_t* extents, const int* perm) {
  if (rank < 1 || rank > kMaxPermuteRank) {
    throw std::invalid_argument("permute_axes: rank " + std::to_string(rank) + " not in 1.." +
                                std::to_string(kMaxPermuteRank));
  }
  bool seen[kMaxPermuteRank] = {};
  PermuteShape s;
  s.volume = 1;
  for (int k = 0; k < rank; ++k) {
    if (extents[k] < 0) throw std::invalid_argument("permute_axes: negative extent");
    if (perm[k] < 0 || perm[k] >= rank || seen[perm[k]]) {
      throw std::invalid_argument("permute_axes: perm is not a permutation of 0..rank-1");
    }
    seen[perm[k]] = true;
    s.volume *= extents[k];
  }
  if (s.volume == 0) return s;

  // The axes that matter, in output order; `next[a]` is the next such input axis after a.
  int order[kMaxPermuteRank];
  int kept = 0;
  for (int k = 0; k < rank; ++k) {
    if (extents[perm[k]] > 1) order[kept++] = perm[k];
  }
  int next[kMaxPermuteRank];
  for (int a = rank - 1, following = rank; a >= 0; --a) {
    next[a] = following;
    if (extents[a] > 1) following = a;
  }
  // Group runs of consecutive input axes (in output order), remembering each group's first
  // input axis: sorting groups by it numbers the merged input axes.
  int first[kMaxPermuteRank];
  int64_t merged[kMaxPermuteRank];
  int groups = 0;
  for (int k = 0; k < kept; ++k) {
    if (k > 0 && order[k] == next[order[k - 1]]) {
      merged[groups - 1] *= extents[order[k]];
    } else {
      first[groups] = order[k];
      merged[groups++] = extents[order[k]];
    }
  }
  s.rank = groups;
  for (int g = 0; g < groups; ++g) {
    int position = 0;  // how many groups start at an earlier input axis
    for (int h = 0; h < groups; ++h) position += first[h] < first[g];
    s.perm[g] = position;
    s.extent[position] = merged[g];
  }
  return s;
}

/// out = in with its axes permuted (see the conventions above), on the host with OpenMP.
/// Precondition: as normalize_permutation; in and out hold the volume and do not overlap.
template <class T>
void permute_axes_host(const T* in, T* out, int rank, const int64_t* extents, const int* perm) {
  const PermuteShape s = normalize_permutation(rank, extents, perm);
  if (s.volume == 0) return;
  if (s.rank <= 1) {
    std::copy(in, in + s.volume, out);
    return;
  }
  // Output axis k has extent e[k] and moves the input by step[k]. Output rows (all axes but
  // the last) are taken kBlock at a time, and each row in pieces of kBlock, so a transpose
  // reads a kBlock x kBlock block of the input while it is in cache.
  constexpr int64_t kBlock = 16;
  const int r = s.rank;
  int64_t e[kMaxPermuteRank], step[kMaxPermuteRank];
  for (int k = 0; k < r; ++k) {
    e[k] = s.extent[s.perm[k]];
    step[k] = s.in_stride(s.perm[k]);
  }
  const int64_t row_length = e[r - 1], inner = step[r - 1], rows = s.volume / row_length;
#pragma omp parallel for schedule(static) if (s.volume > (1 << 16))
  for (int64_t row0 = 0; row0 < rows; row0 += kBlock) {
    const int64_t count = std::min(kBlock, rows - row0);
    int64_t from[kBlock];
    for (int64_t i = 0; i < count; ++i) {
      int64_t rest = row0 + i;
      from[i] = 0;
      for (int k = r - 2; k >= 0; --k) {
        from[i] += (rest % e[k]) * step[k];
        rest /= e[k];
      }
    }
    for (int64_t x0 = 0; x0 < row_length; x0 += kBlock) {
      const int64_t x1 = std::min(x0 + kBlock, row_length);
      for (int64_t i = 0; i < count; ++i) {
        T* line = out + (row0 + i) * row_length;
        for (int64_t x = x0; x < x1; ++x) line[x] = in[from[i] + x * inner];
      }
    }
  }
}

/// out[b][c][r] = in[b][r][c] for `batch` row-major rows x cols matrices, on the host.
/// Precondition: extents >= 0; in and out hold batch * rows * cols and do not overlap.
template <class T>
void transpose_2d_host(const T* in, T* out, int64_t batch, int64_t rows, int64_t cols) {
  const int64_t extents[3] = {batch, rows, cols};
  const int perm[3] = {0, 2, 1};
  permute_axes_host(in, out, 3, extents, perm);
}

/// The rows of a checkerboard field. A row is one line along the last axis: L_{D-1} sites in
/// lexicographic order, which are two half rows of half_last sites in storage, one in each
/// colour, interleaved pair by pair (pair k holds sites 2k and 2k+1, one of each colour).
/// Rows of several copies (replicas) stored one after another are numbered in order.
template <class Index>
struct CheckerboardRows {
  Index half_last = 0;    ///< L_{D-1} / 2, pairs per row
  Index half_volume = 0;  ///< V / 2, sites of one colour in one copy
  int axes = 0;           ///< D - 1, the axes that name a row
  Index extent[3] = {};   ///< L_0 .. L_{D-2}

  /// Rows of `lattice`. Throws std::invalid_argument unless the last extent is even and >= 2.
  template <int D>
  static CheckerboardRows make(const Checkerboard<D>& lattice) {
    if (lattice.half_last < 1 || 2 * lattice.half_last != lattice.extent[D - 1]) {
      throw std::invalid_argument("checkerboard permutation: the last extent must be even");
    }
    CheckerboardRows rows;
    rows.half_last = static_cast<Index>(lattice.half_last);
    rows.half_volume = static_cast<Index>(lattice.half_volume);
    rows.axes = D - 1;
    for (int a = 0; a < D - 1; ++a) rows.extent[a] = static_cast<Index>(lattice.extent[a]);
    return rows;
  }

  /// Parity of the coordinate sum of global row `row`, which is that of the row's first site
  /// (so pair k of the row has its colour-0 site at 2k + parity); sets `copy` to its copy.
  LATTICA_HD_INLINE int parity(Index row, Index& copy) const {
    int sum = 0;
    // A fixed trip count: constant indices keep `extent` out of GPU local memory.
    for (int a = 2; a >= 0; --a) {
      if (a >= axes) continue;
      const Index q = row / extent[a];
      sum += static_cast<int>((row - q * extent[a]) & 1);
      row = q;
    }
    copy = row;
    return sum & 1;
  }
};

/// Between checkerboard storage (colour 0, then colour 1; see checkerboard.hpp) and
/// lexicographic order, in the direction ToLexicographic says, row by row on the host with
/// OpenMP, for `copies` fields of V sites stored one after another.
template <bool ToLexicographic, int D, class T>
void checkerboard_permute_host(const Checkerboard<D>& lattice, const T* in, T* out,
                               int64_t copies) {
  const auto rows = CheckerboardRows<int64_t>::make(lattice);
  const int64_t h = rows.half_last, total_rows = copies * (rows.half_volume / h);
#pragma omp parallel for schedule(static) if (copies * lattice.volume() > (1 << 16))
  for (int64_t row = 0; row < total_rows; ++row) {
    int64_t copy;
    const int p = rows.parity(row, copy);
    const int64_t colour0 = row * h + copy * rows.half_volume, line = 2 * row * h;
    for (int64_t k = 0; k < h; ++k) {
      const int64_t storage[2] = {colour0 + k, colour0 + rows.half_volume + k};
      const int64_t lexicographic[2] = {line + 2 * k + p, line + 2 * k + 1 - p};
      for (int c = 0; c < 2; ++c) {
        if (ToLexicographic) {
          out[lexicographic[c]] = in[storage[c]];
        } else {
          out[storage[c]] = in[lexicographic[c]];
        }
      }
    }
  }
}

/// Checkerboard storage to lexicographic order on the host. Precondition: the last extent is
/// even (throws otherwise); both arrays hold copies * V values and do not overlap.
template <int D, class T>
void checkerboard_to_lexicographic_host(const Checkerboard<D>& lattice, const T* storage,
                                        T* lexicographic, int64_t copies) {
  checkerboard_permute_host<true>(lattice, storage, lexicographic, copies);
}

/// Lexicographic order to checkerboard storage; the inverse of
/// checkerboard_to_lexicographic_host, with the same preconditions.
template <int D, class T>
void lexicographic_to_checkerboard_host(const Checkerboard<D>& lattice, const T* lexicographic,
                                        T* storage, int64_t copies) {
  checkerboard_permute_host<false>(lattice, lexicographic, storage, copies);
}

}  // namespace lattica
