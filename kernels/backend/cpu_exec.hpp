#pragma once
// CPU execution policy: runs a site functor over an index range with OpenMP.

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kernels/backend/exec_options.hpp"
#include "kernels/spectral/fft_cpu.hpp"
#include "kernels/transpose/transpose.hpp"

namespace lattica {

/// Host memory owned by the CPU backend.
template <class T>
class HostBuffer {
 public:
  explicit HostBuffer(int64_t n = 0) : data_(static_cast<size_t>(n)) {}
  T* data() { return data_.data(); }
  const T* data() const { return data_.data(); }
  int64_t size() const { return static_cast<int64_t>(data_.size()); }

 private:
  std::vector<T> data_;
};

/// The completion of a copy to host memory: on the CPU every copy is complete at once.
struct CopyDoneAtOnce {};

class CpuExec {
 public:
  template <class T>
  using Buffer = HostBuffer<T>;
  template <class T>
  using HostFrame = HostBuffer<T>;
  using CopyDone = CopyDoneAtOnce;

  static constexpr const char* kBackendName = "cpu";
  /// Threads that take one task together when a functor is written for it (one thread).
  static constexpr int kWarpLanes = 1;
  /// Whether site functors should index in 32 bits where the lattice allows: no, a CPU does
  /// 64-bit arithmetic as fast.
  static constexpr bool kNarrowSiteIndices = false;

  /// threads = 0 uses OpenMP's default (OMP_NUM_THREADS or the core count).
  explicit CpuExec(int threads) : threads_(threads > 0 ? threads : omp_get_max_threads()) {}
  explicit CpuExec(const ExecOptions& options) : CpuExec(options.cpu_threads) {}

  /// Sum of f(i) over [0, n) stored into *result.
  template <class T, class F>
  void reduce_sum_into(int64_t n, const F& f, T* result) const {
    *result = reduce_sum<T>(n, f);
  }

  /// results[s] = the sum of f(s, i) over [0, n) for s in [0, segments), each as
  /// reduce_sum_into of that segment alone.
  template <class T, class F>
  void reduce_segments_into(int64_t segments, int64_t n, const F& f, T* results) const {
    for (int64_t s = 0; s < segments; ++s) {
      results[s] = reduce_sum<T>(n, [&](int64_t i) { return f(s, i); });
    }
  }

  /// *result += the sum of f(i) over [0, n) (CudaExec's exact integer accumulation).
  template <class T, class F>
  void accumulate_exact_into(int64_t n, const F& f, T* result) const {
    *result = *result + reduce_sum<T>(n, f);
  }

  /// results[s] += the sum of f(s, i) over [0, n) for s in [0, segments) (CudaExec's exact
  /// integer accumulation).
  template <class T, class F>
  void accumulate_exact_segments_into(int64_t segments, int64_t n, const F& f, T* results) const {
    for (int64_t s = 0; s < segments; ++s) {
      results[s] = results[s] + reduce_sum<T>(n, [&](int64_t i) { return f(s, i); });
    }
  }

  /// Sets the first n entries of a buffer (all when negative) to zero bytes.
  template <class T>
  void zero(Buffer<T>& buffer, int64_t n = -1) const {
    std::memset(static_cast<void*>(buffer.data()), 0,
                static_cast<size_t>(n < 0 ? buffer.size() : n) * sizeof(T));
  }

  /// counts[b] = #{i in [0, n) : bin_of(i) == b} for b in [0, bins); bin_of may return -1 to
  /// skip. counts holds at least `bins` entries. Per-thread histograms, added at the end.
  template <class F>
  void histogram(int64_t n, const F& bin_of, int64_t bins,
                 Buffer<unsigned long long>& counts) const {
    std::fill(counts.data(), counts.data() + bins, 0ULL);
#pragma omp parallel num_threads(threads_)
    {
      std::vector<unsigned long long> local(static_cast<size_t>(bins), 0);
#pragma omp for schedule(static)
      for (int64_t i = 0; i < n; ++i) {
        const int64_t b = bin_of(i);
        if (b >= 0) ++local[static_cast<size_t>(b)];
      }
#pragma omp critical
      for (int64_t b = 0; b < bins; ++b) counts.data()[b] += local[static_cast<size_t>(b)];
    }
  }

  template <class T>
  Buffer<T> allocate(int64_t n) const {
    return Buffer<T>(n);
  }

  /// Calls f(i) for i in [0, n); iterations must be independent.
  template <class F>
  void for_each(int64_t n, const F& f) const {
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (int64_t i = 0; i < n; ++i) f(i);
  }

