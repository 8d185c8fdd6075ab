#pragma once
// Per-site arrays moved between the boxes of a domain decomposition (sim/decomposition.hpp:
// each rank's interior, lexicographic over the box) and the slabs of a slab-decomposed FFT
// (sim/parallel/slab_fft.hpp: each rank's rows of axis 0 of the whole lattice), with one
// all-to-all each way. Boxes never split the last axis, so whole lines of it move at a time.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/communicator.hpp"
#include "sim/decomposition.hpp"
#include "sim/parallel/slab_fft.hpp"

namespace lattica {

template <class Exec>
class BoxSlabs {
 public:
  /// Moves `batch` arrays of `element_bytes` a site between this rank's box of `boxes` and its
  /// rows `rows.first(rank)` .. of axis 0 (the SlabFft of the same lattice and ranks), in the
  /// memory of the backend Exec (host memory and MPI, or device memory and NCCL). Collective.
  /// `exec` must outlive this object.
  BoxSlabs(const Exec& exec, Communicator& comm, const Decomposition& boxes, const AxisSplit& rows,
           int batch, size_t element_bytes);

  /// Whether every rank's box is its slab, line for line (boxes split axis 0 only, as the slabs
  /// do): then the moves are plain copies, and a caller may use the box as the slab.
  bool identity() const { return identity_; }
  /// Sites of this rank's box and of its slab, per batch member.
  int64_t box_sites() const { return box_lines_ * line_; }
  int64_t slab_sites() const { return slab_lines_ * line_; }

  /// box: [batch][box sites] -> slab: [batch][slab sites] (collective).
  void to_slab(const void* box, void* slab);
  /// The way back (collective).
  void to_box(const void* slab, void* box);

 private:
  /// The identity's move: one copy of every batch member.
  void copy(const void* from, void* to) const;
  /// Packs `from`'s lines listed by from_lines into the side buffer `from_side`, exchanges it
  /// into `to_side` and unpacks that to `to`'s lines listed by to_lines.
  using Side = typename Exec::template Buffer<unsigned char>;
  using Lines = typename Exec::template Buffer<int64_t>;
  void move(const void* from, Side& from_side, const Lines& from_lines,
            const std::vector<int64_t>& from_counts, const std::vector<int64_t>& from_offsets,
            void* to, Side& to_side, const Lines& to_lines, const std::vector<int64_t>& to_counts,
            const std::vector<int64_t>& to_offsets);

  const Exec& exec_;
  Communicator& comm_;
  int64_t batch_;
  int64_t line_;       ///< sites of one line of the last axis
  size_t line_bytes_;  ///< bytes of one line
  int64_t box_lines_ = 0, slab_lines_ = 0;
  bool identity_ = false;
  std::vector<int64_t> box_counts_, box_offsets_, slab_counts_, slab_offsets_;  ///< in lines
  /// For every line of the side buffers, in the order they travel (peer, batch member, line):
  /// its line in the box array ([batch][box lines]) and in the slab array.
  Lines box_line_of_side_, slab_line_of_side_;
  Side box_side_, slab_side_;
};

}  // namespace lattica
