#pragma once
// A Lattica TOML input: parsing, command-line overrides and validation (in sim/config/, driven
// by the one table of keys in sim/config/schema.cpp).

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/ensemble/multicanonical.hpp"  // MucaEnergyBins
#include "sim/engine/engine.hpp"

namespace lattica {

/// Seconds a run keeps in reserve before run.walltime (or Slurm's job end time) for its final
/// checkpoint: it stops when no more than this remains, so run.walltime must be longer.
constexpr double kWalltimeMarginSeconds = 30.0;

/// The largest input file read, in bytes (inputs are a few KiB): a larger file, or one that
/// never ends such as /dev/zero, is refused instead of read into memory.
constexpr size_t kMaxInputBytes = size_t(4) << 20;

/// Everything wrong with an input, one message per problem; the driver exits with code 2.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(std::vector<std::string> messages);
  const std::vector<std::string>& messages() const { return messages_; }

 private:
  std::vector<std::string> messages_;
};

/// Values given on the command line; each is validated exactly like the same key in the file.
struct ConfigOverrides {
  std::vector<std::string>
      set;  ///< "section.key=VALUE", VALUE in TOML syntax (bare strings allowed)
  std::optional<std::string> backend;
  std::optional<std::string> output;
  std::optional<std::string> seed;
};

struct Config {
  std::vector<int64_t> dims;
  std::string model_kind;  ///< "ising", "potts", "on" or "phi4"
  int q = 0;               ///< Potts states (model.q); 0 for other models
  int n = 0;               ///< O(n) components (model.n); 0 for other models
  std::string precision;   ///< "float" or "double" for continuous models; empty otherwise
  double beta = 0.0;       ///< Ising, Potts, O(n)
  double kappa = 0.0;      ///< phi^4
  double lambda = 0.0;     ///< phi^4
  double field = 0.0;
  std::vector<std::string> sequence;  ///< update passes of one sweep, e.g. {"heatbath"}
  std::string algorithm;              ///< the sequence as text, passes joined by ", "
  int wolff_clusters = 1;             ///< single clusters per "wolff" pass
  int hits = 1;                       ///< continuous models: Metropolis proposals per site
  double step = 1.0;                  ///< continuous models: initial Metropolis step
  bool tune_step = true;
  double target_acceptance = 0.5;
  double langevin_step = 0.1;  ///< phi^4 langevin / mala passes: time step epsilon
  bool multispin = true;       ///< Ising: multi-spin-coded storage where the lattice allows
  int64_t thermalization = 0;
  int64_t measurements = 0;
  int64_t measure_every = 1;
  uint64_t seed = 0;
  std::string backend;  ///< "auto", "cpu" or "cuda"
  std::string start;    ///< "hot" or "cold"
  int threads = 0;
  int device = 0;
  std::vector<int> parallel_grid;  ///< parallel.grid; empty: chosen for the number of ranks
  std::string output_path;
  int64_t snapshot_every = 0;
  std::string snapshot_packing = "bytes";        ///< or "bits" (Ising: 8 spins per byte)
  bool structure_factor = false;                 ///< measure.structure_factor
  int64_t structure_factor_every = 1;            ///< on every k-th measurement
  std::string structure_factor_tables = "full";  ///< or "radial": no per-mode tables at the end
  bool timeslice = false;                        ///< measure.timeslice
  int64_t timeslice_every = 1;
  int timeslice_momenta = 1;  ///< N momenta per spatial axis besides p = 0
  int64_t flush_every = 1000;
  /// output.observables: "replicas" (every replica's series) or "means" (the mean over the
  /// replicas, per rung when tempered, and the series of the first kept_replicas replicas).
  std::string observables_output = "replicas";
  int64_t kept_replicas = 0;  ///< output.kept_replicas (ladders when tempered)
  int replicas = 1;  ///< run.replicas: independent chains, or independent ladders when tempered
  /// [tempering]: the ladders of tempered couplings (each empty or one value per rung), in
  /// place of the model's key of the same name; and the sweeps between exchange rounds.
  std::vector<double> tempering_beta, tempering_kappa, tempering_lambda, tempering_h;
  int64_t exchange_every = 1;
  int64_t tempering_feedback = 0;          ///< tempering.feedback: steps of the ladder's feedback
  bool multicanonical = false;             ///< a [multicanonical] section is given
  int64_t muca_walkers = 1024;             ///< multicanonical.walkers
  int64_t muca_sweeps_per_iteration = 10;  ///< multicanonical.sweeps_per_iteration
  double muca_lnf_initial = 1.0;           ///< multicanonical.lnf_initial
  double muca_lnf_final = 1e-6;            ///< multicanonical.lnf_final
  double muca_flatness = 0.8;              ///< multicanonical.flatness
  int64_t muca_max_sweeps = 0;             ///< multicanonical.max_sweeps (Wang-Landau)
  std::vector<double> muca_window;         ///< multicanonical.window: [e_low, e_high]; empty: all
  std::string muca_initial_weights = "flat";  ///< multicanonical.initial_weights
  int64_t muca_bins = 256;                    ///< multicanonical.bins (O(n), phi^4)
  int64_t muca_refine_iterations = 0;  ///< multicanonical.refine_iterations (0: no refinement)
  int64_t muca_refine_sweeps = 10000;  ///< multicanonical.refine_sweeps, per walker and iteration
  /// [annealing]: population annealing's schedule (empty: no annealing; with annealing_steps >
  /// 0 its two entries are the ends of a linear schedule of that many steps), sweeps per step,
  /// resampling, independent populations and whether every replica's data is written.
  std::vector<double> annealing_beta;
  int64_t annealing_steps = 0;
  int64_t annealing_sweeps = 10;
  std::string annealing_resampling = "systematic";
  int annealing_populations = 1;
  bool annealing_replica_output = false;
  int64_t checkpoint_every = 0;     ///< run.checkpoint_every: sweeps between checkpoints; 0 off
  double checkpoint_minutes = 0.0;  ///< run.checkpoint_minutes: wall-clock minutes; 0 off
  double progress_minutes = 5.0;    ///< run.progress_minutes: between log lines; 0 off
  std::string walltime;             ///< run.walltime as given ("[D-]HH:MM:SS"); empty: none
  double walltime_seconds = 0.0;    ///< the same in seconds: stop (with a checkpoint) before it

