// What a decomposed box costs one GPU's phi^4 update (issue 8), without the halo exchange: the
// same site update (Metropolis, float) over the whole 512^3 lattice, and over the interior of
// one rank's box of a 1024x512x512 lattice split along axis 0 (514x512x512 with its ghost
// layers), with the box's global site naming and without it, in one launch per colour and in a
// decomposed pass's three (the two boundary layers, then the deep interior). Site updates per
// ns per sweep (both colours), the median of --repeats timed blocks of 10 sweeps after warm-up,
// with the device's copy bandwidth measured in the same run.
//
//   box_update_bench [--repeats N] [--filter TEXT] [--json FILE]
//
// Needs about 0.6 GiB of device memory.

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/backend/cuda_exec.cuh"
#include "kernels/lattice/checkerboard.hpp"
#include "kernels/lattice/row_block.hpp"
#include "kernels/models/lattice_model.hpp"
#include "kernels/models/phi4.hpp"
#include "tests/bench/bench_support.cuh"

namespace lattica {
namespace {

using namespace bench;
using Model = Phi4Model<float>;
constexpr int kSweepsPerRepeat = 10;
constexpr int64_t kSide = 512;

struct Case {
  std::string name;
  std::function<void(uint64_t sweep)> sweep;  ///< queues both colours of one sweep
};

struct Result {
  std::string name;
  double ms_per_sweep;
  double site_updates_per_ns;
};

int run(int argc, char** argv) {
  Options o;
  o.repeats = 5;
  if (const int code = parse_options(argc, argv, o); code >= 0) return code;
  const CudaExec exec(0);
  const cudaDeviceProp prop = current_device_properties();

  const int64_t whole_extents[3] = {kSide, kSide, kSide};
  const int64_t box_extents[3] = {kSide + 2, kSide, kSide};
  const int64_t global_extents[3] = {2 * kSide, kSide, kSide};
  const int64_t origin[3] = {-1, 0, 0}, ghosts[3] = {1, 0, 0};  // the first of two boxes
  const auto whole = Checkerboard<3>::make(whole_extents);
  const auto box = Checkerboard<3>::make_box(box_extents, global_extents, origin, ghosts);
  auto spins = exec.allocate<float>(box.volume());
  const Phi4Params params{2026, 0.1875483, 1.1, 0.0, 1.0, 1, 3};  // as sim bench
  const int64_t layer = kSide * box.half_last;  // sites of one colour in a layer of axis 0

  // The update of one colour, naming sites globally (named: std::true_type) or locally.
  auto update = [&](auto named, const Checkerboard<3>& lattice, int colour, uint64_t sweep) {
    return UpdateColour<3, Model, decltype(named)::value>{
        lattice, params, spins.data(), nullptr, colour, UpdateAlgorithm::metropolis, 0, sweep};
  };
  const std::false_type local_naming;
  const std::true_type global_naming;
  // Units [first, first + count) of one colour of the box, as a decomposed pass runs them.
  auto in_range = [&](int64_t first, int64_t count, const auto& f) {
    exec.for_each(count, InUnitRange<std::decay_t<decltype(f)>>{first, f});
  };
  std::vector<Case> cases = {
      {"whole 512^3",
       [&](uint64_t s) {
         for (int c = 0; c < 2; ++c)
           exec.for_each(whole.half_volume, update(local_naming, whole, c, s));
       }},
      {"whole 512^3, global naming",
       [&](uint64_t s) {
         for (int c = 0; c < 2; ++c)
           exec.for_each(whole.half_volume, update(global_naming, whole, c, s));
       }},
      {"box interior, local naming",
       [&](uint64_t s) {
         for (int c = 0; c < 2; ++c)
           in_range(layer, kSide * layer, update(local_naming, box, c, s));
       }},
      {"box interior, global naming",
       [&](uint64_t s) {
         for (int c = 0; c < 2; ++c)
           in_range(layer, kSide * layer, update(global_naming, box, c, s));
       }},
      {"box interior, global naming, 3 launches",
       [&](uint64_t s) {
         for (int c = 0; c < 2; ++c) {
           const auto f = update(global_naming, box, c, s);
           in_range(layer, layer, f);
           in_range(kSide * layer, layer, f);
           in_range(2 * layer, (kSide - 2) * layer, f);
         }
       }},
  };
  if (!o.filter.empty()) keep_matching(cases, o.filter);

  // The copy bandwidth of this device, on the field's bytes.
  const size_t bytes = static_cast<size_t>(box.volume()) * sizeof(float) / 16 * 16;
  DeviceBytes copy_to(bytes);
  const double copy_ms =
      median_ms([&](cudaStream_t s) { copy_words(spins.data(), copy_to.data(), bytes, s); },
                exec.stream(), o.repeats);
  const double copy_gb_per_s = 2.0 * static_cast<double>(bytes) / copy_ms / 1e6;
  std::printf("device: %s; copy bandwidth %.1f GB/s; median of %d repeats of %d sweeps\n",
              prop.name, copy_gb_per_s, o.repeats, kSweepsPerRepeat);
  std::printf("%-44s %12s %12s\n", "case", "ms/sweep", "updates/ns");
  std::vector<Result> results;
  const double sites = static_cast<double>(kSide * kSide * kSide);
  for (const Case& c : cases) {
    // Each case starts from its own hot start; the box's ghosts keep theirs (no exchange).
    exec.for_each(box.volume(), Initialize<3, Model, true>{box, params, spins.data(), true});
    uint64_t sweep = 0;
    const double ms = median_ms(
                          [&](cudaStream_t) {
                            for (int i = 0; i < kSweepsPerRepeat; ++i) c.sweep(sweep++);
                          },
                          exec.stream(), o.repeats) /
                      kSweepsPerRepeat;
    results.push_back({c.name, ms, sites / (ms * 1e6)});
    std::printf("%-44s %12.4f %12.2f\n", c.name.c_str(), ms, results.back().site_updates_per_ns);
  }
  if (!o.json_path.empty()) {
    std::ofstream out(o.json_path);
    out << "{\n  \"program\": \"box_update_bench\",\n  \"device\": " << json_string(prop.name)
        << ",\n  \"copy_bandwidth_gb_per_s\": " << copy_gb_per_s
        << ",\n  \"model\": \"phi4 metropolis float, 512^3 sites per sweep\",\n  \"repeats\": "
        << o.repeats << ",\n  \"cases\": [\n";
    for (size_t i = 0; i < results.size(); ++i) {
      out << "    {\"case\": " << json_string(results[i].name)
          << ", \"ms_per_sweep\": " << results[i].ms_per_sweep
          << ", \"site_updates_per_ns\": " << results[i].site_updates_per_ns << "}"
          << (i + 1 < results.size() ? "," : "") << "\n";
    }
    out << "  ]\n}\n";
    if (!out) throw std::runtime_error("cannot write " + o.json_path);
    std::printf("wrote %s\n", o.json_path.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace lattica

int main(int argc, char** argv) {
  return lattica::bench::guarded_main("box_update_bench", lattica::run, argc, argv);
}
