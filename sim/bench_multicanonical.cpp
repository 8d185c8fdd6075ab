// `sim bench --kernel multicanonical`: multicanonical walkers (a GPU warp or thread each) on a
// small lattice of any model, in walker-site updates per ns, with the share of the time the shared
// histogram takes, and the CPU backend's rate for comparison.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "sim/bench.hpp"
#include "sim/engine/engine.hpp"
#include "sim/engine/multicanonical/walker_ensemble.hpp"
#include "sim/engine/multicanonical/wang_landau.hpp"
#include "sim/version.hpp"

namespace lattica {

namespace {

struct WalkerTiming {
  double seconds_per_sweep = 0;   ///< median over the repeats
  double histogram_fraction = 0;  ///< of all timed seconds
};

/// Canonical log weights at a coupling where the acceptances are like a multicanonical run's:
/// Ising and Potts at their transitions (ln W(k) = beta k for Potts, E = -k; Ising's E = dV - 2k
/// doubles the slope), O(n) at beta = 1 and phi^4 at kappa = 0.3 over their windows.
std::vector<double> bench_log_weights(const WalkerSettings& s, int64_t bonds) {
  if (!s.continuous()) {
    const double beta = s.q == 2 ? 2 * 0.4406867935 : std::log(1 + std::sqrt(double(s.q)));
    std::vector<double> w(static_cast<size_t>(bonds + 1));
    for (size_t k = 0; k < w.size(); ++k) w[k] = beta * static_cast<double>(k);
    return w;
  }
  const double coupling = s.model == "phi4" ? 0.3 : 1.0;
  const MucaEnergyBins& b = s.energy_bins;
  std::vector<double> w(static_cast<size_t>(b.count + 2), std::nan(""));
  for (int32_t k = 1; k <= b.count; ++k) w[k] = -coupling * (b.low + (k - 0.5) * b.width);
  return w;
}

/// Times sweeps of `walkers` with bench_log_weights(): median seconds per sweep over the
/// repeats.
WalkerTiming time_walkers(WalkerEnsemble& walkers, const WalkerSettings& s, int repeats) {
  const int d = static_cast<int>(s.dims.size());
  int64_t volume = 1;
  for (int64_t l : s.dims) volume *= l;
  const MucaWindow window =
      s.continuous() ? MucaWindow{1, s.energy_bins.count} : MucaWindow{0, d * volume};
  walkers.set_weights(bench_log_weights(s, d * volume), window);
  uint64_t sweep = 0;
  walkers.sweep(sweep++, 1);  // warm-up
  auto timed = [&](int64_t n) {
    const auto start = std::chrono::steady_clock::now();
    walkers.sweep(sweep, n);
    sweep += static_cast<uint64_t>(n);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  const double one = std::max(timed(1), 1e-7);
  const auto count = static_cast<int64_t>(std::clamp(0.2 / one, 1.0, 2000.0));
  const double histogram_before = walkers.histogram_seconds();
  std::vector<double> times;
  double total = 0;
  for (int r = 0; r < repeats; ++r) {
    const double t = timed(count);
    total += t;
    times.push_back(t / static_cast<double>(count));
  }
  std::sort(times.begin(), times.end());
  return {times[times.size() / 2], (walkers.histogram_seconds() - histogram_before) / total};
}

}  // namespace

int run_multicanonical_bench(const BenchOptions& o) {
  std::string reason;
  if (cuda_device_count(reason) == 0) {
    std::fprintf(stderr, "sim bench: error: %s; the benchmark times the GPU\n", reason.c_str());
    return 2;
  }
  WalkerSettings s;
  s.seed = 1;
  s.model = o.model;
  s.q = o.model == "potts" ? o.q : 2;
  s.n = o.n;
  s.single_precision = o.precision == "float";
  s.lambda = 1.0;
  s.dims = o.dims.empty() ? std::vector<int64_t>{16, 16} : o.dims;
  // Continuous models: 256 bins over E/V in [-d, d] (O(n)) or [-3d, d] (phi^4).
  const double d = static_cast<double>(s.dims.size());
  double volume = 1;
  for (int64_t l : s.dims) volume *= static_cast<double>(l);
  const double low = o.model == "phi4" ? -3 * d : -d;
  s.energy_bins = MucaEnergyBins{low * volume, (d - low) * volume / 256, 256};
  s.walkers = o.walkers;
  s.cuda_device = o.device;
  WalkerSettings cpu_settings = s;
  cpu_settings.dims = o.cpu_dims.empty() ? s.dims : o.cpu_dims;
  cpu_settings.walkers = std::min<int64_t>(o.walkers, 256);
  const auto gpu = make_cuda_walkers(s);
  const WalkerTiming g = time_walkers(*gpu, s, o.repeats);
  const auto cpu = make_cpu_walkers(cpu_settings);
  const WalkerTiming c = time_walkers(*cpu, cpu_settings, 3);
  auto rate = [](const WalkerSettings& w, const WalkerTiming& t) {
    double updates = static_cast<double>(w.walkers);
    for (int64_t l : w.dims) updates *= static_cast<double>(l);
    return updates / (t.seconds_per_sweep * 1e9);
  };
  auto lattice = [](const WalkerSettings& w) {
    std::string text;
    for (int64_t l : w.dims) text += (text.empty() ? "" : "x") + std::to_string(l);
    return text + " x " + std::to_string(w.walkers) + " walkers";
  };
  const std::string detail = o.model == "potts" ? " q = " + std::to_string(s.q)
                             : o.model == "on"  ? " n = " + std::to_string(s.n)
                                                : "";
  const std::string precision = s.continuous() ? (s.single_precision ? ", float" : ", double") : "";
  const double copy = cuda_copy_bandwidth(o.device, size_t(1) << 30, 20);
  std::printf("sim bench: %s, multicanonical %s%s%s; copy bandwidth %.1f GB/s\n",
              gpu->device_name().c_str(), o.model.c_str(), detail.c_str(), precision.c_str(),
              copy / 1e9);
  std::printf("%-8s %-32s %14s %12s %11s\n", "backend", "lattice", "updates/ns", "s/sweep",
              "histogram");
  std::printf("%-8s %-32s %14.3f %12.4g %10.1f%%\n", "cuda", lattice(s).c_str(), rate(s, g),
              g.seconds_per_sweep, 100 * g.histogram_fraction);
  std::printf("%-8s %-32s %14.4f %12.4g %10.1f%%\n", "cpu", lattice(cpu_settings).c_str(),
              rate(cpu_settings, c), c.seconds_per_sweep, 100 * c.histogram_fraction);
  std::printf(
      "updates/ns: walker-site updates (walkers x sites per sweep); histogram: the share of the "
      "time spent binning every walker's energy after every sweep into the shared histogram "
      "(and copying it to the host).\n");
  if (!o.json_path.empty()) {
    std::ofstream out(o.json_path);
    auto row = [&](const char* backend, const WalkerSettings& w, const WalkerTiming& t) {
      std::string dims;
      for (int64_t l : w.dims) dims += (dims.empty() ? "" : "x") + std::to_string(l);
      out << "    {\"backend\": \"" << backend << "\", \"lattice\": \"" << dims
          << "\", \"walkers\": " << w.walkers << ", \"seconds_per_sweep\": " << t.seconds_per_sweep
          << ", \"walker_site_updates_per_ns\": " << rate(w, t)
          << ", \"histogram_fraction\": " << t.histogram_fraction << "}";
    };
    out << "{\n  \"program\": \"sim bench --kernel multicanonical\",\n  \"version\": \""
        << kLatticaVersion << " (" << kLatticaGitCommit << ")\",\n  \"device\": \""
        << gpu->device_name() << "\",\n  \"copy_bandwidth_gb_per_s\": " << copy / 1e9
        << ",\n  \"model\": \"" << o.model << detail << precision
        << "\",\n  \"repeats\": " << o.repeats << ",\n  \"rates\": [\n";
    row("cuda", s, g);
    out << ",\n";
    row("cpu", cpu_settings, c);
    out << "\n  ]\n}\n";
    if (!out) throw std::runtime_error("cannot write " + o.json_path);
  }
  return 0;
}

}  // namespace lattica
