// Effective bandwidth of the transposes and layout permutations of kernels/transpose/ against a
// plain device copy of the same number of bytes, measured in the same run: cudaMemcpyAsync
// device to device and a copy kernel of 16-byte words. Effective bandwidth = 2 x bytes / time
// (each byte read once and written once); "% of copy" is against the faster of the two copies.
// Each figure is the median of --repeats timed launches (CUDA events around each), after
// warm-up launches. The target is >= 90 % of the copy.
//
//   transpose_bench [--repeats N] [--filter TEXT] [--json FILE]
//
// --filter runs only the cases whose name contains TEXT.
//
// Needs about 4.5 GiB of device memory (two 2 GiB arrays).

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/common/cuda_check.hpp"
#include "kernels/lattice/checkerboard.hpp"
#include "kernels/transpose/transpose.cuh"
#include "tests/bench/bench_support.cuh"

namespace lattica {
namespace {

using namespace bench;

double gb_per_s(size_t bytes, double ms) { return 2.0 * static_cast<double>(bytes) / ms / 1e6; }

/// One benchmark: `bytes` in one array; run(in, out, stream) launches the permutation.
struct Case {
  std::string name;
  size_t bytes;
  std::function<void(const void*, void*, cudaStream_t)> run;
};

struct Result {
  std::string name;
  size_t bytes;
  double ms, gbps, memcpy_gbps, copy_kernel_gbps, percent_of_copy;
};

// Case builders: the element type is fixed by the lambda's casts.
template <class T>
Case transpose_case(std::string name, int64_t rows, int64_t cols) {
  return {std::move(name), static_cast<size_t>(rows * cols) * sizeof(T),
          [=](const void* in, void* out, cudaStream_t s) {
            transpose_2d(static_cast<const T*>(in), static_cast<T*>(out), 1, rows, cols, s);
          }};
}

template <class T>
Case permute_case(std::string name, std::vector<int64_t> extents, std::vector<int> perm) {
  int64_t n = 1;
  for (int64_t e : extents) n *= e;
  return {std::move(name), static_cast<size_t>(n) * sizeof(T),
          [=](const void* in, void* out, cudaStream_t s) {
            permute_axes(static_cast<const T*>(in), static_cast<T*>(out),
                         static_cast<int>(extents.size()), extents.data(), perm.data(), s);
          }};
}

template <class T, int D>
Case checkerboard_case(std::string name, std::vector<int64_t> dims, bool to_lexicographic) {
  const Checkerboard<D> lattice = Checkerboard<D>::make(dims.data());
  return {std::move(name), static_cast<size_t>(lattice.volume()) * sizeof(T),
          [=](const void* in, void* out, cudaStream_t s) {
            if (to_lexicographic) {
              checkerboard_to_lexicographic(lattice, static_cast<const T*>(in),
                                            static_cast<T*>(out), 1, s);
            } else {
              lexicographic_to_checkerboard(lattice, static_cast<const T*>(in),
                                            static_cast<T*>(out), 1, s);
            }
          }};
}

std::vector<Case> all_cases() {
  const int64_t n = 16384;
  std::vector<Case> cases;
  cases.push_back(transpose_case<float>("transpose_2d float 16384x16384", n, n));
  cases.push_back(transpose_case<double>("transpose_2d double 16384x16384", n, n));
  const int64_t records = int64_t{1} << 25;
  for (int64_t c : {2, 3, 4}) {
    const std::string suffix = " double V=2^25 n=" + std::to_string(c);
    cases.push_back(permute_case<double>("aos_to_soa" + suffix, {records, c}, {1, 0}));
    cases.push_back(permute_case<double>("soa_to_aos" + suffix, {c, records}, {1, 0}));
  }
  cases.push_back(permute_case<float>("permute float 512^3 [2,1,0]", {512, 512, 512}, {2, 1, 0}));
  cases.push_back(permute_case<float>("permute float 512^3 [0,2,1]", {512, 512, 512}, {0, 2, 1}));
  cases.push_back(permute_case<float>("permute float 512^3 [1,0,2]", {512, 512, 512}, {1, 0, 2}));
  for (bool to_lex : {true, false}) {
    const std::string direction = to_lex ? "checkerboard_to_lex" : "lex_to_checkerboard";
    cases.push_back(checkerboard_case<int8_t, 2>(direction + " int8 16384^2", {n, n}, to_lex));
    cases.push_back(checkerboard_case<float, 2>(direction + " float 16384^2", {n, n}, to_lex));
    cases.push_back(checkerboard_case<double, 2>(direction + " double 16384^2", {n, n}, to_lex));
    cases.push_back(
        checkerboard_case<float, 3>(direction + " float 512^3", {512, 512, 512}, to_lex));
    cases.push_back(
        checkerboard_case<int8_t, 4>(direction + " int8 128^4", {128, 128, 128, 128}, to_lex));
  }
  return cases;
}

void write_json(const std::string& path, const std::string& device, int repeats,
                const std::vector<Result>& results) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write " + path);
  f << "{\n  \"benchmark\": \"transpose\",\n  \"device\": " << json_string(device)
    << ",\n  \"repeats\": " << repeats << ",\n  \"statistic\": \"median\",\n  \"results\": [\n";
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    char line[512];
    std::snprintf(line, sizeof line,
                  "    {\"name\": %s, \"bytes\": %zu, \"ms\": %.4f, \"gb_per_s\": %.1f, "
                  "\"memcpy_gb_per_s\": %.1f, \"copy_kernel_gb_per_s\": %.1f, "
                  "\"percent_of_copy\": %.1f}%s\n",
                  json_string(r.name).c_str(), r.bytes, r.ms, r.gbps, r.memcpy_gbps,
                  r.copy_kernel_gbps, r.percent_of_copy, i + 1 < results.size() ? "," : "");
    f << line;
  }
  f << "  ]\n}\n";
}