  int64_t point_index = -1;  ///< index in a parameter sweep; -1 for a single run
  std::vector<std::pair<std::string, std::string>> swept_values;  ///< key -> value (TOML text)

  std::string input_path;     ///< as given
  std::string input_text;     ///< the input file verbatim
  std::string resolved_toml;  ///< every key with its final value, as TOML
  /// The keys that determine the chain, as TOML: a checkpoint resumes only under the same
  /// (run.measurements, the backend, threads, device, output and checkpoint keys may change).
  std::string chain_toml;

  int64_t volume() const;
  /// Rungs of the tempering ladder; 0 without [tempering].
  int rungs() const;
  /// Whether the run is population annealing ([annealing]), and its schedule of betas.
  bool annealing() const { return !annealing_beta.empty(); }
  std::vector<double> annealing_schedule() const;
  /// Whether a multicanonical run bins a continuous energy (O(n), phi^4).
  bool muca_continuous() const { return model_kind == "on" || model_kind == "phi4"; }
  /// The energy bins that multicanonical.window covers, first and last. Ising and Potts: bins
  /// k = 0 .. dV (k satisfied bonds), every bin without a window; O(n), phi^4: 1 .. bins.
  std::array<int64_t, 2> muca_window_bins() const;
  /// O(n), phi^4: multicanonical.bins equal bins over the window, in total energies (O(n)
  /// without a window: E/V in [-d, d]).
  MucaEnergyBins muca_energy_bins() const;
  /// The bytes of one multicanonical walker's spin at one site: 1 (Ising, Potts), or n (O(n))
  /// or 1 (phi^4) values of 4 (float) or 8 bytes.
  int muca_spin_bytes() const;
  /// Sweeps of the whole run: thermalization + measurements * measure_every.
  int64_t total_sweeps() const { return thermalization + measurements * measure_every; }
  EngineSettings engine_settings() const;
};

/// Parses TOML text (source_name names it in messages), applies overrides, validates. The
/// input must describe a single run (no sweep).
Config parse_config(const std::string& text, const std::string& source_name,
                    const ConfigOverrides& overrides = {});

/// Reads and parses an input file. Throws ConfigError for unreadable or invalid input.
Config load_config(const std::string& path, const ConfigOverrides& overrides = {});

/// The keys whose values differ between two chain_toml texts, as "key: a -> b" lines.
std::vector<std::string> chain_differences(const std::string& before, const std::string& now);

/// Every run an input describes: one point, or one per point of a parameter sweep (lists or
/// {start, stop, num} ranges for model.beta, model.kappa, model.lambda and model.h, a list of
/// arrays for lattice.dims; points are the cartesian product, the last swept key varying fastest).
/// A sweep's points write <stem>.<index><ext> with the seed hashed from (run.seed, index).
struct RunPlan {
  std::vector<Config> points;
  std::vector<std::string> swept;  ///< swept keys; empty for a single run
  std::string index_path;          ///< <stem>.index.json for a sweep
};
RunPlan parse_plan(const std::string& text, const std::string& source_name,
                   const ConfigOverrides& overrides = {});
RunPlan load_plan(const std::string& path, const ConfigOverrides& overrides = {});

/// The README's input reference: a markdown table of every key (type, default, models,
/// meaning), written from the schema in sim/config/schema.cpp.
std::string input_reference_markdown();

}  // namespace lattica
