#include "sim/decomposition.hpp"

#include <cstring>
#include <functional>

#include "sim/engine/engine.hpp"

namespace lattica {

namespace {

/// Whether `parts` boxes along an axis of extent l give even boxes of at least 2 sites.
bool divides_evenly(int64_t l, int parts) {
  return parts >= 1 && l % parts == 0 && (l / parts) % 2 == 0 && l / parts >= 2;
}

}  // namespace

std::string grid_text(const std::vector<int>& grid) {
  std::string s = "[";
  for (size_t a = 0; a < grid.size(); ++a) s += (a ? ", " : "") + std::to_string(grid[a]);
  return s + "]";
}

std::vector<int> automatic_grid(const std::vector<int64_t>& dims, int ranks) {
  const int d = static_cast<int>(dims.size());
  std::vector<int> best, grid(static_cast<size_t>(d), 1);
  double best_surface = 0;
  // Every factorization of `ranks` over the axes before the last.
  std::function<void(int, int)> choose = [&](int axis, int left) {
    if (axis == d - 1) {
      if (left != 1) return;
      double surface = 0;  // ghost sites per box: two layers per split axis
      for (int a = 0; a < d; ++a) {
        if (grid[static_cast<size_t>(a)] == 1) continue;
        double layer = 1;
        for (int b = 0; b < d; ++b) {
          if (b != a)
            layer *=
                static_cast<double>(dims[static_cast<size_t>(b)]) / grid[static_cast<size_t>(b)];
        }
        surface += 2 * layer;
      }
      // Strictly smaller only: the first found splits the slowest axes most.
      if (best.empty() || surface < best_surface) {
        best = grid;
        best_surface = surface;
      }
      return;
    }
    for (int parts = left; parts >= 1; --parts) {
      if (left % parts != 0 || !divides_evenly(dims[static_cast<size_t>(axis)], parts)) continue;
      grid[static_cast<size_t>(axis)] = parts;
      choose(axis + 1, left / parts);
    }
    grid[static_cast<size_t>(axis)] = 1;
  };
  if (d >= 2 && ranks >= 1) choose(0, ranks);
  if (d == 1 && ranks == 1) best = {1};
  return best;
}

Decomposition::Decomposition(const std::vector<int64_t>& dims, std::vector<int> grid, int ranks)
    : dims_(dims), ranks_(ranks) {
  const size_t d = dims.size();
  if (grid.empty()) {
    grid = automatic_grid(dims, ranks);
    if (grid.empty()) {
      throw InputError("parallel.grid: no grid of " + std::to_string(ranks) +
                       " boxes divides this lattice into even boxes without splitting its last "
                       "axis; choose the number of ranks or the lattice to fit");
    }
  }
  const std::string given = "parallel.grid = " + grid_text(grid);
  if (grid.size() != d) {
    throw InputError(given + ": needs one entry per lattice axis (" + std::to_string(d) + ")");
  }
  int64_t boxes = 1;
  for (size_t a = 0; a < d; ++a) {
    if (grid[a] < 1) throw InputError(given + ": entries must be at least 1");
    boxes *= grid[a];
  }
  if (grid[d - 1] != 1) {
    throw InputError(given +
                     ": the last axis cannot be split (rows along it stay whole on one "
                     "rank); split the slower axes");
  }
  if (boxes != ranks) {
    throw InputError(given + " makes " + std::to_string(boxes) + " boxes but the run has " +
                     std::to_string(ranks) +
                     " rank(s); one box per rank (start sim with mpirun -n " +
                     std::to_string(boxes) + " or srun, or leave parallel.grid out to choose it)");
  }
  for (size_t a = 0; a < d; ++a) {
    if (!divides_evenly(dims[a], grid[a])) {
      throw InputError(given + ": lattice.dims[" + std::to_string(a) + "] = " +
                       std::to_string(dims[a]) + " does not split into " + std::to_string(grid[a]) +
                       " even boxes (each box's extent must be even "
                       "and at least 2, so the checkerboard colours line up across boxes)");
    }
    box_.push_back(dims[a] / grid[a]);
  }
  grid_ = grid;
}

std::vector<int64_t> Decomposition::storage_extents() const {
  std::vector<int64_t> e = box_;
  for (size_t a = 0; a < e.size(); ++a) e[a] += split(static_cast<int>(a)) ? 2 : 0;
  return e;
}

std::vector<int> Decomposition::coordinates(int rank) const {
  std::vector<int> c(grid_.size());
  for (size_t a = grid_.size(); a-- > 0;) {
    c[a] = rank % grid_[a];
    rank /= grid_[a];
  }
  return c;
}

std::vector<int64_t> Decomposition::storage_origin(int rank) const {
  std::vector<int64_t> o = box_origin(rank);
  for (size_t a = 0; a < o.size(); ++a) {
    const int64_t ghost = split(static_cast<int>(a)) ? 1 : 0;
    o[a] = (o[a] - ghost + dims_[a]) % dims_[a];
  }
  return o;
}

std::vector<int64_t> Decomposition::box_origin(int rank) const {
  const std::vector<int> c = coordinates(rank);
  std::vector<int64_t> o(grid_.size());
  for (size_t a = 0; a < o.size(); ++a) o[a] = c[a] * box_[a];
  return o;
}

int Decomposition::neighbour(int rank, int axis, int direction) const {
  std::vector<int> c = coordinates(rank);
  const int parts = grid_[static_cast<size_t>(axis)];
  c[static_cast<size_t>(axis)] = (c[static_cast<size_t>(axis)] + direction + parts) % parts;
  int r = 0;
  for (size_t a = 0; a < c.size(); ++a) r = r * grid_[a] + c[a];
  return r;
}

template <class F>
void Decomposition::for_each_row(int rank, bool with_ghosts, const F& f) const {
  const size_t d = dims_.size();
  const std::vector<int64_t> extents = storage_extents();
  const std::vector<int64_t> origin = storage_origin(rank);
  int64_t rows = 1;
  for (size_t a = 0; a + 1 < d; ++a) rows *= extents[a];
  for (int64_t row = 0; row < rows; ++row) {
    int64_t rest = row, whole_row = 0, stride = 1;
    bool ghost = false;
    for (size_t a = d - 1; a-- > 0;) {
      const int64_t x = rest % extents[a];
      rest /= extents[a];
      if (split(static_cast<int>(a)) && (x == 0 || x == extents[a] - 1)) ghost = true;
      whole_row += ((x + origin[a]) % dims_[a]) * stride;
      stride *= dims_[a];
    }
    if (with_ghosts || !ghost) f(whole_row, row);
  }
}

void Decomposition::box_from_whole(int rank, const void* whole, void* box,
                                   size_t element_bytes) const {
  const size_t row_bytes = static_cast<size_t>(dims_.back()) * element_bytes;
  for_each_row(rank, true, [&](int64_t whole_row, int64_t row) {
    std::memcpy(static_cast<unsigned char*>(box) + row * row_bytes,
                static_cast<const unsigned char*>(whole) + whole_row * row_bytes, row_bytes);
  });
}

void Decomposition::box_into_whole(int rank, const void* box, void* whole,
                                   size_t element_bytes) const {
  const size_t row_bytes = static_cast<size_t>(dims_.back()) * element_bytes;
  for_each_row(rank, false, [&](int64_t whole_row, int64_t row) {
    std::memcpy(static_cast<unsigned char*>(whole) + whole_row * row_bytes,
                static_cast<const unsigned char*>(box) + row * row_bytes, row_bytes);
  });
}

void Decomposition::interior_of_box(int rank, const void* box, void* interior,
                                    size_t element_bytes) const {
  const size_t row_bytes = static_cast<size_t>(dims_.back()) * element_bytes;
  int64_t next = 0;  // interior rows come in the storage's order
  for_each_row(rank, false, [&](int64_t, int64_t row) {
    std::memcpy(static_cast<unsigned char*>(interior) + next++ * row_bytes,
                static_cast<const unsigned char*>(box) + row * row_bytes, row_bytes);
  });
}

void Decomposition::interior_into_box(int rank, const void* interior, void* box,
                                      size_t element_bytes) const {
  const size_t row_bytes = static_cast<size_t>(dims_.back()) * element_bytes;
  int64_t next = 0;
  for_each_row(rank, false, [&](int64_t, int64_t row) {
    std::memcpy(static_cast<unsigned char*>(box) + row * row_bytes,
                static_cast<const unsigned char*>(interior) + next++ * row_bytes, row_bytes);
  });
}

}  // namespace lattica
