#include "sim/parallel/slab_fft.hpp"

#include <fftw3.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "kernels/spectral/fft_cpu.hpp"

namespace lattica {

int64_t AxisSplit::first(int part) const {
  const int64_t base = extent / parts, extra = extent % parts;
  return part * base + std::min<int64_t>(part, extra);
}

int64_t AxisSplit::count(int part) const {
  return extent / parts + (part < extent % parts ? 1 : 0);
}

/// FFTW plans of the 1-D transforms along axis 0, in place over the columns buffer.
struct SlabFft::ColumnPlans {
  fftw_plan forward = nullptr, inverse = nullptr;
  ~ColumnPlans() {
    if (forward) fftw_destroy_plan(forward);
    if (inverse) fftw_destroy_plan(inverse);
  }
};

namespace {

int64_t checked_int(int64_t value, const char* what) {
  if (value > INT32_MAX)
    throw std::invalid_argument("SlabFft: " + std::string(what) + " " + std::to_string(value) +
                                " exceeds FFTW's 2^31 - 1");
  return value;
}

}  // namespace

SlabFft::SlabFft(Communicator& comm, const std::vector<int64_t>& dims, int batch)
    : comm_(comm), rank_(comm.rank()), ranks_(comm.size()), batch_(batch) {
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
    rows_fft_ = std::make_unique<CpuFft>(
        row_dims, static_cast<int>(checked_int(batch_ * rows(), "batch of rows")));
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
  rows_side_.resize(static_cast<size_t>(rows_total));
  columns_side_.resize(static_cast<size_t>(columns_total));
  const int64_t columns = batch_ * modes_.count(rank_);
  if (columns > 0) {
    const int length = static_cast<int>(checked_int(dims[0], "extent of axis 0"));
    const int howmany = static_cast<int>(checked_int(columns, "batch of columns"));
    columns_.resize(static_cast<size_t>(columns * dims[0]));
    auto* data = reinterpret_cast<fftw_complex*>(columns_.data());
    columns_fft_ = std::make_unique<ColumnPlans>();
    // FFTW_ESTIMATE plans without touching the buffer, which every transform then reuses.
    for (int sign : {FFTW_FORWARD, FFTW_BACKWARD}) {
      fftw_plan plan = fftw_plan_many_dft(1, &length, howmany, data, nullptr, 1, length, data,
                                          nullptr, 1, length, sign, FFTW_ESTIMATE);
      if (!plan) throw std::runtime_error("FFTW: planning the transforms along axis 0 failed");
      (sign == FFTW_FORWARD ? columns_fft_->forward : columns_fft_->inverse) = plan;
    }
  }
}

SlabFft::~SlabFft() = default;

void SlabFft::forward(const double* in, Complex* out) {
  // The rows' transform goes straight into `out`, which the columns' transform then overwrites.
  if (rows_fft_) rows_fft_->forward(in, out);
  rows_to_columns(out);
  transform_columns(true);
  columns_to_rows(out);
}

void SlabFft::inverse(const Complex* in, double* out) {
  // `in` is kept, so the rows' spectrum needs a buffer of its own (made at the first inverse).
  rows_buffer_.resize(static_cast<size_t>(local_complex_size()));
  rows_to_columns(in);
  transform_columns(false);
  columns_to_rows(rows_buffer_.data());
  if (rows_fft_) rows_fft_->inverse(rows_buffer_.data(), out);
}

void SlabFft::transform_columns(bool forward) {
  if (columns_fft_) fftw_execute(forward ? columns_fft_->forward : columns_fft_->inverse);
}

template <class F>
void SlabFft::for_rows_side(F f) const {
  const int64_t lines = batch_ * rows();  // (b, row) pairs of this rank
  for (int s = 0; s < ranks_; ++s) {
    const int64_t first = modes_.first(s), n = modes_.count(s), piece = rows_offsets_[s];
    for (int64_t line = 0; line < lines; ++line) {
      for (int64_t m = 0; m < n; ++m) f(line * row_modes_ + first + m, piece + line * n + m);
    }
  }
}

template <class F>
void SlabFft::for_columns_side(F f) const {
  const int64_t my_modes = modes_.count(rank_), length = rows_.extent;
  for (int r = 0; r < ranks_; ++r) {
    const int64_t first = rows_.first(r), n = rows_.count(r), piece = columns_offsets_[r];
    for (int64_t b = 0; b < batch_; ++b) {
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t m = 0; m < my_modes; ++m) {
          f((b * my_modes + m) * length + first + i, piece + (b * n + i) * my_modes + m);
        }
      }
    }
  }
}

void SlabFft::rows_to_columns(const Complex* rows) {
  for_rows_side([&](int64_t a, int64_t p) { rows_side_[p] = rows[a]; });
  comm_.alltoallv(rows_side_.data(), rows_counts_, rows_offsets_, columns_side_.data(),
                  columns_counts_, columns_offsets_, sizeof(Complex));
  for_columns_side([&](int64_t c, int64_t p) { columns_[c] = columns_side_[p]; });
}

void SlabFft::columns_to_rows(Complex* rows) {
  for_columns_side([&](int64_t c, int64_t p) { columns_side_[p] = columns_[c]; });
  comm_.alltoallv(columns_side_.data(), columns_counts_, columns_offsets_, rows_side_.data(),
                  rows_counts_, rows_offsets_, sizeof(Complex));
  for_rows_side([&](int64_t a, int64_t p) { rows[a] = rows_side_[p]; });
}

}  // namespace lattica
