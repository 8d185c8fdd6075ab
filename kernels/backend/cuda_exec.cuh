#pragma once
// CUDA execution policy: the same site functors as CpuExec, launched as kernels on one stream.

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <cublas_v2.h>

#include "kernels/backend/exec_options.hpp"
#include "kernels/common/cuda_check.hpp"
#include "kernels/histogram/histogram.cuh"
#include "kernels/reduce/reduce.cuh"
#include "kernels/spectral/fft_cuda.cuh"
#include "kernels/transpose/transpose.cuh"

namespace lattica {

/// Device memory, freed on destruction. Move-only.
template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(int64_t n = 0) : size_(n) {
    if (n > 0) LATTICA_CUDA_CHECK(cudaMalloc(&data_, static_cast<size_t>(n) * sizeof(T)));
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (data_) cudaFree(data_);  // errors here cannot be reported; the context may be gone
  }
  T* data() { return data_; }
  const T* data() const { return data_; }
  int64_t size() const { return size_; }

 private:
  T* data_ = nullptr;
  int64_t size_ = 0;
};

/// Page-locked host memory, so that copies into it run asynchronously; plain host memory where
/// the system has no page-locked memory to spare (copies into it then wait). Move-only.
template <class T>
class PinnedBuffer {
 public:
  explicit PinnedBuffer(int64_t n = 0) : size_(n) {
    if (n <= 0) return;
    const size_t bytes = static_cast<size_t>(n) * sizeof(T);
    const cudaError_t status = cudaMallocHost(&data_, bytes);
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // clears the error: pageable memory serves as well, only slower
      data_ = static_cast<T*>(::operator new(bytes));
      pinned_ = false;
    } else {
      LATTICA_CUDA_CHECK(status);
    }
  }
  PinnedBuffer(PinnedBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)),
        size_(std::exchange(o.size_, 0)),
        pinned_(o.pinned_) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(pinned_, o.pinned_);
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() {
    if (!data_) return;
    if (pinned_) {
      cudaFreeHost(data_);  // errors here cannot be reported; the context may be gone
    } else {
      ::operator delete(data_);
    }
  }
  T* data() { return data_; }
  const T* data() const { return data_; }
  int64_t size() const { return size_; }

 private:
  T* data_ = nullptr;
  int64_t size_ = 0;
  bool pinned_ = true;
};

/// The completion of an asynchronous copy to the host (a CUDA event). Move-only.
class CudaCopyDone {
 public:
  CudaCopyDone() = default;
  CudaCopyDone(CudaCopyDone&& o) noexcept : event_(std::exchange(o.event_, nullptr)) {}
  CudaCopyDone& operator=(CudaCopyDone&& o) noexcept {
    std::swap(event_, o.event_);
    return *this;
  }
  CudaCopyDone(const CudaCopyDone&) = delete;
  CudaCopyDone& operator=(const CudaCopyDone&) = delete;
  ~CudaCopyDone() {
    if (event_) cudaEventDestroy(event_);
  }

 private:
  friend class CudaExec;
  cudaEvent_t event_ = nullptr;  ///< created with the first copy
};

/// Calls f(i) for every i in [0, n) with a grid-stride loop.
template <class F>
__global__ void for_each_kernel(int64_t n, F f) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    f(i);
  }
}

class CudaExec {
 public:
  template <class T>
  using Buffer = DeviceBuffer<T>;
  /// Host memory that asynchronous copies go to.
  template <class T>
  using HostFrame = PinnedBuffer<T>;
  using CopyDone = CudaCopyDone;

  static constexpr const char* kBackendName = "cuda";
  /// Threads that take one task together when a functor is written for it (a warp).
  static constexpr int kWarpLanes = 32;
  /// Whether site functors should index in 32 bits where the lattice allows: yes, a GPU takes
  /// several instructions for each 64-bit multiply, compare or add.
  static constexpr bool kNarrowSiteIndices = true;

