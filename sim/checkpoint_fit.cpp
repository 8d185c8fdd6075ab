#include "sim/checkpoint_fit.hpp"

#include <cmath>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/config.hpp"
#include "sim/engine/tempering_ladder.hpp"

namespace lattica {

namespace {

/// The first site of `configuration` (replica-major, lexicographic, `site_size` bytes a site)
/// whose state the model cannot reach, described; empty when there is none.
std::string impossible_site(const std::vector<unsigned char>& configuration, const Config& config,
                            size_t site_size, int64_t volume) {
  const size_t sites = configuration.size() / site_size;
  auto where = [&](size_t i) {
    return "site " + std::to_string(static_cast<int64_t>(i) % volume) + " of replica " +
           std::to_string(static_cast<int64_t>(i) / volume);
  };
  const bool ising = config.model_kind == "ising", potts = config.model_kind == "potts",
             on = config.model_kind == "on", single = config.precision == "float";
  // The i-th real number of the configuration (O(n) and phi^4 store float or double).
  auto real = [&](size_t i) {
    if (single) {
      float x;
      std::memcpy(&x, configuration.data() + i * sizeof x, sizeof x);
      return static_cast<double>(x);
    }
    double x;
    std::memcpy(&x, configuration.data() + i * sizeof x, sizeof x);
    return x;
  };
  auto length = [&](size_t i) {
    double norm2 = 0;
    for (int k = 0; k < config.n; ++k) norm2 += real(i * config.n + k) * real(i * config.n + k);
    return std::sqrt(norm2);
  };
  // Spins are renormalised after every move: a float's rounding is far below the tolerance.
  auto reachable = [&](size_t i) {
    if (ising) return configuration[i] == 1 || configuration[i] == 0xFF;  // +1 or -1
    if (potts) return configuration[i] < config.q;
    if (on) return std::fabs(length(i) * length(i) - 1.0) <= 1e-4;
    return static_cast<bool>(std::isfinite(real(i)));
  };
  for (size_t i = 0; i < sites; ++i) {
    if (reachable(i)) continue;
    std::ostringstream os;
    os << where(i);
    if (ising) {
      os << " holds " << int(static_cast<int8_t>(configuration[i]))
         << ", but an Ising spin is +1 or -1";
    } else if (potts) {
      os << " holds " << int(configuration[i])
         << ", but a Potts state is 0 .. q-1 with q = " << config.q;
    } else if (on) {
      os << " is not a unit vector (length " << length(i) << ")";
    } else {
      os << " holds " << real(i) << ", which is not a finite field value";
    }
    return os.str();
  }
  return "";
}

}  // namespace

void check_checkpoint_fits(const Checkpoint& c, const Config& config, const std::string& path) {
  std::vector<std::string> problems;
  auto expect = [&](int64_t found, int64_t wanted, const std::string& what) {
    if (found != wanted) {
      problems.push_back(what + ": " + std::to_string(found) + " at sweep " +
                         std::to_string(c.sweep) + ", but the run has " + std::to_string(wanted) +
                         " by then");
    }
  };
  // Measurements so far, and those of them that took the spectral measurements (the first,
  // then every k-th).
  const int64_t measured = c.sweep > config.thermalization
                               ? (c.sweep - config.thermalization) / config.measure_every
                               : 0;
  auto every = [&](bool on, int64_t k) { return on ? (measured + k - 1) / k : 0; };
  const int64_t replicas = config.engine_settings().replicas;  // tempered: every rung's
  const EngineState& e = c.engine;
  expect(e.measurements, measured, "the engine's measurements");
  expect(c.output.measurements, measured, "the output's measurements");
  const int64_t spectra = every(config.structure_factor, config.structure_factor_every);
  expect(c.output.structure_factor_series, spectra, "the output's structure factor rows");
  if (e.structure_factor.samples > 0 || spectra > 0)
    expect(e.structure_factor.samples, spectra * replicas, "the structure factor's samples");
  expect(c.output.timeslices, every(config.timeslice, config.timeslice_every),
         "the output's time-slice rows");

  const std::vector<std::string> names =
      config.model_kind == "ising"   ? std::vector<std::string>{"energy", "magnetization"}
      : config.model_kind == "potts" ? std::vector<std::string>{"energy"}
                                     : std::vector<std::string>{};
  std::vector<std::string> found;
  for (const ExactHistogram& h : e.histograms) {
    found.push_back(h.name);
    expect(h.samples, measured * replicas, "the samples of histogram '" + h.name + "'");
  }
  if (found != names)
    problems.push_back("its histograms are not the " + config.model_kind + " model's");

  const StructureFactorSums& sf = e.structure_factor;
  if (sf.samples > 0) {
    const std::vector<int64_t>& dims = config.dims;
    const int64_t modes = config.volume() / dims.back() * (dims.back() / 2 + 1);
    const size_t components = config.model_kind == "potts" ? 2
                              : config.model_kind == "on"  ? static_cast<size_t>(config.n)
                                                           : 1;
    // A decomposed run's parts hold the rows of the sums (read_resumed_configuration reads them).
    const size_t held =
        sf.power_sum.empty() && !c.parts.generation.empty() ? 0 : static_cast<size_t>(modes);
    if (sf.dims != dims || sf.power_sum.size() != held || sf.power_squares.size() != held ||
        sf.mean_field_sum.size() != components)
      problems.push_back("its structure factor's sums do not have the lattice's shape");
  }

  if (config.rungs() > 0 || e.tempering.rungs > 0) {  // the permutation fits the ladder
    try {
      check_tempering_state(e.tempering, config.rungs(), static_cast<size_t>(replicas));
    } catch (const std::invalid_argument&) {
      problems.push_back("its parallel-tempering state (" + std::to_string(e.tempering.rungs) +
                         " rungs) does not fit this run's ladder of " +
                         std::to_string(config.rungs()) + " rungs");
    }
  }

  const size_t site_size = site_bytes(config.engine_settings());
  const size_t bytes = static_cast<size_t>(replicas * config.volume()) * site_size;
  const CheckpointParts& parts = c.parts;
  if (!parts.generation.empty()) {  // the configuration is in the parts: their shape here
    if (parts.dims != config.dims || parts.replicas != replicas || parts.site_bytes != site_size)
      problems.push_back("its parts hold " + std::to_string(parts.replicas) + " replica(s) of " +
                         std::to_string(volume_of(parts.dims)) + " sites of " +
                         std::to_string(parts.site_bytes) + " bytes, not this run's lattice");
  } else if (e.configuration.size() != bytes) {
    problems.push_back("the configuration has " + std::to_string(e.configuration.size()) +
                       " bytes, where " + std::to_string(replicas) + " replica(s) of " +
                       std::to_string(config.volume()) + " sites need " + std::to_string(bytes));
  } else if (const std::string site =
                 impossible_site(e.configuration, config, site_size, config.volume());
             !site.empty()) {
    problems.push_back("the configuration's " + site);
  }
  if (problems.empty()) return;
  std::string list;
  for (const std::string& p : problems) list += (list.empty() ? "" : "; ") + p;
  throw CheckpointError("checkpoint " + path + " cannot continue this run: " + list);
}

void check_region_fits(const std::vector<unsigned char>& region, int64_t sites,
                       const Config& config, const std::string& path) {
  const size_t site_size = site_bytes(config.engine_settings());
  const std::string site = impossible_site(region, config, site_size, sites);
  if (!site.empty())
    throw CheckpointError("checkpoint " + path + " cannot continue this run: in this rank's box, " +
                          site);
}

}  // namespace lattica
