#include "sim/run/multicanonical_run.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

#include "sim/engine/multicanonical/muca_recursion.hpp"
#include "sim/engine/multicanonical/wang_landau.hpp"

namespace lattica {

namespace {

constexpr int64_t kTraceEntries = int64_t(1) << 24;  // walkers x sweeps binned in one call

/// Wang-Landau's starting ln g per bin: zeros (flat weights), or coupling x E (canonical
/// weights exp(-beta E), phi^4 exp(-kappa E), at the model's coupling); zero for the bins
/// outside a continuous window, which have no energy.
std::vector<double> initial_log_g(const Config& c, double coupling,
                                  const std::vector<double>& energy) {
  std::vector<double> lng(energy.size(), 0.0);
  if (c.muca_initial_weights != "canonical") return lng;
  for (size_t k = 0; k < energy.size(); ++k) {
    if (std::isfinite(energy[k])) lng[k] = coupling * energy[k];
  }
  return lng;
}

/// Where a run is: its phase and how far into it. In the order of a run: Wang-Landau,
/// refinement, thermalization, production (refinement numbered last, after the others).
enum class MucaPhase : int32_t {
  wang_landau = 0,
  thermalization = 1,
  production = 2,
  refinement = 3
};

/// Adds every walker's histogram of the sweeps in `trace` ([sweep * walkers + walker], bins)
/// to counts[walker * span + bin - window.first] (bins outside the window are not counted).
void count_walker_bins(const std::vector<int32_t>& trace, int64_t walkers, MucaWindow window,
                       std::vector<uint32_t>& counts) {
  const int64_t span = window.last - window.first + 1;
  for (size_t i = 0; i < trace.size(); ++i) {
    const int64_t w = static_cast<int64_t>(i % static_cast<size_t>(walkers));
    if (window.contains(trace[i])) ++counts[w * span + trace[i] - window.first];
  }
}

}  // namespace

WalkerSettings walker_settings(const Config& c) {
  WalkerSettings s;
  s.seed = c.seed;
  s.model = c.model_kind;
  s.q = c.model_kind == "potts" ? c.q : 2;
  s.n = c.n;
  s.single_precision = c.precision == "float";
  s.step = c.step;
  s.hits = c.hits;
  s.lambda = c.lambda;
  s.energy_bins = c.muca_energy_bins();
  s.dims = c.dims;
  s.walkers = c.muca_walkers;
  s.hot = c.start == "hot";
  s.threads = c.threads;
  s.cuda_device = c.device;
  return s;
}

std::vector<double> muca_bin_energies(const Config& c) {
  std::vector<double> energy;
  if (!c.muca_continuous()) {
    const int64_t bonds = static_cast<int64_t>(c.dims.size()) * c.volume();
    const int q = c.model_kind == "potts" ? c.q : 2;
    for (int64_t k = 0; k <= bonds; ++k)
      energy.push_back(static_cast<double>(muca_bin_energy(q, bonds, k)));
    return energy;
  }
  const MucaEnergyBins bins = c.muca_energy_bins();
  energy.push_back(std::numeric_limits<double>::quiet_NaN());
  for (int32_t k = 0; k < bins.count; ++k)
    energy.push_back(bins.low + (static_cast<double>(k) + 0.5) * bins.width);
  energy.push_back(std::numeric_limits<double>::quiet_NaN());
  return energy;
}

MulticanonicalRecord run_multicanonical(const Config& c, WalkerEnsemble& walkers, bool quiet) {
  bool stopped = false;
  return run_multicanonical(c, walkers, quiet, nullptr, {}, &stopped);
}

MulticanonicalRecord run_multicanonical(const Config& c, WalkerEnsemble& walkers, bool quiet,
                                        const MulticanonicalCheckpoint* resume,
                                        const MulticanonicalStep& step, bool* stopped) {
  const auto start = std::chrono::steady_clock::now();
  *stopped = false;
  MulticanonicalRecord r;
  r.energy = muca_bin_energies(c);
  const auto bins = static_cast<int64_t>(r.energy.size());
  r.model = c.model_kind;
  r.q = c.model_kind == "potts" ? c.q : 2;
  r.n = c.model_kind == "on" ? c.n : 1;
  r.coupling = c.model_kind == "phi4" ? "kappa" : "beta";
  r.coupling_value = c.model_kind == "phi4" ? c.kappa : c.beta;
  if (c.muca_continuous()) {
    const MucaEnergyBins b = c.muca_energy_bins();
    r.bin_low = b.low;
    r.bin_width = b.width;
  }
  r.volume = c.volume();
  r.walkers = c.muca_walkers;
  const std::array<int64_t, 2> window_bins = c.muca_window_bins();
  const MucaWindow window{window_bins[0], window_bins[1]};
  r.window_first_bin = window.first;
  r.window_last_bin = window.last;
  r.initial_weights = c.muca_initial_weights;
  r.lnf_initial = c.muca_lnf_initial;
  r.lnf_final = c.muca_lnf_final;
  r.flatness = c.muca_flatness;
  r.sweeps_per_iteration = c.muca_sweeps_per_iteration;
  r.thermalization = c.thermalization;
  r.measure_every = c.measure_every;
  r.refine_sweeps = c.muca_refine_iterations > 0 ? c.muca_refine_sweeps : 0;
  r.histogram.assign(static_cast<size_t>(bins), 0);

  const WangLandauSettings settings{c.muca_lnf_initial, c.muca_lnf_final, c.muca_flatness};
  WangLandau wl(initial_log_g(c, r.coupling_value, r.energy), window, settings);
  uint64_t sweep = 0;
  MucaPhase phase = MucaPhase::wang_landau;
  int64_t wang_landau_sweeps = 0, thermalized = 0;
  // The refinement, made once Wang-Landau is over (from its estimate and visited bins).
  std::optional<MucaRecursion> recursion;
  MucaRecursionState resumed_recursion;
  if (resume) {
    if (resume->log_g.size() != static_cast<size_t>(bins))
      throw std::invalid_argument("multicanonical checkpoint: another number of energy bins");
    wl = WangLandau(WangLandauState{resume->lnf, resume->stages, resume->log_g,
                                    resume->stage_counts, resume->visited},
                    window, settings);
    walkers.set_spins(resume->spins);
    sweep = resume->sweep;
    phase = static_cast<MucaPhase>(resume->phase);
    wang_landau_sweeps = resume->wang_landau_sweeps;
    if (!resume->refine_pair_weight.empty()) {
      resumed_recursion = MucaRecursionState{resume->refine_iterations, resume->refine_pair_weight,
                                             resume->refine_pair_sum};
    }
    if (c.muca_refine_iterations == 0 && !resume->refine_pair_weight.empty())
      throw std::invalid_argument("multicanonical checkpoint: of a run with a refinement");
    if (phase == MucaPhase::thermalization) thermalized = resume->phase_done;
    if (phase != MucaPhase::wang_landau) r.log_weight = resume->log_weight;
    if (phase == MucaPhase::production) {
      r.histogram = resume->histogram;
      r.sweeps = resume->sweeps;
      r.energy_series = resume->energy_series;
      r.order_series = resume->order_series;
    }
  }
  const auto checkpoint = [&] {
    MulticanonicalCheckpoint k;
    k.chain_config = c.chain_toml;
    k.sweep = sweep;
    k.phase = static_cast<int32_t>(phase);
    k.phase_done = phase == MucaPhase::wang_landau      ? wang_landau_sweeps
                   : phase == MucaPhase::refinement     ? recursion->state().iterations
                   : phase == MucaPhase::thermalization ? thermalized
                                                        : static_cast<int64_t>(r.sweeps.size());
    k.wang_landau_sweeps = wang_landau_sweeps;
    WangLandauState s = wl.state();
    k.lnf = s.lnf;
    k.stages = s.stages;
    k.log_g = std::move(s.log_g);
    k.stage_counts = std::move(s.stage_counts);
    k.visited = std::move(s.visited);
    if (recursion) {
      k.refine_iterations = recursion->state().iterations;
      k.refine_pair_weight = recursion->state().pair_weight;
      k.refine_pair_sum = recursion->state().pair_sum;
    }
    k.log_weight = r.log_weight;
    if (phase == MucaPhase::production) {
      k.histogram = r.histogram;
      k.sweeps = r.sweeps;
      k.energy_series = r.energy_series;
      k.order_series = r.order_series;
    }
    k.spins = walkers.spins();
    return k;
  };
  // After each piece of work: the caller may checkpoint, or stop the run there.
  const auto may_stop = [&](uint64_t previous, bool last) {
    return step && (*stopped = step(previous, sweep, last, checkpoint));
  };

  if (phase == MucaPhase::wang_landau) {
    while (!wl.done() && wang_landau_sweeps < c.muca_max_sweeps) {
      walkers.set_weights(muca_log_weights(wl.log_g(), window), window);
      const int64_t n =
          std::min(c.muca_sweeps_per_iteration, c.muca_max_sweeps - wang_landau_sweeps);
      const uint64_t previous = sweep;
      const std::vector<uint64_t> h = walkers.sweep(sweep, n);
      sweep += static_cast<uint64_t>(n);
      wang_landau_sweeps += n;
      if (wl.add(h) && !quiet) {
        std::fprintf(stderr, "sim: Wang-Landau stage %d flat after %lld sweeps; ln f = %.3g\n",
                     wl.stages(), static_cast<long long>(wang_landau_sweeps), wl.lnf());
      }
      if (may_stop(previous, false)) return r;
    }
    if (!wl.done() && !quiet) {
      std::fprintf(stderr,
                   "sim: warning: Wang-Landau reached ln f = %.3g, not %.3g, within "
                   "multicanonical.max_sweeps = %lld; production uses these weights\n",
                   wl.lnf(), c.muca_lnf_final, static_cast<long long>(c.muca_max_sweeps));
    }
    r.log_weight = muca_log_weights(wl.log_g(), window);
    phase = c.muca_refine_iterations > 0 ? MucaPhase::refinement : MucaPhase::thermalization;
  }
  r.lnf_reached = wl.lnf();
  r.stages = wl.stages();
  r.converged = wl.done();
  r.wang_landau_sweeps = wang_landau_sweeps;
  r.wang_landau_log_g = wl.log_g();
  r.visited.assign(wl.visited().begin(), wl.visited().end());

  // Sweeps in calls small enough for the trace buffer.
  const int64_t chunk = std::max<int64_t>(1, kTraceEntries / r.walkers);
  if (c.muca_refine_iterations > 0) {
    recursion.emplace(wl.log_g(), wl.visited(), window);
    if (!resumed_recursion.pair_weight.empty()) recursion->restore(resumed_recursion);
    r.refine_prior_weight = recursion->prior_weight();
  }
  if (phase == MucaPhase::refinement) {
    const int64_t span = window.last - window.first + 1;
    std::vector<uint32_t> counts;
    while (recursion->state().iterations < c.muca_refine_iterations) {
      walkers.set_weights(r.log_weight, window);
      const uint64_t previous = sweep;
      counts.assign(static_cast<size_t>(r.walkers * span), 0);
      for (int64_t done = 0; done < c.muca_refine_sweeps;) {
        const int64_t n = std::min(chunk, c.muca_refine_sweeps - done);
        walkers.sweep(sweep, n);
        count_walker_bins(walkers.trace(), r.walkers, window, counts);
        sweep += static_cast<uint64_t>(n);
        done += n;
      }
      for (int64_t w = 0; w < r.walkers; ++w)
        recursion->add(counts.data() + w * span, r.log_weight);
      recursion->end_iteration();
      const std::vector<double> log_g = recursion->log_g();
      if (!quiet && recursion->nodes().size() >= 2) {
        // ln g across the window (its first and last visited bins): what the walkers'
        // populations distort in Wang-Landau, and what the refinement corrects.
        const std::vector<int64_t>& nodes = recursion->nodes();
        const int64_t a = nodes.front(), b = nodes.back();
        uint64_t walkers_visiting_both = 0;
        for (int64_t w = 0; w < r.walkers; ++w)
          walkers_visiting_both +=
              counts[w * span + a - window.first] > 0 && counts[w * span + b - window.first] > 0;
        std::fprintf(stderr,
                     "sim: refinement iteration %lld of %lld: ln g(last) - ln g(first) = %.6g "
                     "(Wang-Landau %.6g); %llu walkers visited both ends of the window\n",
                     static_cast<long long>(recursion->state().iterations),
                     static_cast<long long>(c.muca_refine_iterations), log_g[b] - log_g[a],
                     wl.log_g()[b] - wl.log_g()[a],
                     static_cast<unsigned long long>(walkers_visiting_both));
      }
      r.log_weight = muca_log_weights(log_g, window);
      if (recursion->state().iterations == c.muca_refine_iterations)
        phase = MucaPhase::thermalization;
      if (may_stop(previous, false)) return r;
    }
    phase = MucaPhase::thermalization;
  }
  if (recursion) {
    r.refine_iterations = recursion->state().iterations;
    r.refine_pair_weight = recursion->state().pair_weight;
  }
  walkers.set_weights(r.log_weight, window);
  if (phase == MucaPhase::thermalization) {
    while (thermalized < c.thermalization) {
      const int64_t n = std::min(chunk, c.thermalization - thermalized);
      const uint64_t previous = sweep;
      walkers.sweep(sweep, n);
      sweep += static_cast<uint64_t>(n);
      thermalized += n;
      if (may_stop(previous, false)) return r;
    }
    // The production samples the window only: a walker still approaching it would bias H(E).
    const std::vector<int32_t> start_bins = walkers.bins();
    const auto outside = std::count_if(start_bins.begin(), start_bins.end(),
                                       [&](int32_t k) { return !window.contains(k); });
    if (outside > 0) {
      throw std::runtime_error(
          std::to_string(outside) + " of " + std::to_string(r.walkers) +
          " multicanonical walkers are still outside multicanonical.window after " +
          std::to_string(sweep) +
          " sweeps (Wang-Landau and thermalization); raise run.thermalization or widen the "
          "window");
    }
    phase = MucaPhase::production;
  }
  while (static_cast<int64_t>(r.sweeps.size()) < c.measurements) {
    const uint64_t previous = sweep;
    for (int64_t done = 0; done < c.measure_every;) {
      const int64_t n = std::min(chunk, c.measure_every - done);
      const std::vector<uint64_t> h = walkers.sweep(sweep, n);
      for (size_t b = 0; b < h.size(); ++b) r.histogram[b] += static_cast<int64_t>(h[b]);
      sweep += static_cast<uint64_t>(n);
      done += n;
    }
    r.sweeps.push_back(static_cast<int64_t>(sweep));
    const std::vector<double> energies = walkers.energies();
    r.energy_series.insert(r.energy_series.end(), energies.begin(), energies.end());
    const std::vector<double> orders = walkers.orders();
    r.order_series.insert(r.order_series.end(), orders.begin(), orders.end());
    const bool last = static_cast<int64_t>(r.sweeps.size()) == c.measurements;
    if (may_stop(previous, last) && !last) return r;
  }
  *stopped = false;  // a stop asked for at the last measurement: the run is done anyway
  r.histogram_seconds = walkers.histogram_seconds();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace lattica
