// One point of an input: the schema's keys, then the rules a table row cannot state because
// they involve several keys (or the whole run).

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <set>
#include <sstream>

#include "sim/config/internal.hpp"

namespace lattica::config {

namespace {

/// A model coupling that a ladder replaces: model.<key> is not read (giving both is an error),
/// and holds the ladder's first rung once read. Returns the keys not to read.
std::set<std::string> replace_by_ladders(Reader& r) {
  std::set<std::string> replaced;
  for (const TemperedCoupling& t : tempered_couplings()) {
    if (!r.find("tempering", t.key)) continue;
    replaced.insert(std::string("model.") + t.key);
    if (const toml::node* given = r.find("model", t.key)) {
      r.fail(*given, std::string("model.") + t.key,
             std::string("give either model.") + t.key + " or the ladder tempering." + t.key +
                 " (which sets it per rung), not both");
    }
  }
  return replaced;
}

/// Under [annealing], the keys it replaces (replaced_by_annealing): not to read.
std::set<std::string> replaced_by_annealing(Reader& r) {
  if (!r.find("annealing", "beta")) return {};
  std::set<std::string> replaced;
  for (const auto& [section, key] : keys_annealing_replaces())
    replaced.insert(std::string(section) + "." + key);
  return replaced;
}

/// Population annealing's rules: a schedule from beta = 0 upwards (ln Z is known there), a hot
/// start (an exact sample at beta = 0), whole populations, and none of the keys of a run of
/// measurements.
void check_annealing(Config& c, Reader& r) {
  if (!c.annealing()) return;
  const toml::node& schedule = *r.find("annealing", "beta");
  for (const auto& [section, key] : keys_annealing_replaces()) {
    const std::string name = std::string(section) + "." + key;
    if (const toml::node* given = r.find(section, key)) {
      r.fail(*given, name,
             std::string("does not apply to population annealing ([annealing]): ") +
                 (name == "model.beta" ? "annealing.beta gives the inverse temperatures"
                                       : "annealing.sweeps per step replace the run's sweeps, "
                                         "and annealed runs are neither checkpointed nor "
                                         "tempered"));
    }
  }
  if (c.annealing_beta.front() != 0.0 || c.annealing_beta[1] < c.annealing_beta[0]) {
    r.fail(schedule, "annealing.beta",
           "the schedule must start at 0 (where ln Z is known exactly) and increase; it starts "
           "with " +
               shortest(c.annealing_beta[0]) + ", " + shortest(c.annealing_beta[1]));
  }
  if (c.annealing_steps > 0 && c.annealing_beta.size() != 2) {
    r.fail(schedule, "annealing.beta",
           "with annealing.steps = " + std::to_string(c.annealing_steps) +
               " give the two ends [start, stop] of the linear schedule, not " +
               std::to_string(c.annealing_beta.size()) + " entries");
  }
  if (c.start == "cold") {
    r.fail(*r.find("run", "start"), "run.start",
           "population annealing starts at beta = 0 from the hot start, an exact sample there");
  }
  if (c.replicas % c.annealing_populations != 0) {
    const toml::node* node = r.find("annealing", "populations");
    r.fail(node ? *node : schedule, "annealing.populations",
           "run.replicas = " + std::to_string(c.replicas) + " must be a multiple of the " +
               std::to_string(c.annealing_populations) + " populations");
  }
  const auto steps = static_cast<long double>(c.annealing_schedule().size());
  if (steps * c.annealing_sweeps > static_cast<long double>(kMaxSweeps)) {
    r.fail(schedule, "annealing.beta",
           "the schedule's steps x annealing.sweeps are more than 2^44 sweeps, the most the "
           "random-number counter can name");
  }
  if (uses_langevin(c.sequence)) {
    r.fail(*r.find("update", "sequence"), "update.sequence",
           "population annealing needs metropolis, heatbath, overrelaxation or cluster passes");
  }
  // The model's couplings are checked (and recorded) at the schedule's largest beta.
  c.beta = c.annealing_schedule().back();
}

/// Parallel tempering's rules: ladders of one length, few enough replicas, and no option that
/// needs one set of couplings.
/// Exchange rounds each part of a feedback-tuned thermalization needs at least, so that f(k)
/// has some visits behind it.
constexpr int64_t kMinFeedbackRounds = 10;

void check_tempering(Config& c, Reader& r) {
  const int rungs = c.rungs();
  if (rungs == 0) return;
  const char* first = nullptr;  // the first ladder given: messages about the ladder name it
  for (const TemperedCoupling& t : tempered_couplings()) {
    const std::vector<double>& ladder = c.*t.ladder;
    if (ladder.empty()) continue;
    const std::string name = std::string("tempering.") + t.key;
    if (!first) first = t.key;
    if (ladder.size() != static_cast<size_t>(rungs)) {
      r.fail(*r.find("tempering", t.key), name,
             "has " + std::to_string(ladder.size()) + " rungs but another ladder has " +
                 std::to_string(rungs) + "; every ladder needs one value per rung");
    }
    c.*t.value = ladder.front();
  }
  const toml::node* ladder_node = r.find("tempering", first);
  const std::string ladder_name = std::string("tempering.") + first;
  if (static_cast<int64_t>(rungs) * c.replicas > kMaxReplicas) {
    r.fail(*ladder_node, ladder_name,
           std::to_string(rungs) + " rungs x run.replicas = " + std::to_string(c.replicas) +
               " ladders is more than " + std::to_string(kMaxReplicas) +
               " replicas, the most the random-number counter names");
  }
  if (uses_langevin(c.sequence)) {
    const toml::node* node = r.find("update", "sequence");
    r.fail(node ? *node : *r.find("update", "algorithm"),
           node ? "update.sequence" : "update.algorithm",
           "\"langevin\" and \"mala\" move the field with one set of couplings; parallel "
           "tempering ([tempering]) needs metropolis, heatbath, overrelaxation or cluster passes");
  }
  for (const char* key : {"structure_factor", "timeslice"}) {
    const toml::node* node = r.find("measure", key);
    if (node && node->value_or(false)) {
      r.fail(*node, std::string("measure.") + key,
             "not available with parallel tempering ([tempering]): it is taken per replica "
             "slot, whose couplings change with every exchange");
    }
  }
  const bool clusters = std::any_of(c.sequence.begin(), c.sequence.end(), [](const std::string& a) {
    return a == "swendsen_wang" || a == "wolff";
  });
  if (c.model_kind == "potts" && clusters) {
    for (double h : c.tempering_h) {
      if (h >= 0) continue;
      r.fail(*r.find("tempering", "h"), "tempering.h",
             "Potts cluster moves need every rung's field h >= 0 (it enters by bonds to a ghost "
             "spin in state 0); entry " +
                 shortest(h) + " is negative");
      break;
    }
  }
  if (c.model_kind == "phi4" && !c.dims.empty()) {
    // At lambda = 0 the action is unbounded below unless kappa < 1/(2d): at every rung.
    const double d = static_cast<double>(c.dims.size());
    for (int k = 0; k < rungs; ++k) {
      const double kappa = c.tempering_kappa.empty() ? c.kappa : c.tempering_kappa[k];
      const double lambda = c.tempering_lambda.empty() ? c.lambda : c.tempering_lambda[k];
      if (lambda != 0.0 || 2.0 - 4.0 * d * kappa > 0.0) continue;
      r.fail(*ladder_node, ladder_name,
             "rung " + std::to_string(k) + " has lambda = 0 and kappa = " + shortest(kappa) +
                 ": the action is unbounded below unless kappa < 1/(2d) = " +
                 shortest(1.0 / (2.0 * d)));
      break;
    }
  }
}

/// The feedback-optimised ladder moves one ladder's interior rungs, and each of its
/// thermalization parts needs exchange rounds to measure f(k) from.
void check_ladder_feedback(const Config& c, Reader& r) {
  const toml::node* node = r.find("tempering", "feedback");
  if (!node || c.tempering_feedback == 0 || c.rungs() == 0) return;
  std::string ladders;
  for (const TemperedCoupling& t : tempered_couplings())
    if (!(c.*t.ladder).empty())
      ladders += (ladders.empty() ? "tempering." : ", tempering.") + std::string(t.key);
  if (ladders.find(',') != std::string::npos) {
    r.fail(*node, "tempering.feedback",
           "moves one ladder, but " + ladders +
               " are given; the feedback cannot place rungs for several couplings at once");
  } else if (c.rungs() < 3) {
    r.fail(*node, "tempering.feedback",
           "needs a ladder of at least 3 rungs: it moves the interior ones, and " + ladders +
               " has " + std::to_string(c.rungs()));
  } else if (c.thermalization / (c.tempering_feedback + 1) <
             kMinFeedbackRounds * c.exchange_every) {
    r.fail(*node, "tempering.feedback",
           "splits run.thermalization = " + std::to_string(c.thermalization) + " into " +
               std::to_string(c.tempering_feedback + 1) + " parts of " +
               std::to_string(c.thermalization / (c.tempering_feedback + 1)) +
               " sweeps; each needs at least " + std::to_string(kMinFeedbackRounds) +
               " exchange rounds (" + std::to_string(kMinFeedbackRounds * c.exchange_every) +
               " sweeps at tempering.exchange_every = " + std::to_string(c.exchange_every) +
               "): raise run.thermalization or lower tempering.feedback");
  }
}

/// Multicanonical runs: no field, one process, Metropolis walkers of their own, and none of the
/// options the walkers do not have; phi^4 with an energy window.
void check_multicanonical(const Config& c, Reader& r) {
  if (!c.multicanonical) return;
  const std::string why = " ([multicanonical])";
  auto refuse = [&](const char* section, const char* key, const std::string& reason) {
    if (const toml::node* node = r.find(section, key))
      r.fail(*node, std::string(section) + "." + key, reason);
  };
  if (c.field != 0.0) {
    refuse("model", "h",
           "multicanonical sampling" + why +
               " needs h = 0: its weights are a function of the "
               "bond energy alone");
  }
  if (c.muca_continuous() && r.find("update", "tune") && c.tune_step) {
    refuse("update", "tune",
           "multicanonical walkers keep update.step as given; tuning it would change their "
           "chain during Wang-Landau");
  }
  if (c.model_kind == "phi4" && c.muca_window.size() != 2) {
    r.missing("multicanonical.window",
              "phi^4's multicanonical energy E = -2 sum_<xy> phi_x phi_y is unbounded: give "
              "[e_low, e_high] per site");
  }
  for (const TemperedCoupling& t : tempered_couplings()) {
    refuse("tempering", t.key, "parallel tempering cannot be combined with [multicanonical]");
  }
  if (c.sequence != std::vector<std::string>{"metropolis"}) {
    const bool sequence = r.find("update", "sequence") != nullptr;
    refuse("update", sequence ? "sequence" : "algorithm",
           "multicanonical walkers do single-site Metropolis with weights of the total energy; "
           "only \"metropolis\" is available with [multicanonical]");
  }
  if (c.replicas != 1)
    refuse("run", "replicas", "use multicanonical.walkers for independent walkers");
  if (c.snapshot_every > 0)
    refuse("output", "snapshot_every", "not available with [multicanonical]");
  if (c.structure_factor)
    refuse("measure", "structure_factor", "not available with [multicanonical]");
  if (c.timeslice) refuse("measure", "timeslice", "not available with [multicanonical]");
  refuse("parallel", "grid", "a multicanonical run is one process; it has no domain grid");
  if (c.muca_lnf_final >= c.muca_lnf_initial) {
    refuse("multicanonical", "lnf_final",
           "must be below multicanonical.lnf_initial = " + shortest(c.muca_lnf_initial));
  }
  if (c.volume() > (int64_t(1) << 28)) {
    refuse("lattice", "dims",
           "multicanonical walkers number their energy bins in 32 bits: at most 2^28 sites");
  }
  if (c.muca_window.size() == 2) {
    const double d = static_cast<double>(c.dims.size());
    const bool bounded = c.model_kind != "phi4";
    const double lowest = -d, highest = c.model_kind == "potts" ? 0.0 : d;
    if (c.muca_window[0] >= c.muca_window[1]) {
      refuse("multicanonical", "window", "must be [e_low, e_high] with e_low < e_high");
    } else if (bounded && (c.muca_window[0] < lowest || c.muca_window[1] > highest)) {
      refuse("multicanonical", "window",
             "energies per site of this model lie in [" + shortest(lowest) + ", " +
                 shortest(highest) + "]");
    } else if (!c.muca_continuous()) {
      const std::array<int64_t, 2> bins = c.muca_window_bins();
      if (bins[1] - bins[0] < 4 * static_cast<int64_t>(c.dims.size())) {
        refuse("multicanonical", "window",
               "holds " + std::to_string(std::max<int64_t>(0, bins[1] - bins[0] + 1)) +
                   " energy levels on this lattice; a walker needs room for its moves");
      }
    }
  }
}

/// Rules between keys, after every key is read.
void check_cross_key_rules(Config& c, Reader& r) {
  check_tempering(c, r);  // first: it sets the tempered couplings to their first rung
  check_ladder_feedback(c, r);
  check_multicanonical(c, r);
  check_annealing(c, r);  // ... and this model.beta to the schedule's largest
  const toml::node* algorithm_node = r.find("update", "algorithm");
  const toml::node* sequence_node = r.find("update", "sequence");
  if (!c.sequence.empty() &&
      std::all_of(c.sequence.begin(), c.sequence.end(),
                  [](const std::string& a) { return a == "overrelaxation"; })) {
    r.fail(*(sequence_node ? sequence_node : algorithm_node),
           sequence_node ? "update.sequence" : "update.algorithm",
           std::string("over-relaxation alone is not ergodic (it keeps the energy); ") +
               (sequence_node ? "add" : "use update.sequence to add") + " a \"metropolis\"" +
               (c.model_kind == "on" ? " or \"heatbath\"" : "") + " pass");
    c.sequence.clear();
  }
  c.algorithm = join(c.sequence, ", ");
  if (c.kept_replicas > c.replicas) {
    r.fail(*r.find("output", "kept_replicas"), "output.kept_replicas",
           "keeps " + std::to_string(c.kept_replicas) + (c.rungs() > 0 ? " ladders" : " replicas") +
               " but run.replicas = " + std::to_string(c.replicas));
  }

  // Cluster moves carry the field by bonds to a ghost spin in state 0: a field against state 0
  // has no such bonds.
  if (c.model_kind == "potts" && c.field < 0 &&
      std::any_of(c.sequence.begin(), c.sequence.end(),
                  [](const std::string& a) { return a == "swendsen_wang" || a == "wolff"; })) {
    if (const toml::node* node = r.find("model", "h")) {
      r.fail(*node, "model.h",
             "Potts cluster moves (\"swendsen_wang\", \"wolff\") need a field h >= 0: it "
             "enters by bonds to a ghost spin in state 0, which a negative h cannot have");
    }
  }

  // At lambda = 0 the action is Gaussian with M(0) = 2 - 4 d kappa: unbounded below (no
  // equilibrium) unless kappa < 1/(2d).
  const double d = static_cast<double>(c.dims.size());
  if (c.model_kind == "phi4" && c.lambda == 0.0 && !(2.0 - 4.0 * d * c.kappa > 0.0) &&
      !c.dims.empty()) {
    if (const toml::node* node = r.find("model", "kappa")) {
      r.fail(*node, "model.kappa",
             "at model.lambda = 0 the action is unbounded below unless kappa < 1/(2d) = " +
                 shortest(1.0 / (2.0 * d)));
    }
  }

  if (c.snapshot_packing == "bits") {
    const toml::node* node = r.find("output", "snapshot_packing");
    if (c.model_kind != "ising") {
      r.fail(*node, "output.snapshot_packing",
             "\"bits\" packs Ising spins, 8 per byte; model.kind is \"" + c.model_kind + "\"");
    } else if (!c.dims.empty() && c.dims.back() % 8 != 0) {
      r.fail(*node, "output.snapshot_packing",
             "\"bits\" packs 8 sites per byte along the last axis, so its extent (" +
                 std::to_string(c.dims.back()) + ") must be a multiple of 8");
    }
  }

  if (!c.walltime.empty()) c.walltime_seconds = parse_walltime(c.walltime).value_or(0.0);
}

/// The first of the environment variables `names` that holds a positive integer, or 0.
long double positive_from_environment(std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const char* value = std::getenv(name);
    if (value && std::atoll(value) > 0) return static_cast<long double>(std::atoll(value));
  }
  return 0;
}

/// The ranks a run's lattice is shared among, as the input (parallel.grid) or else the MPI
/// launcher says, and how many of them this machine hosts (the launcher's local size; 1 where
/// it does not say, as a rank per node, the usual cluster layout).
struct RankShare {
  long double ranks = 1, on_this_machine = 1;
};
RankShare rank_share(const Config& c) {
  RankShare share;
  if (!c.parallel_grid.empty()) {
    for (int g : c.parallel_grid) share.ranks *= g;
  } else if (long double n = positive_from_environment({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})) {
    share.ranks = n;
  }
  const long double local = positive_from_environment(
      {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"});
  share.on_this_machine = share.ranks > 1 ? std::min(share.ranks, std::max(local, 1.0L)) : 1;
  return share;
}

/// This machine's memory in bytes (0 when unknown).
long double physical_memory_bytes() {
  return static_cast<long double>(sysconf(_SC_PHYS_PAGES)) *
         static_cast<long double>(sysconf(_SC_PAGE_SIZE));
}

/// Limits of the whole run, checked once everything else holds: host memory for the lattice
/// and its copies (a decomposed run's ranks each hold their share), and the sweeps the
/// random-number counter can name.
void check_run_limits(const Config& c, const std::string& source_name,
                      std::vector<std::string>& errors) {
  if (!c.dims.empty() && errors.empty()) {
    // The configuration's copies for output (one per snapshot slot in use) and checkpoints,
    // and the engine itself unless it is sure to run on the GPU (make_cuda_engine checks the
    // device's memory).
    const EngineSettings settings = c.engine_settings();
    const long double copies = c.snapshot_every > 0 ? Engine::kSnapshotSlots + 1 : 2;
    const long double frame = c.snapshot_packing == "bits" ? 0.125L : site_bytes(settings);
    const long double whole = (copies - 1) * settings.replicas * c.volume() * frame +
                              settings.replicas * c.volume() * site_bytes(settings) +
                              (c.backend == "cuda" ? 0.0L : engine_bytes(settings));
    const RankShare share = rank_share(c);
    const long double needed = whole / share.ranks * share.on_this_machine;
    const long double available = physical_memory_bytes();
    if (available > 0 && needed > available) {
      std::ostringstream os;
      os.precision(3);
      os << source_name << ": lattice.dims = [";
      for (size_t a = 0; a < c.dims.size(); ++a) os << (a ? ", " : "") << c.dims[a];
      os << "] with run.replicas = " << c.replicas << ": the " << c.model_kind << " lattice needs "
         << static_cast<double>(needed / (1L << 30)) << " GiB of host memory";
      if (share.ranks > 1) {
        os << " (" << static_cast<double>(whole / share.ranks / (1L << 30)) << " GiB for each of "
           << static_cast<long long>(share.on_this_machine) << " of its "
           << static_cast<long long>(share.ranks) << " ranks on this machine)";
      }
      os << " but this machine has " << static_cast<double>(available / (1L << 30)) << " GiB";
      errors.push_back(os.str());
    }
  }
  if (c.multicanonical && !c.dims.empty() && errors.empty()) {
    // Every walker's series of E and order parameter (16 bytes a measurement) stay in memory
    // until the end; the spins (in the CPU's walkers, or copied for a checkpoint) and a trace
    // of bins (at most 2^24 entries of 4 bytes) come on top.
    // A refinement adds every walker's histogram over the window (4 bytes a bin) and the
    // trace's copy on the host.
    const long double walkers = static_cast<long double>(c.muca_walkers);
    const std::array<int64_t, 2> window = c.muca_window_bins();
    const long double refinement =
        c.muca_refine_iterations > 0
            ? walkers * static_cast<long double>(window[1] - window[0] + 1) * 4 +
                  static_cast<long double>(int64_t(1) << 26)
            : 0.0L;
    const long double needed = walkers * c.measurements * 16 +
                               walkers * c.volume() * c.muca_spin_bytes() +
                               static_cast<long double>(int64_t(1) << 26) + refinement;
    const long double available = physical_memory_bytes();
    if (available > 0 && needed > available) {
      std::ostringstream os;
      os.precision(3);
      os << source_name << ": multicanonical.walkers = " << c.muca_walkers
         << " with run.measurements = " << c.measurements << " and " << c.volume()
         << " sites: the walkers' series and spins"
         << (refinement > 0 ? " (and the refinement's histograms of every walker)" : "") << " need "
         << static_cast<double>(needed / (1L << 30)) << " GiB of host memory but this machine has "
         << static_cast<double>(available / (1L << 30)) << " GiB (fewer walkers or measurements)";
      errors.push_back(os.str());
    }
  }
  if (errors.empty() &&
      static_cast<long double>(c.measurements) * c.measure_every + c.thermalization >
          static_cast<long double>(kMaxSweeps)) {
    errors.push_back(source_name +
                     ": run.thermalization + run.measurements * run.measure_every is more than "
                     "2^44 sweeps, the most the random-number counter can name");
  }
}

}  // namespace

Config read_point(const toml::table& root, const std::string& source_name,
                  const Substitutions& substitutions, std::vector<std::string>& errors) {
  Reader r(root, source_name, errors, substitutions);
  Config c;
  c.multicanonical = root["multicanonical"].is_table();
  // update.algorithm names one pass, update.sequence several: given both, neither is read.
  std::set<std::string> judged;
  const toml::node* algorithm_node = r.find("update", "algorithm");
  if (const toml::node* sequence_node = r.find("update", "sequence");
      algorithm_node && sequence_node) {
    r.fail(*sequence_node, "update.sequence",
           "give either update.algorithm (one pass per sweep) or update.sequence, not both");
    judged = {"update.algorithm", "update.sequence"};
  }
  for (const std::string& name : replace_by_ladders(r)) judged.insert(name);
  for (const std::string& name : replaced_by_annealing(r)) judged.insert(name);
  r.read_keys(c, judged);
  check_cross_key_rules(c, r);
  if (!c.dims.empty() && !c.sequence.empty() && errors.empty()) {
    // A tempered run is checked at each ladder's entry of largest magnitude.
    Config extreme = c;
    for (const TemperedCoupling& t : tempered_couplings()) {
      for (double x : c.*t.ladder) {
        if (std::fabs(x) > std::fabs(extreme.*t.value)) extreme.*t.value = x;
      }
    }
    refuse_overflowing_couplings(extreme, r);
  }
  check_run_limits(c, source_name, errors);
  return c;
}

}  // namespace lattica::config
