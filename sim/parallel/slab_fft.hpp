#pragma once
// A distributed real <-> complex FFT over the ranks of a run: the lattice cut into slabs of
// axis 0, one per rank, with the single-process FFT's conventions (kernels/spectral/fft_cpu.hpp:
// unnormalised, row-major, half spectrum on the last axis). Each rank holds the rows of axis 0
// of the field and of the spectrum that it owns; nothing is gathered.

#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "kernels/spectral/complex.hpp"
#include "sim/communicator.hpp"

namespace lattica {

/// An axis cut into near-equal consecutive parts: the first (extent % parts) get one more.
struct AxisSplit {
  int64_t extent = 0;
  int parts = 1;
  int64_t first(int part) const;  ///< first index of `part`
  int64_t count(int part) const;  ///< indices in `part` (0 when parts > extent for some)
};

/// Whether rank `rank` of `ranks` holds a slab FFT's columns (every row of axis 0, its share
/// of the rows' half-spectrum modes) in the buffer of its rows' spectrum: always when both
/// split evenly. Where not, SlabFft keeps a buffer for them.
bool slab_columns_fit(const std::vector<int64_t>& dims, int rank, int ranks);

/// Batched transforms of a lattice of extents `dims` (2 or more axes) decomposed into slabs of
/// axis 0 over the ranks of `comm`, in the memory of the backend Exec (CpuExec: host memory and
/// MPI; CudaExec: device memory and NCCL). forward: a local FFT over axes 1.. of the rank's
/// rows, an all-to-all to slabs of the half spectrum's other modes, the FFT along axis 0, and
/// the all-to-all back, so the spectrum comes out in the rows of the input. Any extents and rank
/// counts work; a rank beyond the extent of axis 0 holds no rows but takes part.
template <class Exec>
class SlabFft {
 public:
  /// Plans `batch` transforms; collective only in use (forward, inverse). Throws
  /// std::invalid_argument for fewer than 2 axes, an extent below 1 or a batch below 1.
  /// `exec` must outlive this object.
  SlabFft(const Exec& exec, Communicator& comm, const std::vector<int64_t>& dims, int batch);
  ~SlabFft();
  SlabFft(const SlabFft&) = delete;
  SlabFft& operator=(const SlabFft&) = delete;

  /// The rows of axis 0 this rank holds, of the field and of the spectrum alike.
  int64_t first_row() const { return rows_.first(rank_); }
  /// Every rank's rows of axis 0.
  const AxisSplit& row_split() const { return rows_; }
  int64_t rows() const { return rows_.count(rank_); }
  /// Elements of this rank's field, [batch][rows()][dims[1]]...[dims[d-1]], and spectrum,
  /// [batch][rows()][dims[1]]...[dims[d-1] / 2 + 1].
  int64_t local_real_size() const { return batch_ * rows() * row_real_; }
  int64_t local_complex_size() const { return batch_ * rows() * row_modes_; }

  /// out = this rank's rows of sum_x in(x) exp(-i k.x) for every batch member (collective;
  /// asynchronous on a GPU, like the backend's FFT).
  void forward(const double* in, Complex* out);
  /// out = this rank's rows of sum_k in(k) exp(+i k.x) over the Hermitian spectrum (collective;
  /// the single-process inverse, so inverse(forward(f)) = V f). in is kept.
  void inverse(const Complex* in, double* out);
  /// The same, overwriting `in` (no buffer of the rows' spectrum): for a spectrum no longer
  /// needed.
  void inverse_overwriting(Complex* in, double* out);

 private:
  /// The spectrum from rows (this rank's, [b][row][mode]) to columns ([b][every row of axis
  /// 0][this rank's modes]), and back: the two all-to-all exchanges, with their packing. The
  /// columns may share the rows' buffer.
  void rows_to_columns(const Complex* rows, Complex* columns);
  void columns_to_rows(const Complex* columns, Complex* rows);
  /// The all-to-all of the pieces (a copy on one rank, which needs no communicator).
  void exchange(const Complex* send, const std::vector<int64_t>& send_counts,
                const std::vector<int64_t>& send_offsets, Complex* receive,
                const std::vector<int64_t>& receive_counts,
                const std::vector<int64_t>& receive_offsets);
  /// The 1-D transforms along axis 0 of `columns`, in place (forward: exp(-i k x)).
  void transform_columns(Complex* columns, bool forward);
  /// Where the columns of a transform of `spectrum` (local_complex_size() elements) go: the
  /// spectrum's buffer itself when they fit, else columns_.
  Complex* columns_in(Complex* spectrum) {
    return columns_.size() > 0 ? columns_.data() : spectrum;
  }
  /// Where the pieces of the columns side are received: the columns themselves for a batch of 1
  /// (the pieces, [row][my modes] for the peers in rank order, are their rows), else
  /// columns_side_.
  Complex* columns_side(Complex* columns) { return batch_ == 1 ? columns : columns_side_.data(); }
  /// `count` runs of `width` bytes, every src_pitch bytes of src to every dst_pitch of dst.
  void copy_runs(void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t width,
                 int64_t count) const;

  const Exec& exec_;
  Communicator& comm_;
  int rank_, ranks_;
  int64_t batch_;
  AxisSplit rows_;                                ///< axis 0 over the ranks
  AxisSplit modes_;                               ///< the half spectrum of axes 1.. over the ranks
  int64_t row_real_;                              ///< real sites of one row of axis 0
  int64_t row_modes_;                             ///< half-spectrum modes of one row
  std::unique_ptr<typename Exec::Fft> rows_fft_;  ///< over axes 1.. of this rank's rows, or null
  std::unique_ptr<typename Exec::LinesFft> columns_fft_;  ///< along axis 0; null without modes
  /// Pieces exchanged with each rank: the rows side (this rank's rows, the peer's modes) and
  /// the columns side (the peer's rows, this rank's modes), in elements.
  std::vector<int64_t> rows_counts_, rows_offsets_, columns_counts_, columns_offsets_;
  /// rows_side_: the packed pieces of this rank's rows; columns_: the columns, only where they
  /// exceed the spectrum's buffer (uneven splits); columns_side_: the received pieces (batch > 1).
  typename Exec::template Buffer<Complex> rows_buffer_, columns_, rows_side_, columns_side_;
};

/// The distributed FFTs of one lattice over one set of ranks, one per batch size, made at first
/// use and shared by every user on the rank (the spectra, Langevin/MALA): their buffers are
/// scratch between calls on the backend's streams, so one set per rank serves them all.
template <class Exec>
class SlabFfts {
 public:
  /// `exec` and `comm` must outlive this object.
  SlabFfts(const Exec& exec, Communicator& comm, std::vector<int64_t> dims)
      : exec_(exec), comm_(comm), dims_(std::move(dims)) {}
  SlabFft<Exec>& operator()(int batch) {
    std::unique_ptr<SlabFft<Exec>>& fft = ffts_[batch];
    if (!fft) fft = std::make_unique<SlabFft<Exec>>(exec_, comm_, dims_, batch);
    return *fft;
  }

 private:
  const Exec& exec_;
  Communicator& comm_;
  std::vector<int64_t> dims_;
  std::map<int, std::unique_ptr<SlabFft<Exec>>> ffts_;
};

}  // namespace lattica
