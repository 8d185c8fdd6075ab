#pragma once
// Domain decomposition of the global lattice into equal boxes, one per rank (issue 8): the
// grid of boxes, each rank's place in it, its neighbours, and copies between whole-lattice and
// box configurations (lexicographic, row by row). The last axis is never split: rows stay
// whole, and with them the random-number groups of the Ising kernels and the packed words.
// A box's storage adds one ghost layer on each side of every split axis
// (Checkerboard::make_box with origin = box origin - 1 there).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace lattica {

class Decomposition {
 public:
  /// Checks `grid` (boxes per axis; empty: chosen here) against the lattice and the number of
  /// ranks; throws InputError naming parallel.grid, its value and the reason.
  Decomposition(const std::vector<int64_t>& dims, std::vector<int> grid, int ranks);

  int ranks() const { return ranks_; }
  const std::vector<int>& grid() const { return grid_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  /// Interior extents of every box.
  const std::vector<int64_t>& box() const { return box_; }
  /// Extents of a box's storage: the interior plus a ghost layer on each side of split axes.
  std::vector<int64_t> storage_extents() const;
  /// Global coordinate of storage coordinate 0 of `rank`'s box (modulo the lattice).
  std::vector<int64_t> storage_origin(int rank) const;
  /// Global coordinate of the first interior site of `rank`'s box.
  std::vector<int64_t> box_origin(int rank) const;
  /// The box's place in the grid (row-major over the grid, last axis fastest, like sites).
  std::vector<int> coordinates(int rank) const;
  /// The rank one box along `axis` in `direction` (+1 or -1), periodically.
  int neighbour(int rank, int axis, int direction) const;
  bool split(int axis) const { return grid_[static_cast<size_t>(axis)] > 1; }

  /// Copies `rank`'s box out of a whole-lattice configuration (lexicographic, element_bytes a
  /// site) into its storage-shaped lexicographic array, ghost layers included.
  void box_from_whole(int rank, const void* whole, void* box, size_t element_bytes) const;
  /// Writes the interior of `rank`'s storage-shaped lexicographic array into the whole lattice.
  void box_into_whole(int rank, const void* box, void* whole, size_t element_bytes) const;
  /// Copies the interior of `rank`'s storage-shaped lexicographic array into `interior`
  /// (lexicographic over box()).
  void interior_of_box(int rank, const void* box, void* interior, size_t element_bytes) const;
  /// The way back: `interior` into the interior of the storage-shaped array (ghosts untouched).
  void interior_into_box(int rank, const void* interior, void* box, size_t element_bytes) const;

 private:
  /// Calls f(whole row, storage row) for each row of the box's storage (interior rows only
  /// when !with_ghosts), rows counted over axes < D-1.
  template <class F>
  void for_each_row(int rank, bool with_ghosts, const F& f) const;

  std::vector<int64_t> dims_;
  std::vector<int> grid_;
  std::vector<int64_t> box_;
  int ranks_;
};

/// Boxes per axis for `ranks` boxes when parallel.grid is not given: the smallest halo surface
/// over the grids that divide the lattice into even boxes, splitting the slower axes on ties;
/// empty when none exists.
std::vector<int> automatic_grid(const std::vector<int64_t>& dims, int ranks);

/// "[a, b, c]".
std::string grid_text(const std::vector<int>& grid);

}  // namespace lattica
