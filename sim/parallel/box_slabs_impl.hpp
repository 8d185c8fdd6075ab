#pragma once
// Definitions of BoxSlabs (sim/parallel/box_slabs.hpp); only the files that instantiate it for a
// backend include this (box_slabs.cpp: CpuExec, parallel_cuda.cu: CudaExec).

#include "kernels/transpose/move_lines.hpp"
#include "sim/parallel/box_slabs.hpp"

namespace lattica {

namespace box_slabs_detail {

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

}  // namespace box_slabs_detail

template <class Exec>
BoxSlabs<Exec>::BoxSlabs(const Exec& exec, Communicator& comm, const Decomposition& boxes,
                         const AxisSplit& rows, int batch, size_t element_bytes)
    : exec_(exec), comm_(comm), batch_(batch), line_(boxes.dims().back()) {
  const int ranks = comm.size(), rank = comm.rank();
  const std::vector<int64_t>& dims = boxes.dims();
  int64_t row_lines = 1;  // lines of one row of axis 0
  for (size_t a = 1; a + 1 < dims.size(); ++a) row_lines *= dims[a];
  line_bytes_ = static_cast<size_t>(line_) * element_bytes;
  // Per peer, in the order they travel: the lines of this rank's box that go to the peer's
  // slab, and the lines of this rank's slab that come from the peer's box.
  std::vector<std::vector<int64_t>> to_peer(static_cast<size_t>(ranks));
  std::vector<std::vector<int64_t>> from_peer(static_cast<size_t>(ranks));
  // The slab owner of each whole line, from its row of axis 0.
  std::vector<int> owner(static_cast<size_t>(dims[0]));
  for (int p = 0; p < ranks; ++p) {
    for (int64_t i = 0; i < rows.count(p); ++i) owner[static_cast<size_t>(rows.first(p) + i)] = p;
  }
  const int64_t my_first_line = rows.first(rank) * row_lines;
  for (int p = 0; p < ranks; ++p) {
    box_slabs_detail::for_each_box_line(boxes, p, [&](int64_t line, int64_t whole) {
      const int to = owner[static_cast<size_t>(whole / row_lines)];
      if (p == rank) to_peer[static_cast<size_t>(to)].push_back(line);
      if (to == rank) from_peer[static_cast<size_t>(p)].push_back(whole - my_first_line);
    });
  }
  for (const auto& lines : to_peer) box_lines_ += static_cast<int64_t>(lines.size());
  slab_lines_ = rows.count(rank) * row_lines;
  const auto in_order = [](const std::vector<int64_t>& lines, int64_t count) {
    if (static_cast<int64_t>(lines.size()) != count) return false;
    for (int64_t i = 0; i < count; ++i) {
      if (lines[static_cast<size_t>(i)] != i) return false;
    }
    return true;
  };
  const size_t me = static_cast<size_t>(rank);
  const bool mine = box_lines_ == slab_lines_ && in_order(to_peer[me], box_lines_) &&
                    in_order(from_peer[me], slab_lines_);
  // Every rank's (the all-to-all is collective): then nothing is packed or exchanged.
  identity_ = comm.max(mine ? 0 : 1) == 0;
  if (identity_) return;
  // The side buffers' lines: peer after peer, each peer's lines for every batch member.
  const auto side_lines = [&](const std::vector<std::vector<int64_t>>& per_peer,
                              int64_t member_lines, std::vector<int64_t>& counts,
                              std::vector<int64_t>& offsets) {
    std::vector<int64_t> line_of_side;
    for (const auto& lines : per_peer) {
      offsets.push_back(static_cast<int64_t>(line_of_side.size()));
      for (int64_t b = 0; b < batch_; ++b) {
        for (int64_t line : lines) line_of_side.push_back(b * member_lines + line);
      }
      counts.push_back(static_cast<int64_t>(line_of_side.size()) - offsets.back());
    }
    return line_of_side;
  };
  const std::vector<int64_t> box_side = side_lines(to_peer, box_lines_, box_counts_, box_offsets_);
  const std::vector<int64_t> slab_side =
      side_lines(from_peer, slab_lines_, slab_counts_, slab_offsets_);
  const auto upload = [&](const std::vector<int64_t>& lines) {
    auto buffer = exec.template allocate<int64_t>(static_cast<int64_t>(lines.size()));
    if (!lines.empty()) exec.copy_to_device(lines.data(), buffer);
    return buffer;
  };
  box_line_of_side_ = upload(box_side);
  slab_line_of_side_ = upload(slab_side);
  box_side_ =
      exec.template allocate<unsigned char>(static_cast<int64_t>(box_side.size() * line_bytes_));
  slab_side_ =
      exec.template allocate<unsigned char>(static_cast<int64_t>(slab_side.size() * line_bytes_));
}

template <class Exec>
void BoxSlabs<Exec>::copy(const void* from, void* to) const {
  if (from == to) return;
  exec_.side_waits_for_main();  // copy_bytes queues on the side stream
  exec_.copy_bytes(to, from, static_cast<size_t>(batch_ * box_lines_) * line_bytes_);
  exec_.main_waits_for_side();
}

template <class Exec>
void BoxSlabs<Exec>::move(const void* from, Side& from_side, const Lines& from_lines,
                          const std::vector<int64_t>& from_counts,
                          const std::vector<int64_t>& from_offsets, void* to, Side& to_side,
                          const Lines& to_lines, const std::vector<int64_t>& to_counts,
                          const std::vector<int64_t>& to_offsets) {
  // Packing only reads `from`.
  move_lines(exec_, from_side.data(), const_cast<void*>(from), from_lines.data(), from_lines.size(),
             line_bytes_, true);
  exec_.side_waits_for_main();
  comm_.alltoallv(from_side.data(), from_counts, from_offsets, to_side.data(), to_counts,
                  to_offsets, line_bytes_, exec_.side_stream());
  exec_.main_waits_for_side();
  move_lines(exec_, to_side.data(), to, to_lines.data(), to_lines.size(), line_bytes_, false);
}

template <class Exec>
void BoxSlabs<Exec>::to_slab(const void* box, void* slab) {
  if (identity_) return copy(box, slab);
  move(box, box_side_, box_line_of_side_, box_counts_, box_offsets_, slab, slab_side_,
       slab_line_of_side_, slab_counts_, slab_offsets_);
}

template <class Exec>
void BoxSlabs<Exec>::to_box(const void* slab, void* box) {
  if (identity_) return copy(slab, box);
  move(slab, slab_side_, slab_line_of_side_, slab_counts_, slab_offsets_, box, box_side_,
       box_line_of_side_, box_counts_, box_offsets_);
}

}  // namespace lattica
