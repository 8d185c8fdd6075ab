// Lattica's reduction and histogram primitives against CUB on the same data, in the same run.
//
// Reductions: device_reduce_sum (kernels/reduce/reduce.cuh) against cub::DeviceReduce::Sum,
// summing 2^28 elements of a device array: int32 summed as int64, double, and float summed as
// double. Effective bandwidth = bytes read / time.
//
// Histograms: device_histogram (kernels/histogram/histogram.cuh) against
// cub::DeviceHistogram::HistogramEven on 2^28 int32 samples, bins [0, B) (levels 0..B):
// uniform over 256 bins, uniform over 4096 bins, every sample in one bin of 256, and 90 % of
// the samples in one bin of 256. Bandwidth = bytes of samples read / time. Both sides zero
// their counters in every call (device_histogram with cudaMemsetAsync, CUB with its init
// kernel), so that is inside the timings.
//
// "% of copy" is against the faster of two device copies of 1 GiB measured at the start of the
// run: cudaMemcpyAsync device to device and a copy kernel of 16-byte words; copy bandwidth =
// 2 x bytes / time (each byte read once and written once). "vs CUB" = CUB time / Lattica time
// (above 1: Lattica is faster). Each time is the median of --repeats timed calls (CUDA events
// around each) after warm-up calls; CUB's temporary storage is allocated once, outside the
// timing. The inputs come from an integer hash of the index, generated on the device.
//
// Every case is checked: Lattica and CUB must agree (exactly for integer sums and for the
// counts, to relative 1e-12 for floating-point sums); a mismatch is reported and the program
// exits with status 1.
//
// Targets: reductions >= CUB DeviceReduce and >= 90 % of copy bandwidth; histograms >= CUB
// DeviceHistogram on the same data, uniform and heavily contended.
//
//   primitives_bench [--repeats N] [--filter TEXT] [--json FILE]
//
// --filter runs only the cases whose name contains TEXT.
//
// Needs about 2.1 GiB of device memory (one 2 GiB array, reused by every case).

#include <cuda_runtime.h>
#include <cub/cub.cuh>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/common/cuda_check.hpp"
#include "kernels/histogram/histogram.cuh"
#include "kernels/reduce/reduce.cuh"
#include "tests/bench/bench_support.cuh"

namespace lattica {
namespace {

using namespace bench;

constexpr int kFillBlock = 256;
constexpr int64_t kElements = int64_t{1} << 28;   ///< elements (samples) of every case
constexpr size_t kCopyBytes = size_t{1} << 30;    ///< bytes of the reference copy
constexpr size_t kBufferBytes = size_t{2} << 30;  ///< the largest input: 2^28 doubles
constexpr double kFloatTolerance = 1e-12;         ///< relative, floating-point sums

static_assert(kElements <= INT_MAX, "CUB is called with int item counts");
static_assert(2 * kCopyBytes <= kBufferBytes, "the reference copy runs inside the buffer");

// ---- input generation --------------------------------------------------------------------

/// A fixed 64-bit integer hash of (index, seed): a multiply-xorshift finaliser applied to an
/// odd-constant (Weyl) step of the index.
__device__ __forceinline__ uint64_t hash64(int64_t index, uint64_t seed) {
  uint64_t x = static_cast<uint64_t>(index) * 0x9E3779B97F4A7C15ull + seed;
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return x;
}

/// out[i] = gen(i) for i in [0, n).
template <class T, class Gen>
__global__ void __launch_bounds__(kFillBlock) fill_kernel(T* out, int64_t n, Gen gen) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kFillBlock;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kFillBlock + threadIdx.x; i < n;
       i += stride) {
    out[i] = gen(i);
  }
}

template <class T, class Gen>
void fill(T* out, int64_t n, const Gen& gen, int max_grid, cudaStream_t stream) {
  const int64_t blocks = std::min<int64_t>((n + kFillBlock - 1) / kFillBlock, max_grid);
  fill_kernel<T><<<static_cast<unsigned>(blocks), kFillBlock, 0, stream>>>(out, n, gen);
  LATTICA_CUDA_CHECK_LAUNCH(stream);
}

/// int32 values in [-2^30, 2^30): 2^28 of them sum to well inside int64.
struct IntValues {
  __device__ int32_t operator()(int64_t i) const {
    return static_cast<int32_t>(hash64(i, 11) >> 33) - (int32_t{1} << 30);
  }
};