  explicit CudaExec(const ExecOptions& options)
      : CudaExec(options.cuda_device, options.cuda_block_size) {}

  /// Selects `device` and creates the stream. Precondition: the device exists.
  explicit CudaExec(int device, int block_size = 256) : device_(device), block_size_(block_size) {
    LATTICA_CUDA_CHECK(cudaSetDevice(device_));
    cudaDeviceProp prop{};
    LATTICA_CUDA_CHECK(cudaGetDeviceProperties(&prop, device_));
    name_ = prop.name;
    sm_count_ = prop.multiProcessorCount;
    max_grid_ = static_cast<int64_t>(sm_count_) * 64;
    LATTICA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    LATTICA_CUDA_CHECK(cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking));
    LATTICA_CUDA_CHECK(cudaEventCreateWithFlags(&queued_work_, cudaEventDisableTiming));
    scratch_ = DeviceBuffer<unsigned char>(kScratchBytes);
    ticket_ = DeviceBuffer<unsigned int>(1);
    LATTICA_CUDA_CHECK(cudaMemsetAsync(ticket_.data(), 0, sizeof(unsigned int), stream_));
    LATTICA_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  CudaExec(const CudaExec&) = delete;
  CudaExec& operator=(const CudaExec&) = delete;
  ~CudaExec() {
    if (blas_) cublasDestroy(blas_);
    if (side_mark_) cudaEventDestroy(side_mark_);
    if (main_mark_) cudaEventDestroy(main_mark_);
    if (side_stream_) cudaStreamDestroy(side_stream_);
    if (queued_work_) cudaEventDestroy(queued_work_);
    if (copy_stream_) cudaStreamDestroy(copy_stream_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  template <class T>
  Buffer<T> allocate(int64_t n) const {
    return Buffer<T>(n);
  }

  /// Launches f over [0, n) on the stream; asynchronous. The block size is the configured one,
  /// capped at what the kernel's register use allows (heavy functors such as the O(4) updates
  /// cannot run 1024 threads per block) and halved where smaller blocks keep more warps
  /// resident (block_size_for); the chain does not depend on it.
  template <class F>
  void for_each(int64_t n, const F& f) const {
    if (n <= 0) return;
    const int block = block_size_for<F>();
    int64_t grid = (n + block - 1) / block;
    if (grid > max_grid_) grid = max_grid_;  // the grid-stride loop covers the rest
    for_each_kernel<<<static_cast<unsigned>(grid), block, 0, stream_>>>(n, f);
    LATTICA_CUDA_CHECK_LAUNCH(stream_);
  }

  /// Sum of f(i) over [0, n); waits for the result.
  template <class T, class F>
  T reduce_sum(int64_t n, const F& f) const {
    static_assert((kReduceMaxBlocks + 1) * sizeof(T) <= kScratchBytes,
                  "reduction scratch too small");
    T* d_partials = reinterpret_cast<T*>(scratch_.data());
    T* d_result = d_partials + kReduceMaxBlocks;
    device_reduce_sum<T>(n, f, d_partials, ticket_.data(), d_result, stream_);
    T result;
    LATTICA_CUDA_CHECK(
        cudaMemcpyAsync(&result, d_result, sizeof(T), cudaMemcpyDeviceToHost, stream_));
    LATTICA_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return result;
  }

  /// Sum of f(i) over [0, n) into *d_result (device memory); asynchronous, no host wait.
  template <class T, class F>
  void reduce_sum_into(int64_t n, const F& f, T* d_result) const {
    static_assert(kReduceMaxBlocks * sizeof(T) <= kScratchBytes, "reduction scratch too small");
    device_reduce_sum<T>(n, f, reinterpret_cast<T*>(scratch_.data()), ticket_.data(), d_result,
                         stream_);
  }

  /// d_results[s] = the sum of f(s, i) over [0, n) for s in [0, segments), each bit for bit as
  /// reduce_sum_into of that segment alone; asynchronous, two launches for all segments whose
  /// partials fit in kSegmentPartialsBytes (the buffer grows to them once; a parallel-tempering
  /// round of 64 replicas took 8 pairs of launches with the scratch's room alone).
  template <class T, class F>
  void reduce_segments_into(int64_t segments, int64_t n, const F& f, T* d_results) const {
    if (segments <= 0) return;
    const size_t wanted = std::max(
        kReduceMaxBlocks * sizeof(T),
        std::min(static_cast<size_t>(segments) * static_cast<size_t>(reduce_blocks(n)) * sizeof(T),
                 kSegmentPartialsBytes));
    if (static_cast<size_t>(segment_partials_.size()) < wanted)  // freeing the old one waits
      segment_partials_ = DeviceBuffer<unsigned char>(static_cast<int64_t>(wanted));
    device_reduce_segments<T>(segments, n, f, reinterpret_cast<T*>(segment_partials_.data()),
                              static_cast<int64_t>(segment_partials_.size() / sizeof(T)), d_results,
                              stream_);
  }

  /// *d_result += the sum of f(i) over [0, n), T made of 64-bit integers (exact in any
  /// order); asynchronous, with no pass over per-block partials at the end.
  template <class T, class F>
  void accumulate_exact_into(int64_t n, const F& f, T* d_result) const {
    if (n <= 0) return;
    const int64_t blocks = std::min<int64_t>((n + kReduceBlock - 1) / kReduceBlock, max_grid_);
    device_accumulate_exact<T>(n, f, d_result, blocks, stream_);
  }

  /// d_results[s] += the sum of f(s, i) over [0, n) for s in [0, segments), T made of 64-bit
  /// integers (exact in any order); asynchronous. A few elements per thread, so that a functor
  /// that updates sites and returns their sums spends little on the blocks' reductions.
  template <class T, class F>
  void accumulate_exact_segments_into(int64_t segments, int64_t n, const F& f, T* d_results) const {
    if (segments <= 0 || n <= 0) return;
    constexpr int64_t kPerThread = 4;
    const int64_t blocks = std::min<int64_t>(
        (n + kReduceBlock * kPerThread - 1) / (kReduceBlock * kPerThread), max_grid_);
    device_accumulate_exact_segments<T>(segments, n, f, d_results, blocks, stream_);
  }

  /// Sets the first n entries of a buffer (all when negative) to zero bytes; asynchronous.
  template <class T>
  void zero(Buffer<T>& buffer, int64_t n = -1) const {
    const int64_t count = n < 0 ? buffer.size() : n;
    if (count > 0) {
      LATTICA_CUDA_CHECK(
          cudaMemsetAsync(buffer.data(), 0, static_cast<size_t>(count) * sizeof(T), stream_));
    }
  }

  /// counts[b] = #{i in [0, n) : bin_of(i) == b} for b in [0, bins); bin_of may return -1 to
  /// skip. counts holds at least `bins` entries. Asynchronous.
  template <class F>
  void histogram(int64_t n, const F& bin_of, int64_t bins,
                 Buffer<unsigned long long>& counts) const {
    device_histogram(n, bin_of, bins, counts.data(), sm_count_, stream_);
  }

  /// Copies host data into the first `count` entries of a buffer (all when negative), ordered on
  /// this policy's stream. Use this rather than cudaMemcpy: the stream does not wait for the legacy
  /// default stream.
  template <class T>
  void copy_to_device(const T* from, Buffer<T>& to, int64_t count = -1) const {
    const int64_t n = count < 0 ? to.size() : count;
    LATTICA_CUDA_CHECK(cudaMemcpyAsync(to.data(), from, static_cast<size_t>(n) * sizeof(T),
                                       cudaMemcpyHostToDevice, stream_));
    LATTICA_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  /// Copies the first `count` entries (all when negative) of a buffer to the host; waits.
  template <class T>
  void copy_to_host(const Buffer<T>& from, T* to, int64_t count = -1) const {
    const int64_t n = count < 0 ? from.size() : count;
    LATTICA_CUDA_CHECK(cudaMemcpyAsync(to, from.data(), static_cast<size_t>(n) * sizeof(T),
                                       cudaMemcpyDeviceToHost, stream_));
    LATTICA_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  /// Starts copying the first n entries of `from` into `to` (in a HostFrame, or the copy
  /// waits) once the work queued so far is done, on a second stream, and returns at once: later
  /// work overlaps the copy. wait(done) waits for it; `from` must not be written before
  /// order_after(done).
  template <class T>
  void copy_to_host_async(const Buffer<T>& from, T* to, int64_t n, CopyDone& done) const {
    if (!done.event_) {
      LATTICA_CUDA_CHECK(cudaEventCreateWithFlags(&done.event_, cudaEventDisableTiming));
    }
    LATTICA_CUDA_CHECK(cudaEventRecord(queued_work_, stream_));
    LATTICA_CUDA_CHECK(cudaStreamWaitEvent(copy_stream_, queued_work_, 0));
    LATTICA_CUDA_CHECK(cudaMemcpyAsync(to, from.data(), static_cast<size_t>(n) * sizeof(T),
                                       cudaMemcpyDeviceToHost, copy_stream_));
    LATTICA_CUDA_CHECK(cudaEventRecord(done.event_, copy_stream_));
  }

  /// Blocks until the copy is in host memory; safe from another thread while this one queues
  /// work (it touches only the event).
  void wait(const CopyDone& done) const {
    if (!done.event_) return;
    LATTICA_CUDA_CHECK(cudaSetDevice(device_));  // the calling thread's device
    LATTICA_CUDA_CHECK(cudaEventSynchronize(done.event_));
  }

  /// Work queued from now on starts after the copy has read its source; the host does not wait.
  void order_after(const CopyDone& done) const {
    if (done.event_) LATTICA_CUDA_CHECK(cudaStreamWaitEvent(stream_, done.event_, 0));
  }

  /// A second stream for work that overlaps the main one (halo exchanges), made on first use,
  /// at the highest priority: its copies and NCCL kernels get SMs as soon as blocks of the
  /// interior update retire, rather than after that whole kernel.
  void* side_stream() const {
    if (!side_stream_) {
      int least = 0, greatest = 0;
      LATTICA_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
      LATTICA_CUDA_CHECK(
          cudaStreamCreateWithPriority(&side_stream_, cudaStreamNonBlocking, greatest));
      LATTICA_CUDA_CHECK(cudaEventCreateWithFlags(&main_mark_, cudaEventDisableTiming));
      LATTICA_CUDA_CHECK(cudaEventCreateWithFlags(&side_mark_, cudaEventDisableTiming));
    }
    return side_stream_;
  }
  /// Work queued on the side stream from now on starts after the main stream's queued work.
  void side_waits_for_main() const {
    side_stream();
    LATTICA_CUDA_CHECK(cudaEventRecord(main_mark_, stream_));
    LATTICA_CUDA_CHECK(cudaStreamWaitEvent(side_stream_, main_mark_, 0));
  }
  /// Work queued on the main stream from now on starts after the side stream's queued work.
  void main_waits_for_side() const {
    side_stream();
    LATTICA_CUDA_CHECK(cudaEventRecord(side_mark_, side_stream_));
    LATTICA_CUDA_CHECK(cudaStreamWaitEvent(stream_, side_mark_, 0));
  }
  /// `rows` runs of `width` bytes from src (every src_pitch bytes) to dst (every dst_pitch), in
  /// device memory, on the side stream; asynchronous.
  void copy_rows(void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t width,
                 int64_t rows) const {
    LATTICA_CUDA_CHECK(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width,
                                         static_cast<size_t>(rows), cudaMemcpyDeviceToDevice,
                                         static_cast<cudaStream_t>(side_stream())));
  }

  /// `bytes` bytes from src to dst in device memory, on the side stream; asynchronous.
  void copy_bytes(void* dst, const void* src, size_t bytes) const {
    if (bytes == 0) return;
    LATTICA_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
                                       static_cast<cudaStream_t>(side_stream())));
  }

  /// For b < batch: C_b = A_b * B, column-major (BLAS) layout: A_b is m x k at a + b * stride_a,
  /// B is k x n (shared), C_b is m x n at c + b * m * n. One strided batched cuBLAS DGEMM on the
  /// stream; asynchronous.
  void matmul_batched(int64_t m, int64_t n, int64_t k, const double* a, int64_t stride_a,
                      const double* b, double* c, int64_t batch) const {
    if (!blas_) {
      LATTICA_CUBLAS_CHECK(cublasCreate(&blas_));
      LATTICA_CUBLAS_CHECK(cublasSetStream(blas_, stream_));
    }
    const double one = 1.0, zero = 0.0;
    LATTICA_CUBLAS_CHECK(cublasDgemmStridedBatched(
        blas_, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(m), static_cast<int>(n),
        static_cast<int>(k), &one, a, static_cast<int>(m), stride_a, b, static_cast<int>(k), 0,
        &zero, c, static_cast<int>(m), m * n, static_cast<int>(batch)));
  }

  /// `copies` fields in checkerboard storage to lexicographic order with the tiled, coalesced
  /// permutation of kernels/transpose/; asynchronous.
  template <int D, class T>
  void to_lexicographic(const Checkerboard<D>& lattice, const T* from, T* to,
                        int64_t copies) const {
    checkerboard_to_lexicographic(lattice, from, to, copies, stream_);
  }
  /// The inverse of to_lexicographic; asynchronous.
  template <int D, class T>
  void from_lexicographic(const Checkerboard<D>& lattice, const T* from, T* to,
                          int64_t copies) const {
    lexicographic_to_checkerboard(lattice, from, to, copies, stream_);
  }

  using Fft = CudaFft;
  /// FFTs of `batch` real arrays of extents dims (cuFFT, on this policy's stream; every plan of
  /// the policy shares one work area, as they run one at a time on the stream).
  std::unique_ptr<Fft> make_fft(const std::vector<int64_t>& dims, int batch) const {
    return std::make_unique<Fft>(dims, batch, stream_, fft_work_);
  }
  using LinesFft = CudaLinesFft;
  /// In-place transforms of `lines` interleaved lines of `length` points (cuFFT, on this
  /// policy's stream); `data` is not needed to plan.
  std::unique_ptr<LinesFft> make_lines_fft(int64_t length, int64_t lines, Complex*) const {
    return std::make_unique<LinesFft>(length, lines, stream_, fft_work_);
  }

  /// Seconds that the work f() queues on the stream takes, from CUDA events around it.
  template <class F>
  double time(const F& f) const {
    cudaEvent_t start = nullptr, stop = nullptr;
    LATTICA_CUDA_CHECK(cudaEventCreate(&start));
    LATTICA_CUDA_CHECK(cudaEventCreate(&stop));
    LATTICA_CUDA_CHECK(cudaEventRecord(start, stream_));
    f();
    LATTICA_CUDA_CHECK(cudaEventRecord(stop, stream_));
    LATTICA_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    LATTICA_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    LATTICA_CUDA_CHECK(cudaEventDestroy(start));
    LATTICA_CUDA_CHECK(cudaEventDestroy(stop));
    return 1e-3 * ms;
  }

  /// Device-to-device copy bandwidth in bytes per second (read plus write), the median of
  /// `repeats` copies of `bytes`, as a yardstick for memory-bound kernels.
  double copy_bandwidth(size_t bytes, int repeats) const {
    DeviceBuffer<unsigned char> from(static_cast<int64_t>(bytes)), to(static_cast<int64_t>(bytes));
    LATTICA_CUDA_CHECK(cudaMemsetAsync(from.data(), 1, bytes, stream_));
    std::vector<double> seconds;
    for (int r = 0; r < repeats + 2; ++r) {
      const double t = time([&] {
        LATTICA_CUDA_CHECK(
            cudaMemcpyAsync(to.data(), from.data(), bytes, cudaMemcpyDeviceToDevice, stream_));
      });
      if (r >= 2) seconds.push_back(t);  // two warm-up copies
    }
    std::sort(seconds.begin(), seconds.end());
    return 2.0 * static_cast<double>(bytes) / seconds[seconds.size() / 2];
  }

  void synchronize() const { LATTICA_CUDA_CHECK(cudaStreamSynchronize(stream_)); }
  std::string device_name() const {
    return name_ + " (CUDA device " + std::to_string(device_) + ")";
  }
  cudaStream_t stream() const { return stream_; }

 private:
  /// Threads per block of for_each_kernel<F>: the configured size where the kernel can launch
  /// it, halved (down to 64) while that keeps more warps resident. A functor with many
  /// registers fits fewer whole large blocks in an SM's registers: phi^4's runs of 8 (72
  /// registers) fit 3 blocks of 256 threads (24 warps) but 7 of 128 (28 warps).
  template <class F>
  int block_size_for() const {
    int block = std::min(block_size_, max_block_size<F>());
    if ((block & (block - 1)) != 0) return block;  // only powers of two are compared
    while (block > 64 && resident_warps<F>(block / 2) > resident_warps<F>(block)) block /= 2;
    return block;
  }

  /// Warps of for_each_kernel<F> an SM holds at once in blocks of `block` threads, a power of
  /// two from 32 to the kernel's largest block (asked once per functor type; all devices of a
  /// process are assumed to share an architecture).
  template <class F>
  static int resident_warps(int block) {
    static const std::array<int, 11> warps = [] {  // by log2 of the block size
      std::array<int, 11> w{};
      for (int log2 = 5; log2 <= 10 && (1 << log2) <= max_block_size<F>(); ++log2) {
        int blocks = 0;
        LATTICA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &blocks, for_each_kernel<F>, 1 << log2, 0));
        w[log2] = blocks << (log2 - 5);
      }
      return w;
    }();
    int log2 = 0;
    while ((1 << log2) < block && log2 < 10) ++log2;
    return warps[log2];
  }

  /// Most threads per block for_each_kernel<F> can launch with (asked once per functor type;
  /// all devices of a process are assumed to share an architecture).
  template <class F>
  static int max_block_size() {
    static const int threads = [] {
      cudaFuncAttributes attributes{};
      LATTICA_CUDA_CHECK(cudaFuncGetAttributes(&attributes, for_each_kernel<F>));
      return attributes.maxThreadsPerBlock;
    }();
    return threads;
  }

  static constexpr size_t kScratchBytes = 256 * 1024;  // partials of the largest Sums (O(n): 96 B)
  static constexpr size_t kSegmentPartialsBytes = size_t{64} << 20;
  int device_;
  int block_size_;
  int sm_count_ = 0;
  int64_t max_grid_ = 0;
  std::string name_;
  cudaStream_t stream_ = nullptr;
  cudaStream_t copy_stream_ = nullptr;     ///< asynchronous copies to the host
  cudaEvent_t queued_work_ = nullptr;      ///< where on stream_ the next such copy starts
  mutable cublasHandle_t blas_ = nullptr;  ///< created on first use
  std::shared_ptr<CufftWorkArea> fft_work_ = std::make_shared<CufftWorkArea>();  ///< every FFT's
  mutable cudaStream_t side_stream_ = nullptr;  ///< halo exchanges, made on first use
  mutable cudaEvent_t main_mark_ = nullptr, side_mark_ = nullptr;
  // mutable: reductions reuse it from const member functions
  mutable DeviceBuffer<unsigned char> scratch_;
  mutable DeviceBuffer<unsigned char> segment_partials_;  ///< reduce_segments_into's, grown
  mutable DeviceBuffer<unsigned int> ticket_;  ///< blocks done in the reduction in flight
};

}  // namespace lattica
