#include "sim/run/multicanonical_run.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "sim/engine/multicanonical/wang_landau.hpp"

namespace lattica {

namespace {

constexpr int64_t kTraceEntries = int64_t(1) << 24;  // walkers x sweeps binned in one call

/// Runs `sweeps` sweeps from *sweep on, in calls small enough for the trace buffer; adds the
/// histogram of the bins to `counts` (when given) and advances *sweep.
void run_sweeps(WalkerEnsemble& walkers, int64_t n_walkers, int64_t sweeps, uint64_t* sweep,
                std::vector<int64_t>* counts) {
  const int64_t chunk = std::max<int64_t>(1, kTraceEntries / n_walkers);
  for (int64_t done = 0; done < sweeps;) {
    const int64_t n = std::min(chunk, sweeps - done);
    const std::vector<uint64_t> h = walkers.sweep(*sweep, n);
    if (counts) {
      for (size_t b = 0; b < h.size(); ++b) (*counts)[b] += static_cast<int64_t>(h[b]);
    }
    *sweep += static_cast<uint64_t>(n);
    done += n;
  }
}

/// Wang-Landau's starting ln g per bin: zeros (flat weights), or beta E (canonical weights
/// exp(-beta E) at model.beta).
std::vector<double> initial_log_g(const Config& c, int64_t bins) {
  std::vector<double> lng(static_cast<size_t>(bins), 0.0);
  if (c.muca_initial_weights != "canonical") return lng;
  const bool ising = c.model_kind == "ising";
  for (int64_t k = 0; k < bins; ++k)
    lng[k] = c.beta * static_cast<double>(muca_energy(ising, bins - 1, k));
  return lng;
}

/// The Wang-Landau phase: fills the record's Wang-Landau fields and returns ln g.
std::vector<double> wang_landau_phase(const Config& c, WalkerEnsemble& walkers, int d, int64_t bins,
                                      MucaWindow window, uint64_t* sweep, MulticanonicalRecord& r,
                                      bool quiet) {
  WangLandau wl(initial_log_g(c, bins), window,
                {c.muca_lnf_initial, c.muca_lnf_final, c.muca_flatness});
  int64_t done = 0;
  while (!wl.done() && done < c.muca_max_sweeps) {
    walkers.set_thresholds(muca_thresholds(muca_log_weights(wl.log_g(), window), window, d));
    const int64_t n = std::min(c.muca_sweeps_per_iteration, c.muca_max_sweeps - done);
    const std::vector<uint64_t> h = walkers.sweep(*sweep, n);
    *sweep += static_cast<uint64_t>(n);
    done += n;
    if (wl.add(h) && !quiet) {
      std::fprintf(stderr, "sim: Wang-Landau stage %d flat after %lld sweeps; ln f = %.3g\n",
                   wl.stages(), static_cast<long long>(done), wl.lnf());
    }
  }
  r.lnf_initial = c.muca_lnf_initial;
  r.lnf_final = c.muca_lnf_final;
  r.flatness = c.muca_flatness;
  r.lnf_reached = wl.lnf();
  r.stages = wl.stages();
  r.converged = wl.done();
  r.sweeps_per_iteration = c.muca_sweeps_per_iteration;
  r.wang_landau_sweeps = done;
  r.wang_landau_log_g = wl.log_g();
  r.visited.assign(wl.visited().begin(), wl.visited().end());
  if (!r.converged && !quiet) {
    std::fprintf(stderr,
                 "sim: warning: Wang-Landau reached ln f = %.3g, not %.3g, within "
                 "multicanonical.max_sweeps = %lld; production uses these weights\n",
                 wl.lnf(), c.muca_lnf_final, static_cast<long long>(c.muca_max_sweeps));
  }
  return wl.log_g();
}

}  // namespace

WalkerSettings walker_settings(const Config& c) {
  WalkerSettings s;
  s.seed = c.seed;
  s.q = c.model_kind == "potts" ? c.q : 2;
  s.dims = c.dims;
  s.walkers = c.muca_walkers;
  s.hot = c.start == "hot";
  s.threads = c.threads;
  s.cuda_device = c.device;
  return s;
}

int64_t muca_energy(bool ising, int64_t bonds, int64_t k) { return ising ? bonds - 2 * k : -k; }

MulticanonicalRecord run_multicanonical(const Config& c, WalkerEnsemble& walkers, bool quiet) {
  const auto start = std::chrono::steady_clock::now();
  const int d = static_cast<int>(c.dims.size());
  const int64_t volume = c.volume();
  const int64_t bins = d * volume + 1;
  const bool ising = c.model_kind == "ising";
  MulticanonicalRecord r;
  r.model = c.model_kind;
  r.q = ising ? 2 : c.q;
  r.volume = volume;
  r.walkers = c.muca_walkers;
  const std::array<int64_t, 2> window_bins = c.muca_window_bins();
  const MucaWindow window{window_bins[0], window_bins[1]};
  r.window_first_bin = window.first;
  r.window_last_bin = window.last;
  r.initial_weights = c.muca_initial_weights;
  uint64_t sweep = 0;
  r.log_weight =
      muca_log_weights(wang_landau_phase(c, walkers, d, bins, window, &sweep, r, quiet), window);
  walkers.set_thresholds(muca_thresholds(r.log_weight, window, d));
  for (int64_t k = 0; k < bins; ++k) r.energy.push_back(muca_energy(ising, bins - 1, k));

  run_sweeps(walkers, r.walkers, c.thermalization, &sweep, nullptr);
  // The production samples the window only: a walker still approaching it would bias H(E).
  const std::vector<int32_t> start_bins = walkers.bins();
  const auto outside = std::count_if(start_bins.begin(), start_bins.end(),
                                     [&](int32_t k) { return !window.contains(k); });
  if (outside > 0) {
    throw std::runtime_error(
        std::to_string(outside) + " of " + std::to_string(r.walkers) +
        " multicanonical walkers are still outside multicanonical.window after " +
        std::to_string(sweep) +
        " sweeps (Wang-Landau and thermalization); raise run.thermalization or widen the window");
  }
  r.thermalization = c.thermalization;
  r.measure_every = c.measure_every;
  r.histogram.assign(static_cast<size_t>(bins), 0);
  for (int64_t m = 0; m < c.measurements; ++m) {
    run_sweeps(walkers, r.walkers, c.measure_every, &sweep, &r.histogram);
    r.sweeps.push_back(static_cast<int64_t>(sweep));
    for (int32_t k : walkers.bins())
      r.energy_series.push_back(static_cast<int32_t>(muca_energy(ising, bins - 1, k)));
    const std::vector<int32_t> orders = walkers.orders();
    r.order_series.insert(r.order_series.end(), orders.begin(), orders.end());
  }
  r.histogram_seconds = walkers.histogram_seconds();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace lattica