/// double values in [0, 1), 53 random bits. All positive, so the sum is well conditioned.
struct DoubleValues {
  __device__ double operator()(int64_t i) const {
    return static_cast<double>(hash64(i, 12) >> 11) * (1.0 / 9007199254740992.0);
  }
};

/// float values in [0, 1), 24 random bits.
struct FloatValues {
  __device__ float operator()(int64_t i) const {
    return static_cast<float>(hash64(i, 13) >> 40) * (1.0f / 16777216.0f);
  }
};

/// Samples uniform over [0, bins); bins a power of two.
struct UniformSamples {
  uint32_t bins;
  __device__ int32_t operator()(int64_t i) const {
    return static_cast<int32_t>(static_cast<uint32_t>(hash64(i, 21) >> 32) % bins);
  }
};

/// Every sample in bin `bin`.
struct OneBinSamples {
  int32_t bin;
  __device__ int32_t operator()(int64_t) const { return bin; }
};

/// `hot_percent` % of the samples (in expectation) in bin `hot`, the rest uniform over
/// [0, bins) (so a few of those land in `hot` too).
struct HotBinSamples {
  uint32_t bins;
  int32_t hot;
  uint32_t hot_percent;
  __device__ int32_t operator()(int64_t i) const {
    const uint64_t h = hash64(i, 22);
    if (static_cast<uint32_t>(h & 0xFFFFFFFFu) % 100u < hot_percent) return hot;
    return static_cast<int32_t>(static_cast<uint32_t>(h >> 32) % bins);
  }
};

// ---- the functors Lattica's primitives are called with -----------------------------------

/// i -> data[i] converted to Out: the summand of device_reduce_sum.
template <class Out, class In>
struct LoadAs {
  const In* data;
  __device__ Out operator()(int64_t i) const { return static_cast<Out>(data[i]); }
};

/// i -> the bin of samples[i], or -1 outside [0, bins) (what HistogramEven does too).
struct SampleBin {
  const int32_t* samples;
  int32_t bins;
  __device__ int64_t operator()(int64_t i) const {
    const int32_t s = samples[i];
    return s >= 0 && s < bins ? s : -1;
  }
};

// ---- timing ------------------------------------------------------------------------------

/// GB/s of moving `bytes` bytes in `ms` milliseconds.
double gb_per_s(double bytes, double ms) { return bytes / ms / 1e6; }

// ---- cases -------------------------------------------------------------------------------

/// What every case gets: the shared input buffer, the stream, the settings.
struct Context {
  void* buffer;
  size_t buffer_bytes;
  cudaStream_t stream;
  int repeats;
  int max_grid;  ///< SM count x 64, as the engine's CudaExec uses
};

/// One case's measurement: the two medians and the agreement check.
struct Outcome {
  double lattica_ms = 0;
  double cub_ms = 0;
  bool ok = false;
  std::string message;  ///< what disagreed, when !ok
};

struct Case {
  std::string name;
  int64_t n;          ///< elements (samples)
  size_t bytes_read;  ///< bytes of input each call reads
  std::function<Outcome(const Context&)> run;
};

struct Result {
  std::string name;
  int64_t n;
  size_t bytes_read;
  double lattica_ms, cub_ms, lattica_gbps, cub_gbps, percent_of_copy, speed_vs_cub;
  double elements_per_ns;
  bool ok;
};

template <class T>
std::string show(T value) {
  if constexpr (std::is_floating_point<T>::value) {
    char text[64];
    std::snprintf(text, sizeof text, "%.17g", static_cast<double>(value));
    return text;
  } else {
    return std::to_string(value);
  }
}

/// Exact for integers; relative kFloatTolerance for floating point (NaN never agrees).
template <class T>
bool agree(T a, T b) {
  if constexpr (std::is_floating_point<T>::value) {
    return std::fabs(a - b) <= kFloatTolerance * std::max(std::fabs(a), std::fabs(b));
  } else {
    return a == b;
  }
}