int run(int argc, char** argv) {
  Options options;
  if (const int exit_code = parse_options(argc, argv, options); exit_code >= 0) return exit_code;
  const int repeats = options.repeats;
  const std::string& json_path = options.json_path;

  const cudaDeviceProp prop = current_device_properties();
  std::vector<Case> cases = all_cases();
  keep_matching(cases, options.filter);
  size_t largest = 0;
  for (const Case& c : cases) largest = std::max(largest, c.bytes);
  DeviceBytes a(largest), b(largest);
  LATTICA_CUDA_CHECK(cudaMemset(a.data(), 0x5A, largest));
  LATTICA_CUDA_CHECK(cudaMemset(b.data(), 0, largest));
  cudaStream_t stream;
  LATTICA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  std::printf("device: %s, median of %d repeats after %d warm-up launches\n", prop.name, repeats,
              kWarmup);
  std::printf("%-44s %9s %9s %8s %12s %12s %8s\n", "name", "MiB", "ms", "GB/s", "memcpy GB/s",
              "copy GB/s", "% copy");
  std::vector<Result> results;
  for (const Case& c : cases) {
    const void* in = a.data();
    void* out = b.data();
    const size_t bytes = c.bytes;
    const double memcpy_ms = median_ms(
        [&](cudaStream_t s) {
          LATTICA_CUDA_CHECK(cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice, s));
        },
        stream, repeats);
    const double copy_ms =
        median_ms([&](cudaStream_t s) { copy_words(in, out, bytes, s); }, stream, repeats);
    const double ms = median_ms([&](cudaStream_t s) { c.run(in, out, s); }, stream, repeats);
    Result r{c.name,
             bytes,
             ms,
             gb_per_s(bytes, ms),
             gb_per_s(bytes, memcpy_ms),
             gb_per_s(bytes, copy_ms),
             0};
    r.percent_of_copy = 100.0 * r.gbps / std::max(r.memcpy_gbps, r.copy_kernel_gbps);
    std::printf("%-44s %9.1f %9.4f %8.1f %12.1f %12.1f %7.1f%%\n", r.name.c_str(),
                static_cast<double>(bytes) / (1 << 20), r.ms, r.gbps, r.memcpy_gbps,
                r.copy_kernel_gbps, r.percent_of_copy);
    results.push_back(r);
  }
  LATTICA_CUDA_CHECK(cudaStreamDestroy(stream));
  if (!json_path.empty()) {
    write_json(json_path, prop.name, repeats, results);
    std::printf("wrote %s\n", json_path.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace lattica

int main(int argc, char** argv) {
  return lattica::bench::guarded_main("transpose_bench", lattica::run, argc, argv);
}
