#pragma once
// What the benchmark programs share: device bytes, the reference copy kernel, timing (median of
// repeats after warm-ups, CUDA events), the command line and JSON strings.

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/cuda_check.hpp"

namespace lattica::bench {

constexpr int kWarmup = 3;
constexpr int kCopyBlock = 256;

/// Device memory of `bytes` bytes, freed on destruction.
class DeviceBytes {
 public:
  explicit DeviceBytes(size_t bytes) { LATTICA_CUDA_CHECK(cudaMalloc(&data_, bytes)); }
  ~DeviceBytes() { cudaFree(data_); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  void* data() const { return data_; }

 private:
  void* data_ = nullptr;
};

/// The plain copy kernels are measured against: out[i] = in[i], 16-byte words.
__global__ void __launch_bounds__(kCopyBlock)
    copy_words_kernel(const uint4* __restrict__ in, uint4* __restrict__ out, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kCopyBlock;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kCopyBlock + threadIdx.x; i < n;
       i += stride) {
    out[i] = in[i];
  }
}

/// Properties of the current CUDA device (its name for the report, its SM count for grids).
inline cudaDeviceProp current_device_properties() {
  int device = 0;
  LATTICA_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  LATTICA_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  return prop;
}

/// Copies `bytes` (a multiple of 16) from in to out with copy_words_kernel on `stream`.
inline void copy_words(const void* in, void* out, size_t bytes, cudaStream_t stream) {
  const auto words = static_cast<int64_t>(bytes / sizeof(uint4));
  const auto blocks =
      static_cast<unsigned>(std::min<int64_t>((words + kCopyBlock - 1) / kCopyBlock, INT_MAX));
  copy_words_kernel<<<blocks, kCopyBlock, 0, stream>>>(static_cast<const uint4*>(in),
                                                       static_cast<uint4*>(out), words);
  LATTICA_CUDA_CHECK_LAUNCH(stream);
}

/// Median milliseconds of `repeats` launches, each timed alone, after kWarmup untimed ones.
inline double median_ms(const std::function<void(cudaStream_t)>& launch, cudaStream_t stream,
                        int repeats) {
  for (int i = 0; i < kWarmup; ++i) launch(stream);
  cudaEvent_t start, stop;
  LATTICA_CUDA_CHECK(cudaEventCreate(&start));
  LATTICA_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    LATTICA_CUDA_CHECK(cudaEventRecord(start, stream));
    launch(stream);
    LATTICA_CUDA_CHECK(cudaEventRecord(stop, stream));
    LATTICA_CUDA_CHECK(cudaEventSynchronize(stop));
    float elapsed = 0;
    LATTICA_CUDA_CHECK(cudaEventElapsedTime(&elapsed, start, stop));
    ms.push_back(elapsed);
  }
  LATTICA_CUDA_CHECK(cudaEventDestroy(start));
  LATTICA_CUDA_CHECK(cudaEventDestroy(stop));
  std::sort(ms.begin(), ms.end());
  return ms.size() % 2 ? ms[ms.size() / 2] : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
}

/// A string as a JSON literal (quotes and backslashes escaped, control characters dropped).
inline std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out + "\"";
}

/// The options every benchmark takes: [--repeats N] [--filter TEXT] [--json FILE].
struct Options {
  int repeats = 20;
  std::string filter;  ///< run only the cases whose name contains it
  std::string json_path;
};

/// Parses the options; returns -1 to go on, else the exit code (0 for --help, 2 for misuse).
inline int parse_options(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--json" && i + 1 < argc) {
      o.json_path = argv[++i];
    } else if (arg == "--filter" && i + 1 < argc) {
      o.filter = argv[++i];
    } else if (arg == "--repeats" && i + 1 < argc) {
      o.repeats = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: %s [--repeats N] [--filter TEXT] [--json FILE]\n", argv[0]);
      return arg == "--help" || arg == "-h" ? 0 : 2;
    }
  }
  return -1;
}

/// Keeps the cases (with a `name`) that contain `filter`; throws when none does.
template <class Case>
void keep_matching(std::vector<Case>& cases, const std::string& filter) {
  cases.erase(
      std::remove_if(cases.begin(), cases.end(),
                     [&](const Case& c) { return c.name.find(filter) == std::string::npos; }),
      cases.end());
  if (cases.empty()) throw std::runtime_error("no benchmark matches --filter " + filter);
}

/// A benchmark's main: runs run(argc, argv) and turns an exception into its message on stderr
/// (named after the program) and exit code 3.
inline int guarded_main(const char* program, int (*run)(int, char**), int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 3;
  }
}

}  // namespace lattica::bench