/// Sum of kElements values of In, generated by Gen, accumulated as Out.
template <class Out, class In, class Gen>
Case reduce_case(std::string name, Gen gen) {
  return {
      std::move(name), kElements, static_cast<size_t>(kElements) * sizeof(In),
      [gen](const Context& ctx) {
        cudaStream_t stream = ctx.stream;
        In* data = static_cast<In*>(ctx.buffer);
        fill(data, kElements, gen, ctx.max_grid, stream);
        const In* input = data;

        DeviceBytes partials(kReduceMaxBlocks * sizeof(Out));
        DeviceBytes ticket(sizeof(unsigned int));
        LATTICA_CUDA_CHECK(cudaMemsetAsync(ticket.data(), 0, sizeof(unsigned int), stream));
        DeviceBytes results(2 * sizeof(Out));
        Out* d_partials = static_cast<Out*>(partials.data());
        auto* d_ticket = static_cast<unsigned int*>(ticket.data());
        Out* d_lattica = static_cast<Out*>(results.data());
        Out* d_cub = d_lattica + 1;
        const int items = static_cast<int>(kElements);
        size_t temp_bytes = 0;
        LATTICA_CUDA_CHECK(
            cub::DeviceReduce::Sum(nullptr, temp_bytes, input, d_cub, items, stream));
        DeviceBytes temp(std::max<size_t>(temp_bytes, 1));
        void* d_temp = temp.data();

        const LoadAs<Out, In> summand{input};
        const auto lattica = [&](cudaStream_t s) {
          device_reduce_sum<Out>(kElements, summand, d_partials, d_ticket, d_lattica, s);
        };
        const auto cub_sum = [&](cudaStream_t s) {
          LATTICA_CUDA_CHECK(cub::DeviceReduce::Sum(d_temp, temp_bytes, input, d_cub, items, s));
        };

        // Check first, on results preset to garbage (all bits set: NaN for doubles).
        LATTICA_CUDA_CHECK(cudaMemsetAsync(results.data(), 0xFF, 2 * sizeof(Out), stream));
        lattica(stream);
        cub_sum(stream);
        Out host[2];
        LATTICA_CUDA_CHECK(
            cudaMemcpyAsync(host, d_lattica, sizeof host, cudaMemcpyDeviceToHost, stream));
        LATTICA_CUDA_CHECK(cudaStreamSynchronize(stream));

        Outcome out;
        out.ok = agree(host[0], host[1]);
        if (!out.ok) out.message = "Lattica sum " + show(host[0]) + ", CUB sum " + show(host[1]);
        out.lattica_ms = median_ms(lattica, stream, ctx.repeats);
        out.cub_ms = median_ms(cub_sum, stream, ctx.repeats);
        return out;
      }};
}

