#pragma once
// Definitions of SlabFft (sim/parallel/slab_fft.hpp); only the files that instantiate it for a
// backend include this (slab_fft.cpp: CpuExec, parallel_cuda.cu: CudaExec).

#include <stdexcept>
#include <string>

#include "sim/parallel/slab_fft.hpp"

namespace lattica {

namespace slab_fft_detail {

inline int checked_int(int64_t value, const char* what) {
  if (value > INT32_MAX)
    throw std::invalid_argument("SlabFft: " + std::string(what) + " " + std::to_string(value) +
                                " exceeds 2^31 - 1");
  return static_cast<int>(value);
}

/// cudaMemcpy2D takes pitches up to the device's limit (2^31 - 1 bytes on current GPUs).
constexpr size_t kMaxCopyPitch = size_t(1) << 30;

}  // namespace slab_fft_detail

template <class Exec>
SlabFft<Exec>::SlabFft(const Exec& exec, Communicator& comm, const std::vector<int64_t>& dims,
                       int batch)
    : exec_(exec), comm_(comm), rank_(comm.rank()), ranks_(comm.size()), batch_(batch) {
  if (dims.size() < 2) throw std::invalid_argument("SlabFft: needs 2 or more axes");
  for (int64_t l : dims) {
    if (l < 1) throw std::invalid_argument("SlabFft: extent " + std::to_string(l) + " below 1");
  }
  if (batch < 1) throw std::invalid_argument("SlabFft: batch " + std::to_string(batch));
  const std::vector<int64_t> row_dims(dims.begin() + 1, dims.end());
  row_real_ = 1;
  for (int64_t l : row_dims) row_real_ *= l;
  row_modes_ = half_spectrum_size(row_dims.data(), static_cast<int>(row_dims.size()));
  rows_ = {dims[0], ranks_};
  modes_ = {row_modes_, ranks_};
  if (rows() > 0) {
    rows_fft_ =
        exec.make_fft(row_dims, slab_fft_detail::checked_int(batch_ * rows(), "batch of rows"));
  }
  int64_t rows_total = 0, columns_total = 0;
  for (int p = 0; p < ranks_; ++p) {
    rows_counts_.push_back(batch_ * rows() * modes_.count(p));
    rows_offsets_.push_back(rows_total);
    rows_total += rows_counts_.back();
    columns_counts_.push_back(batch_ * rows_.count(p) * modes_.count(rank_));
    columns_offsets_.push_back(columns_total);
    columns_total += columns_counts_.back();
  }
  rows_side_ = exec.template allocate<Complex>(rows_total);
  if (batch_ > 1) columns_side_ = exec.template allocate<Complex>(columns_total);
  const int64_t my_modes = modes_.count(rank_);
  if (my_modes > 0) {
    // The columns go into the spectrum's own buffer when they fit (even splits: always), so a
    // rank holds one half spectrum of scratch (rows_side_), not two.
    if (!slab_columns_fit(dims, rank_, ranks_))
      columns_ = exec.template allocate<Complex>(batch_ * dims[0] * my_modes);
    // A CPU plan is made on an array of the columns' shape, which FFTW_ESTIMATE leaves
    // untouched (and never keeps): rows_side_ serves when the columns have no buffer.
    Complex* plan_on = columns_.size() > 0 ? columns_.data() : rows_side_.data();
    columns_fft_ = exec.make_lines_fft(dims[0], my_modes, plan_on);
  }
}

template <class Exec>
SlabFft<Exec>::~SlabFft() = default;

template <class Exec>
void SlabFft<Exec>::forward(const double* in, Complex* out) {
  // The rows' transform goes straight into `out`, which then holds the columns, and at last the
  // spectrum.
  if (rows_fft_) rows_fft_->forward(in, out);
  Complex* columns = columns_in(out);
  rows_to_columns(out, columns);
  transform_columns(columns, true);
  columns_to_rows(columns, out);
}

template <class Exec>
void SlabFft<Exec>::inverse(const Complex* in, double* out) {
  // `in` is kept, so the rows' spectrum needs a buffer of its own (made at the first inverse).
  if (rows_buffer_.size() != local_complex_size())
    rows_buffer_ = exec_.template allocate<Complex>(local_complex_size());
  Complex* columns = columns_in(rows_buffer_.data());
  rows_to_columns(in, columns);
  transform_columns(columns, false);
  columns_to_rows(columns, rows_buffer_.data());
  if (rows_fft_) rows_fft_->inverse_overwriting(rows_buffer_.data(), out);
}

template <class Exec>
void SlabFft<Exec>::inverse_overwriting(Complex* in, double* out) {
  Complex* columns = columns_in(in);
  rows_to_columns(in, columns);
  transform_columns(columns, false);
  columns_to_rows(columns, in);
  if (rows_fft_) rows_fft_->inverse_overwriting(in, out);
}

template <class Exec>
void SlabFft<Exec>::transform_columns(Complex* columns, bool forward) {
  if (!columns_fft_) return;
  const int64_t member = rows_.extent * modes_.count(rank_);
  for (int64_t b = 0; b < batch_; ++b) {
    Complex* data = columns + b * member;
    forward ? columns_fft_->forward(data) : columns_fft_->inverse(data);
  }
}

template <class Exec>
void SlabFft<Exec>::copy_runs(void* dst, size_t dst_pitch, const void* src, size_t src_pitch,
                              size_t width, int64_t count) const {
  if (width == 0 || count == 0) return;
  if (count == 1 || (dst_pitch == width && src_pitch == width))
    return exec_.copy_bytes(dst, src, width * static_cast<size_t>(count));
  if (dst_pitch <= slab_fft_detail::kMaxCopyPitch && src_pitch <= slab_fft_detail::kMaxCopyPitch)
    return exec_.copy_rows(dst, dst_pitch, src, src_pitch, width, count);
  for (int64_t k = 0; k < count; ++k) {
    exec_.copy_bytes(static_cast<char*>(dst) + k * dst_pitch,
                     static_cast<const char*>(src) + k * src_pitch, width);
  }
}

template <class Exec>
void SlabFft<Exec>::exchange(const Complex* send, const std::vector<int64_t>& send_counts,
                             const std::vector<int64_t>& send_offsets, Complex* receive,
                             const std::vector<int64_t>& receive_counts,
                             const std::vector<int64_t>& receive_offsets) {
  if (ranks_ > 1) {
    return comm_.alltoallv(send, send_counts, send_offsets, receive, receive_counts,
                           receive_offsets, sizeof(Complex), exec_.side_stream());
  }
  // One rank: its piece to itself, copied on the side stream as the packing is.
  exec_.copy_bytes(receive + receive_offsets[0], send + send_offsets[0],
                   static_cast<size_t>(send_counts[0]) * sizeof(Complex));
}

// Both directions run on the backend's side stream (where copy_rows and copy_bytes queue their
// copies), after the main stream's work and before the main stream's next.
template <class Exec>
void SlabFft<Exec>::rows_to_columns(const Complex* rows, Complex* columns) {
  constexpr size_t c = sizeof(Complex);
  const int64_t lines = batch_ * this->rows(), my_modes = modes_.count(rank_);
  const size_t column_pitch = static_cast<size_t>(rows_.extent * my_modes) * c;
  exec_.side_waits_for_main();
  for (int s = 0; s < ranks_; ++s) {  // [line][the peer's modes] for each peer
    const size_t width = static_cast<size_t>(modes_.count(s)) * c;
    copy_runs(rows_side_.data() + rows_offsets_[s], width, rows + modes_.first(s),
              static_cast<size_t>(row_modes_) * c, width, lines);
  }
  // `rows` may be `columns`: it is packed before the exchange writes the columns.
  exchange(rows_side_.data(), rows_counts_, rows_offsets_, columns_side(columns), columns_counts_,
           columns_offsets_);
  for (int r = 0; r < ranks_ && batch_ > 1; ++r) {  // the peer's [b][row][my modes] into columns
    const size_t width = static_cast<size_t>(rows_.count(r) * my_modes) * c;
    copy_runs(columns + rows_.first(r) * my_modes, column_pitch,
              columns_side_.data() + columns_offsets_[r], width, width, batch_);
  }
  exec_.main_waits_for_side();
}

template <class Exec>
void SlabFft<Exec>::columns_to_rows(const Complex* columns, Complex* rows) {
  constexpr size_t c = sizeof(Complex);
  const int64_t lines = batch_ * this->rows(), my_modes = modes_.count(rank_);
  const size_t column_pitch = static_cast<size_t>(rows_.extent * my_modes) * c;
  exec_.side_waits_for_main();
  for (int r = 0; r < ranks_ && batch_ > 1; ++r) {
    const size_t width = static_cast<size_t>(rows_.count(r) * my_modes) * c;
    copy_runs(columns_side_.data() + columns_offsets_[r], width,
              columns + rows_.first(r) * my_modes, column_pitch, width, batch_);
  }
  // `columns` may be `rows`: the exchange has read them before the unpacking writes the rows.
  exchange(batch_ == 1 ? columns : columns_side_.data(), columns_counts_, columns_offsets_,
           rows_side_.data(), rows_counts_, rows_offsets_);
  for (int s = 0; s < ranks_; ++s) {
    const size_t width = static_cast<size_t>(modes_.count(s)) * c;
    copy_runs(rows + modes_.first(s), static_cast<size_t>(row_modes_) * c,
              rows_side_.data() + rows_offsets_[s], width, width, lines);
  }
  exec_.main_waits_for_side();
}

}  // namespace lattica
