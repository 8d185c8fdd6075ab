#include "sim/parallel/box_slabs.hpp"

#include <cstring>

namespace lattica {

namespace {

/// f(line of the box, line of the whole lattice) for the lines of the last axis of `rank`'s
/// box interior, in the box's (lexicographic) order.
template <class F>
void for_each_box_line(const Decomposition& boxes, int rank, const F& f) {
  const std::vector<int64_t>& dims = boxes.dims();
  const std::vector<int64_t>& box = boxes.box();
  const std::vector<int64_t> origin = boxes.box_origin(rank);
  const size_t d = dims.size();
  int64_t lines = 1;
  for (size_t a = 0; a + 1 < d; ++a) lines *= box[a];
  for (int64_t line = 0; line < lines; ++line) {
    int64_t rest = line, whole = 0, stride = 1;
    for (size_t a = d - 1; a-- > 0;) {
      whole += (rest % box[a] + origin[a]) * stride;
      rest /= box[a];
      stride *= dims[a];
    }
    f(line, whole);
  }
}

}  // namespace

BoxSlabs::BoxSlabs(Communicator& comm, const Decomposition& boxes, const AxisSplit& rows, int batch,
                   size_t element_bytes)
    : comm_(comm), batch_(batch), line_(boxes.dims().back()) {
  const int ranks = comm.size(), rank = comm.rank();
  const std::vector<int64_t>& dims = boxes.dims();
  int64_t row_lines = 1;  // lines of one row of axis 0
  for (size_t a = 1; a + 1 < dims.size(); ++a) row_lines *= dims[a];
  line_bytes_ = static_cast<size_t>(line_) * element_bytes;
  to_peer_.resize(static_cast<size_t>(ranks));
  from_peer_.resize(static_cast<size_t>(ranks));
  // The slab owner of each whole line, from its row of axis 0.
  std::vector<int> owner(static_cast<size_t>(dims[0]));
  for (int p = 0; p < ranks; ++p) {
    for (int64_t i = 0; i < rows.count(p); ++i) owner[static_cast<size_t>(rows.first(p) + i)] = p;
  }
  const int64_t my_first_line = rows.first(rank) * row_lines;
  for (int p = 0; p < ranks; ++p) {
    for_each_box_line(boxes, p, [&](int64_t line, int64_t whole) {
      const int to = owner[static_cast<size_t>(whole / row_lines)];
      if (p == rank) to_peer_[static_cast<size_t>(to)].push_back(line);
      if (to == rank) from_peer_[static_cast<size_t>(p)].push_back(whole - my_first_line);
    });
  }
  box_lines_ = 0;
  for (const auto& lines : to_peer_) box_lines_ += static_cast<int64_t>(lines.size());
  slab_lines_ = rows.count(rank) * row_lines;
  int64_t box_total = 0, slab_total = 0;
  for (int p = 0; p < ranks; ++p) {
    box_counts_.push_back(batch_ * static_cast<int64_t>(to_peer_[static_cast<size_t>(p)].size()));
    box_offsets_.push_back(box_total);
    box_total += box_counts_.back();
    slab_counts_.push_back(batch_ *
                           static_cast<int64_t>(from_peer_[static_cast<size_t>(p)].size()));
    slab_offsets_.push_back(slab_total);
    slab_total += slab_counts_.back();
  }
  box_side_.resize(static_cast<size_t>(box_total) * line_bytes_);
  slab_side_.resize(static_cast<size_t>(slab_total) * line_bytes_);
}

void BoxSlabs::copy_lines(const std::vector<std::vector<int64_t>>& lines, int64_t member_lines,
                          unsigned char* array, unsigned char* side, bool pack) const {
  for (const auto& peer : lines) {
    for (int64_t b = 0; b < batch_; ++b) {
      for (int64_t line : peer) {
        unsigned char* at = array + static_cast<size_t>(b * member_lines + line) * line_bytes_;
        std::memcpy(pack ? side : at, pack ? at : side, line_bytes_);
        side += line_bytes_;
      }
    }
  }
}

void BoxSlabs::to_slab(const void* box, void* slab) {
  // Packing only reads the array.
  copy_lines(to_peer_, box_lines_, static_cast<unsigned char*>(const_cast<void*>(box)),
             box_side_.data(), true);
  comm_.alltoallv(box_side_.data(), box_counts_, box_offsets_, slab_side_.data(), slab_counts_,
                  slab_offsets_, line_bytes_);
  copy_lines(from_peer_, slab_lines_, static_cast<unsigned char*>(slab), slab_side_.data(), false);
}

void BoxSlabs::to_box(const void* slab, void* box) {
  copy_lines(from_peer_, slab_lines_, static_cast<unsigned char*>(const_cast<void*>(slab)),
             slab_side_.data(), true);
  comm_.alltoallv(slab_side_.data(), slab_counts_, slab_offsets_, box_side_.data(), box_counts_,
                  box_offsets_, line_bytes_);
  copy_lines(to_peer_, box_lines_, static_cast<unsigned char*>(box), box_side_.data(), false);
}

}  // namespace lattica