/// Histogram of kElements int32 samples generated by Gen, bins [0, bins).
template <class Gen>
Case histogram_case(std::string name, int32_t bins, Gen gen) {
  return {std::move(name), kElements, static_cast<size_t>(kElements) * sizeof(int32_t),
          [bins, gen](const Context& ctx) {
            cudaStream_t stream = ctx.stream;
            int32_t* data = static_cast<int32_t*>(ctx.buffer);
            fill(data, kElements, gen, ctx.max_grid, stream);
            const int32_t* samples = data;
            const size_t nbins = static_cast<size_t>(bins);

            DeviceBytes lattica_counts(nbins * sizeof(unsigned long long));
            DeviceBytes cub_counts(nbins * sizeof(unsigned int));
            auto* d_lattica = static_cast<unsigned long long*>(lattica_counts.data());
            auto* d_cub = static_cast<unsigned int*>(cub_counts.data());
            const int items = static_cast<int>(kElements);
            const int levels = bins + 1;
            const int32_t lower = 0;
            const int32_t upper = bins;
            size_t temp_bytes = 0;
            LATTICA_CUDA_CHECK(cub::DeviceHistogram::HistogramEven(
                nullptr, temp_bytes, samples, d_cub, levels, lower, upper, items, stream));
            DeviceBytes temp(std::max<size_t>(temp_bytes, 1));
            void* d_temp = temp.data();

            const SampleBin bin_of{samples, bins};
            const int sm_count = ctx.max_grid / 64;
            const auto lattica = [&](cudaStream_t s) {
              device_histogram(kElements, bin_of, bins, d_lattica, sm_count, s);
            };
            const auto cub_histogram = [&](cudaStream_t s) {
              LATTICA_CUDA_CHECK(cub::DeviceHistogram::HistogramEven(
                  d_temp, temp_bytes, samples, d_cub, levels, lower, upper, items, s));
            };

            // Check first, on counters preset to garbage: both sides must zero them.
            LATTICA_CUDA_CHECK(
                cudaMemsetAsync(d_lattica, 0xFF, nbins * sizeof(unsigned long long), stream));
            LATTICA_CUDA_CHECK(cudaMemsetAsync(d_cub, 0xFF, nbins * sizeof(unsigned int), stream));
            lattica(stream);
            cub_histogram(stream);
            std::vector<unsigned long long> host_lattica(nbins);
            std::vector<unsigned int> host_cub(nbins);
            LATTICA_CUDA_CHECK(cudaMemcpyAsync(host_lattica.data(), d_lattica,
                                               nbins * sizeof(unsigned long long),
                                               cudaMemcpyDeviceToHost, stream));
            LATTICA_CUDA_CHECK(cudaMemcpyAsync(host_cub.data(), d_cub, nbins * sizeof(unsigned int),
                                               cudaMemcpyDeviceToHost, stream));
            LATTICA_CUDA_CHECK(cudaStreamSynchronize(stream));

            Outcome out;
            out.ok = true;
            unsigned long long total = 0;
            for (size_t b = 0; b < nbins; ++b) {
              total += host_lattica[b];
              if (out.ok && host_lattica[b] != static_cast<unsigned long long>(host_cub[b])) {
                out.ok = false;
                out.message = "bin " + std::to_string(b) + ": Lattica " +
                              std::to_string(host_lattica[b]) + ", CUB " +
                              std::to_string(host_cub[b]);
              }
            }
            // Every generated sample lies in [0, bins).
            if (out.ok && total != static_cast<unsigned long long>(kElements)) {
              out.ok = false;
              out.message = "counts add up to " + std::to_string(total) + ", not " +
                            std::to_string(kElements);
            }
            out.lattica_ms = median_ms(lattica, stream, ctx.repeats);
            out.cub_ms = median_ms(cub_histogram, stream, ctx.repeats);
            return out;
          }};
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  cases.push_back(reduce_case<long long, int32_t>("reduce int32 -> int64", IntValues{}));
  cases.push_back(reduce_case<double, double>("reduce double", DoubleValues{}));
  cases.push_back(reduce_case<double, float>("reduce float -> double", FloatValues{}));
  cases.push_back(histogram_case("histogram uniform 256 bins", 256, UniformSamples{256}));
  cases.push_back(histogram_case("histogram uniform 4096 bins", 4096, UniformSamples{4096}));
  cases.push_back(histogram_case("histogram one bin of 256", 256, OneBinSamples{128}));
  cases.push_back(
      histogram_case("histogram 90% in one bin of 256", 256, HotBinSamples{256, 37, 90}));
  return cases;
}

// ---- output ------------------------------------------------------------------------------

void write_json(const std::string& path, const std::string& device, int repeats, double memcpy_gbps,
                double copy_kernel_gbps, const std::vector<Result>& results) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write " + path);
  char line[768];
  std::snprintf(line, sizeof line,
                "{\n  \"program\": \"primitives_bench\",\n  \"device\": %s,\n"
                "  \"repeats\": %d,\n  \"statistic\": \"median\",\n"
                "  \"memcpy_gb_per_s\": %.1f,\n  \"copy_kernel_gb_per_s\": %.1f,\n"
                "  \"copy_bandwidth_gb_per_s\": %.1f,\n  \"results\": [\n",
                json_string(device).c_str(), repeats, memcpy_gbps, copy_kernel_gbps,
                std::max(memcpy_gbps, copy_kernel_gbps));
  f << line;
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    std::snprintf(line, sizeof line,
                  "    {\"case\": %s, \"n\": %lld, \"bytes_read\": %zu, \"lattica_ms\": %.4f, "
                  "\"cub_ms\": %.4f, \"lattica_gb_per_s\": %.1f, \"cub_gb_per_s\": %.1f, "
                  "\"percent_of_copy\": %.1f, \"speed_vs_cub\": %.3f, "
                  "\"lattica_elements_per_ns\": %.2f, \"verified\": %s}%s\n",
                  json_string(r.name).c_str(), static_cast<long long>(r.n), r.bytes_read,
                  r.lattica_ms, r.cub_ms, r.lattica_gbps, r.cub_gbps, r.percent_of_copy,
                  r.speed_vs_cub, r.elements_per_ns, r.ok ? "true" : "false",
                  i + 1 < results.size() ? "," : "");
    f << line;
  }
  f << "  ]\n}\n";
  if (!f) throw std::runtime_error("error writing " + path);
}