  /// Sum of f(i) over [0, n). Partial sums over fixed chunks, added in chunk order, so the
  /// result does not depend on the thread count even for floating-point T.
  template <class T, class F>
  T reduce_sum(int64_t n, const F& f) const {
    constexpr int64_t chunk = 1 << 14;
    const int64_t chunks = (n + chunk - 1) / chunk;
    if (chunks <= 1) {
      // One chunk (a small lattice, summed once per replica): the same additions without a
      // parallel region, whose start costs more than the sum (far more on busy cores).
      T sum{};
      for (int64_t i = 0; i < n; ++i) sum = sum + f(i);
      return T{} + sum;
    }
    std::vector<T> partial(static_cast<size_t>(chunks), T{});
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (int64_t c = 0; c < chunks; ++c) {
      T sum{};
      const int64_t end = std::min(n, (c + 1) * chunk);
      for (int64_t i = c * chunk; i < end; ++i) sum = sum + f(i);
      partial[static_cast<size_t>(c)] = sum;
    }
    T total{};
    for (const T& p : partial) total = total + p;
    return total;
  }

  /// Copies host data into the first `count` entries of a buffer (all when negative).
  template <class T>
  void copy_to_device(const T* from, Buffer<T>& to, int64_t count = -1) const {
    std::copy(from, from + (count < 0 ? to.size() : count), to.data());
  }

  /// Copies the first `count` entries (all when negative) of a buffer to the host.
  template <class T>
  void copy_to_host(const Buffer<T>& from, T* to, int64_t count = -1) const {
    std::copy(from.data(), from.data() + (count < 0 ? from.size() : count), to);
  }

  /// The CPU side of CudaExec's overlapped copies: the copy is done when this returns.
  template <class T>
  void copy_to_host_async(const Buffer<T>& from, T* to, int64_t n, CopyDone&) const {
    std::copy(from.data(), from.data() + n, to);
  }
  void wait(const CopyDone&) const {}

  /// The CPU has one lane of work: halo exchanges (sim/engine/decomposed_box.hpp) run in order.
  void* side_stream() const { return nullptr; }
  void side_waits_for_main() const {}
  void main_waits_for_side() const {}
  /// `rows` runs of `width` bytes from src (every src_pitch bytes) to dst (every dst_pitch).
  void copy_rows(void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t width,
                 int64_t rows) const {
    for (int64_t r = 0; r < rows; ++r) {
      std::memcpy(static_cast<char*>(dst) + r * dst_pitch,
                  static_cast<const char*>(src) + r * src_pitch, width);
    }
  }
  /// `bytes` bytes from src to dst (the side lane of CudaExec's copy_bytes).
  void copy_bytes(void* dst, const void* src, size_t bytes) const {
    if (bytes > 0) std::memmove(dst, src, bytes);
  }
  void order_after(const CopyDone&) const {}

  /// For b < batch: C_b = A_b * B, column-major (BLAS) layout: A_b is m x k at a + b * stride_a,
  /// B is k x n (shared), C_b is m x n at c + b * m * n. Plain loops, each entry summed in order.
  void matmul_batched(int64_t m, int64_t n, int64_t k, const double* a, int64_t stride_a,
                      const double* b, double* c, int64_t batch) const {
#pragma omp parallel for collapse(2) schedule(static) num_threads(threads_)
    for (int64_t q = 0; q < batch; ++q) {
      for (int64_t j = 0; j < n; ++j) {
        const double* a_q = a + q * stride_a;
        double* c_qj = c + q * m * n + j * m;
        for (int64_t i = 0; i < m; ++i) c_qj[i] = 0.0;
        for (int64_t l = 0; l < k; ++l) {
          const double b_lj = b[j * k + l];
          for (int64_t i = 0; i < m; ++i) c_qj[i] += a_q[l * m + i] * b_lj;
        }
      }
    }
  }

  /// `copies` fields in checkerboard storage to lexicographic order (kernels/transpose/).
  template <int D, class T>
  void to_lexicographic(const Checkerboard<D>& lattice, const T* from, T* to,
                        int64_t copies) const {
    checkerboard_to_lexicographic_host(lattice, from, to, copies);
  }
  /// The inverse of to_lexicographic.
  template <int D, class T>
  void from_lexicographic(const Checkerboard<D>& lattice, const T* from, T* to,
                          int64_t copies) const {
    lexicographic_to_checkerboard_host(lattice, from, to, copies);
  }

  using Fft = CpuFft;
  /// FFTs of `batch` real arrays of extents dims (FFTW).
  std::unique_ptr<Fft> make_fft(const std::vector<int64_t>& dims, int batch) const {
    return std::make_unique<Fft>(dims, batch);
  }
  using LinesFft = CpuLinesFft;
  /// In-place transforms of `lines` interleaved lines of `length` points, planned on `data`.
  std::unique_ptr<LinesFft> make_lines_fft(int64_t length, int64_t lines, Complex* data) const {
    return std::make_unique<LinesFft>(length, lines, data);
  }

  /// Seconds that f() (work on this backend) takes.
  template <class F>
  double time(const F& f) const {
    const auto start = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  void synchronize() const {}
  int threads() const { return threads_; }
  std::string device_name() const { return "CPU, " + std::to_string(threads_) + " OpenMP threads"; }

 private:
  int threads_;
};

}  // namespace lattica
