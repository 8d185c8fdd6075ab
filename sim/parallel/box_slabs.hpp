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

class BoxSlabs {
 public:
  /// Moves `batch` arrays of `element_bytes` a site between this rank's box of `boxes` and its
  /// rows `rows.first(rank)` .. of axis 0 (the SlabFft of the same lattice and ranks).
  BoxSlabs(Communicator& comm, const Decomposition& boxes, const AxisSplit& rows, int batch,
           size_t element_bytes);

  /// Sites of this rank's box and of its slab, per batch member.
  int64_t box_sites() const { return box_lines_ * line_; }
  int64_t slab_sites() const { return slab_lines_ * line_; }

  /// box: [batch][box sites] -> slab: [batch][slab sites] (collective).
  void to_slab(const void* box, void* slab);
  /// The way back (collective).
  void to_box(const void* slab, void* box);

 private:
  /// Copies the listed lines of every batch member of `array` (member_lines lines a member),
  /// peer after peer, into `side` (pack) or from it.
  void copy_lines(const std::vector<std::vector<int64_t>>& lines, int64_t member_lines,
                  unsigned char* array, unsigned char* side, bool pack) const;

  Communicator& comm_;
  int64_t batch_;
  int64_t line_;       ///< sites of one line of the last axis
  size_t line_bytes_;  ///< bytes of one line
  int64_t box_lines_ = 0, slab_lines_ = 0;
  /// Per peer, in the order they travel: the lines of this rank's box that go to the peer's
  /// slab, and the lines of this rank's slab that come from the peer's box.
  std::vector<std::vector<int64_t>> to_peer_, from_peer_;
  std::vector<int64_t> box_counts_, box_offsets_, slab_counts_, slab_offsets_;  ///< in lines
  std::vector<unsigned char> box_side_, slab_side_;
};

}  // namespace lattica