int run(int argc, char** argv) {
  Options options;
  if (const int exit_code = parse_options(argc, argv, options); exit_code >= 0) return exit_code;
  const int repeats = options.repeats;
  const std::string& json_path = options.json_path;

  const cudaDeviceProp prop = current_device_properties();
  std::vector<Case> cases = all_cases();
  keep_matching(cases, options.filter);

  DeviceBytes buffer(kBufferBytes);
  LATTICA_CUDA_CHECK(cudaMemset(buffer.data(), 0x5A, kBufferBytes));
  cudaStream_t stream;
  LATTICA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const Context ctx{buffer.data(), kBufferBytes, stream, repeats, prop.multiProcessorCount * 64};

  // The reference copy: the first GiB of the buffer into the second.
  const void* copy_in = buffer.data();
  void* copy_out = static_cast<char*>(buffer.data()) + kCopyBytes;
  const double memcpy_ms = median_ms(
      [&](cudaStream_t s) {
        LATTICA_CUDA_CHECK(
            cudaMemcpyAsync(copy_out, copy_in, kCopyBytes, cudaMemcpyDeviceToDevice, s));
      },
      stream, repeats);
  const double copy_kernel_ms = median_ms(
      [&](cudaStream_t s) { copy_words(copy_in, copy_out, kCopyBytes, s); }, stream, repeats);
  const double copy_bytes = 2.0 * static_cast<double>(kCopyBytes);
  const double memcpy_gbps = gb_per_s(copy_bytes, memcpy_ms);
  const double copy_kernel_gbps = gb_per_s(copy_bytes, copy_kernel_ms);
  const double copy_gbps = std::max(memcpy_gbps, copy_kernel_gbps);

  std::printf("device: %s, median of %d repeats after %d warm-up calls\n", prop.name, repeats,
              kWarmup);
  std::printf(
      "copy of 1 GiB (2 x bytes / time): cudaMemcpyAsync %.1f GB/s, copy kernel %.1f "
      "GB/s\n",
      memcpy_gbps, copy_kernel_gbps);
  std::printf("%-34s %10s %11s %9s %13s %9s %7s %7s %8s  %s\n", "case", "n", "lattica ms", "cub ms",
              "lattica GB/s", "cub GB/s", "% copy", "vs CUB", "elem/ns", "check");
  std::vector<Result> results;
  int failures = 0;
  for (const Case& c : cases) {
    if (c.bytes_read > ctx.buffer_bytes) throw std::runtime_error(c.name + ": input too large");
    const Outcome o = c.run(ctx);
    const double bytes = static_cast<double>(c.bytes_read);
    Result r{c.name,
             c.n,
             c.bytes_read,
             o.lattica_ms,
             o.cub_ms,
             gb_per_s(bytes, o.lattica_ms),
             gb_per_s(bytes, o.cub_ms),
             0,
             o.cub_ms / o.lattica_ms,
             static_cast<double>(c.n) / (o.lattica_ms * 1e6),
             o.ok};
    r.percent_of_copy = 100.0 * r.lattica_gbps / copy_gbps;
    std::printf("%-34s %10lld %11.4f %9.4f %13.1f %9.1f %6.1f%% %7.3f %8.2f  %s\n", r.name.c_str(),
                static_cast<long long>(r.n), r.lattica_ms, r.cub_ms, r.lattica_gbps, r.cub_gbps,
                r.percent_of_copy, r.speed_vs_cub, r.elements_per_ns, r.ok ? "ok" : "FAIL");
    if (!o.ok) {
      ++failures;
      std::fprintf(stderr, "primitives_bench: FAIL %s: %s\n", c.name.c_str(), o.message.c_str());
    }
    results.push_back(r);
  }
  LATTICA_CUDA_CHECK(cudaStreamDestroy(stream));
  if (!json_path.empty()) {
    write_json(json_path, prop.name, repeats, memcpy_gbps, copy_kernel_gbps, results);
    std::printf("wrote %s\n", json_path.c_str());
  }
  if (failures > 0) {
    std::fprintf(stderr, "primitives_bench: %d case(s) where Lattica and CUB disagree\n", failures);
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace lattica

int main(int argc, char** argv) {
  return lattica::bench::guarded_main("primitives_bench", lattica::run, argc, argv);
}
