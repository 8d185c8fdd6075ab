#include "sim/config/schema.hpp"

#include <algorithm>
#include <stdexcept>

#include "kernels/cluster/cluster_moves.hpp"

namespace lattica::config {

namespace {

constexpr int64_t kMaxCount = int64_t(1) << 40;           // sweeps and measurements of one key
constexpr int64_t kMaxAnnealingSteps = int64_t(1) << 24;  // a schedule's steps

// The update passes as choices of update.algorithm and update.sequence.
std::vector<Choice> pass_choices() {
  std::vector<Choice> choices;
  for (const PassName& p : pass_names()) choices.push_back({p.name, p.models});
  return choices;
}
const std::vector<Choice> kPasses = pass_choices();

bool has_langevin_pass(const Config& c) { return uses_langevin(c.sequence); }
bool has_ladder(const Config& c) { return c.rungs() > 0; }
bool is_multicanonical(const Config& c) { return c.multicanonical; }
bool has_annealing(const Config& c) { return c.annealing(); }
bool is_refining(const Config& c) { return c.multicanonical && c.muca_refine_iterations > 0; }

bool is_markov_chain(const Config& c) { return !c.multicanonical && !c.annealing(); }
bool writes_means(const Config& c) { return c.observables_output == "means"; }
bool has_wolff_pass(const Config& c) {
  return std::find(c.sequence.begin(), c.sequence.end(), "wolff") != c.sequence.end();
}

std::vector<KeySpec> make_specs() {
  using K = KeyType;
  return {
      // [lattice]
      KeySpec("lattice", "dims", K::dims, &Config::dims)
          .required()
          .sweep()
          .explained(
              "an array of 1 to 4 even lattice sizes, e.g. [64, 64]",
              "lattice extents L_0 ... L_{d-1}, periodic; each even and >= 2 (the checkerboard "
              "update needs a bipartite lattice); at most 2^40 sites, and it must fit in memory: "
              "per site and replica, twice the site's size on the host (1 byte for Ising and "
              "Potts; for O(n) n values, for phi^4 one, each 4 bytes in float or 8 in double), "
              "and on the GPU that plus 1 byte of device memory (more with spectra, clusters "
              "or Langevin passes; a decomposed run needs a rank's share per rank, times the "
              "ranks its launcher puts on one machine). A sweep gives a list of arrays"),
      // [model]
      KeySpec("model", "kind", K::choice, &Config::model_kind)
          .required()
          .one_of({{"ising"}, {"potts"}, {"on"}, {"phi4"}})
          .explained("",
                     "the model: `\"on\"` has O(n) unit vectors, `\"phi4\"` a real scalar field"),
      KeySpec("model", "q", K::integer, &Config::q)
          .required()
          .range(2, 256)
          .for_models(kPotts)
          .explained("number of Potts states"),
      KeySpec("model", "n", K::integer, &Config::n)
          .required()
          .range(2, 4)
          .for_models(kOn)
          .explained("spin components: 2 XY, 3 Heisenberg, 4"),
      KeySpec("model", "beta", K::number, &Config::beta)
          .required()
          .at_least(0.0)
          .sweep()
          .for_models(kIsing | kPotts | kOn)
          .refused_with("phi^4 has no inverse temperature; it uses model.kappa and model.lambda")
          .explained("inverse temperature, a number >= 0",
                     "inverse temperature beta (J = 1); phi^4 refuses it (its couplings are in "
                     "the action). Not given with a ladder `tempering.beta`, which replaces it "
                     "(likewise for `kappa`, `lambda` and `h`)"),
      KeySpec("model", "kappa", K::number, &Config::kappa)
          .required()
          .at_least(0.0)
          .sweep()
          .for_models(kPhi4)
          .explained("hopping parameter, a number >= 0", "hopping parameter kappa"),
      KeySpec("model", "lambda", K::number, &Config::lambda)
          .required()
          .at_least(0.0)
          .sweep()
          .for_models(kPhi4)
          .explained("quartic coupling, a number >= 0", "quartic coupling lambda"),
      KeySpec("model", "h", K::number, &Config::field)
          .defaults_to(0.0)
          .sweep()
          .explained("external field",
                     "external field h (see the Hamiltonians above; O(n): along component 0; "
                     "phi^4: the linear term -h sum_x phi_x)"),
      KeySpec("model", "precision", K::choice, &Config::precision)
          .defaults_to("double")
          .one_of({{"double"}, {"float"}})
          .for_models(kContinuous)
          .explained("",
                     "the type of the spins or field, of the per-site arithmetic and of the "
                     "snapshots (measurements are summed in double either way)"),
      // [update]
      KeySpec("update", "algorithm", K::choice, &Config::sequence)
          .defaults_to("metropolis")
          .one_of(kPasses)
          .alias()
          .explained("",
                     "one pass per sweep, short for an `update.sequence` of that pass (give "
                     "one of the two keys, not both); `\"overrelaxation\"` alone is refused "
                     "(not ergodic). See [Fourier-accelerated "
                     "Langevin](#fourier-accelerated-langevin-phi4) for `\"langevin\"` and "
                     "`\"mala\"`"),
      KeySpec("update", "sequence", K::choice_list, &Config::sequence)
          .one_of(kPasses, kMaxUpdatePasses)
          .explained("",
                     "instead of `update.algorithm`: the passes of one sweep, in order, e.g. "
                     "`[\"heatbath\", \"overrelaxation\", \"overrelaxation\"]`; only "
                     "over-relaxation passes are refused"),
      KeySpec("update", "hits", K::integer, &Config::hits)
          .defaults_to(1)
          .range(1, 255)
          .for_models(kContinuous)
          .explained("Metropolis proposals per site and pass",
                     "Metropolis proposals per site and pass (multi-hit Metropolis)"),
      KeySpec("update", "step", K::number, &Config::step)
          .defaults_to(1.0)
          .at_least(0.0)
          .within(true, std::numeric_limits<double>::infinity(), false,
                  "must be > 0 (initial Metropolis step size)")
          .for_models(kContinuous)
          .explained("initial Metropolis step size, > 0",
                     "initial Metropolis step (O(n): the largest length of the displacement "
                     "g; phi^4: half-width of the uniform proposal)"),
      KeySpec("update", "tune", K::boolean, &Config::tune_step)
          .defaults_to(true)
          .for_models(kContinuous)
          .explained("tune the Metropolis (and MALA) step during thermalization, then freeze it"),
      KeySpec("update", "target_acceptance", K::number, &Config::target_acceptance)
          .defaults_to(0.5)
          .at_least(0.0)
          .within(true, 1.0, true, "must be strictly between 0 and 1")
          .for_models(kContinuous)
          .explained("Metropolis (and MALA) acceptance the tuning aims at, in (0, 1)",
                     "the acceptance the tuning aims at (Metropolis and MALA alike)"),
      KeySpec("update", "langevin_step", K::number, &Config::langevin_step)
          .defaults_to(0.1)
          .at_least(0.0)
          .within(true, 100.0, false, "must be > 0 and <= 100 (Langevin time step)")
          .when(has_langevin_pass, "phi^4 with a `\"langevin\"` or `\"mala\"` pass")
          .refused_with("only \"langevin\" and \"mala\" passes take this key")
          .explained("Langevin time step epsilon, > 0",
                     "the Langevin time step epsilon (every free mode decays by e^-epsilon per "
                     "step); MALA tunes it like the Metropolis step when `update.tune = true`"),
      KeySpec("update", "wolff_clusters", K::integer, &Config::wolff_clusters)
          .defaults_to(1)
          .range(1, kMaxClusterSteps)
          .when(has_wolff_pass, "a `\"wolff\"` pass")
          .refused_with("only \"wolff\" passes take this key")
          .explained("single clusters per \"wolff\" pass, 1 to 32768",
                     "single clusters grown and flipped, one after another, per `\"wolff\"` pass "
                     "(each costs a labelling of the whole lattice on the GPU)"),
      KeySpec("update", "multispin", K::boolean, &Config::multispin)
          .defaults_to(true)
          .for_models(kIsing)
          .chain_role(ChainRole::no)  // the same chain either way
          .explained("store 32 spins per word and update them together where the last extent is "
                     "a multiple of 64 (the chain is the same either way)",
                     "store 1 bit per spin and update 32 spins per thread where the last extent "
                     "is a multiple of 64 (see [Multi-spin coding](#multi-spin-coding-ising)); "
                     "the chain is the same either way"),
      // [run]
      KeySpec("run", "thermalization", K::integer, &Config::thermalization)
          .required()
          .range(0, kMaxCount)
          .explained("sweeps before measuring",
                     "sweeps before the first measurement period (continuous models tune their "
                     "Metropolis step during them)"),
      KeySpec("run", "measurements", K::integer, &Config::measurements)
          .required()
          .range(0, kMaxCount)
          .chain_role(ChainRole::no)  // a resumed run may take more
          .explained("number of measurements",
                     "number of measurements; a resumed run may ask for more"),
      KeySpec("run", "measure_every", K::integer, &Config::measure_every)
          .defaults_to(1)
          .range(1, kMaxCount)
          .explained("sweeps between measurements"),
      KeySpec("run", "seed", K::integer, &Config::seed)
          .required()
          .explained("random seed, an integer >= 0",
                     "the chain depends on this seed and the input alone (in a sweep, point i "
                     "uses a SplitMix64 hash of (seed, i), recorded in its file and the index)"),
      KeySpec("run", "backend", K::choice, &Config::backend)
          .defaults_to("auto")
          .one_of({{"auto"}, {"cpu"}, {"cuda"}})
          .chain_role(ChainRole::no)
          .explained("",
                     "where the chain runs (the same chain on each); `\"auto\"`: a usable "
                     "GPU if there is one (on every rank), else the CPU"),
      KeySpec("run", "start", K::choice, &Config::start)
          .defaults_to("hot")
          .one_of({{"hot"}, {"cold"}})
          .explained("",
                     "initial configuration: `\"hot\"` (independent random spins: uniform "
                     "states, uniform O(n) directions, phi uniform in (-1, 1)) or `\"cold\"` "
                     "(Ising all +1, Potts all 0, O(n) all along component 0, phi = 1)"),
      KeySpec("run", "threads", K::integer, &Config::threads)
          .defaults_to(0)
          .range(0, 4096)
          .chain_role(ChainRole::no)
          .explained("CPU threads, 0 = all",
                     "CPU backend threads; 0 = OpenMP's default (`OMP_NUM_THREADS` or all "
                     "cores). Does not change the chain. When several CPU runs share a node, give "
                     "each its own cores (`run.threads`) or set `OMP_WAIT_POLICY=passive`: OpenMP "
                     "threads spin while idle and can slow competing runs many times over"),
      KeySpec("run", "device", K::integer, &Config::device)
          .defaults_to(0)
          .range(0, 1023)
          .chain_role(ChainRole::no)
          .explained("CUDA device index"),
      KeySpec("run", "replicas", K::integer, &Config::replicas)
          .defaults_to(1)
          .range(1, kMaxReplicas)
          .explained("independent replicas of the chain in one process",
                     "independent chains of the same parameters, updated together in one launch "
                     "(fills a GPU with small lattices); replica r has its own random stream, and "
                     "replica 0 is the chain a single-replica run gives, except that a tuned "
                     "Metropolis step (continuous models) is tuned on the acceptance of all "
                     "replicas together, so then replica 0 differs. With `[tempering]`: "
                     "independent ladders, each of one replica per rung"),
      KeySpec("run", "checkpoint_every", K::integer, &Config::checkpoint_every)
          .defaults_to(0)
          .range(0, kMaxCount)
          .chain_role(ChainRole::no)
          .explained("sweeps between checkpoints, 0 = none",
                     "sweeps between checkpoints (0 = none); see "
                     "[Checkpoints](#checkpoints-signals-and-walltime)"),
      KeySpec("run", "checkpoint_minutes", K::number, &Config::checkpoint_minutes)
          .defaults_to(0.0)
          .at_least(0.0)
          .chain_role(ChainRole::no)
          .explained("minutes between checkpoints, 0 = none",
                     "wall-clock minutes between checkpoints (0 = none)"),
      KeySpec("run", "progress_minutes", K::number, &Config::progress_minutes)
          .defaults_to(5.0)
          .at_least(0.0)
          .chain_role(ChainRole::no)
          .explained("minutes between progress lines in a batch log, 0 = none",
                     "when stderr is not a terminal (a batch job's log), rank 0 prints a "
                     "progress line every this many minutes (0 = none): sweeps done, rate, ETA "
                     "and the last checkpoint's sweep; SIGUSR2 asks for one at once. See "
                     "[Installing on a cluster](#installing-on-a-cluster)"),
      KeySpec("run", "walltime", K::duration, &Config::walltime)
          .chain_role(ChainRole::no)
          .explained("",
                     "the job's time limit, counted from the start: the run stops with a "
                     "checkpoint (exit 75) while at least 30 s (or 3 of its longest steps "
                     "plus 2 checkpoints) remain, so it must be more than 30 s (a shorter one "
                     "is refused: it would stop every job after its first sweeps). Under "
                     "Slurm, `SLURM_JOB_END_TIME` counts too"),
      // [measure]
      KeySpec("measure", "structure_factor", K::boolean, &Config::structure_factor)
          .defaults_to(false)
          .explained("structure factor and correlation function of the order parameter",
                     "measure the structure factor S(k) and the two-point function G(r) of the "
                     "order-parameter field (see [Output](#output-hdf5-schema-lattica1))"),
      KeySpec("measure", "structure_factor_every", K::integer, &Config::structure_factor_every)
          .defaults_to(1)
          .range(1, kMaxCount)
          .explained("take the structure factor on every k-th measurement",
                     "take the structure factor on every k-th measurement (an FFT of every "
                     "replica's field per time)"),
      KeySpec("measure", "structure_factor_tables", K::choice, &Config::structure_factor_tables)
          .defaults_to("full")
          .one_of({{"full"}, {"radial"}})
          .chain_role(ChainRole::no)  // only what the end of the run writes
          .explained("",
                     "the structure factor's end-of-run tables: `\"full\"` writes S, S_error, "
                     "S_connected on the half spectrum and G, G_connected on the lattice (28 "
                     "bytes a site); `\"radial\"` only the shells, the mean field, xi2 and the "
                     "series, for lattices whose full tables would be tens of GB"),
      KeySpec("measure", "timeslice", K::boolean, &Config::timeslice)
          .defaults_to(false)
          .explained("momentum-projected time-slice correlators (the last axis is time)",
                     "momentum-projected time-slice correlators C(dt, p); the last lattice axis "
                     "is time (see [Output](#output-hdf5-schema-lattica1))"),
      KeySpec("measure", "timeslice_every", K::integer, &Config::timeslice_every)
          .defaults_to(1)
          .range(1, kMaxCount)
          .explained("take the time-slice correlators on every k-th measurement"),
      KeySpec("measure", "timeslice_momenta", K::integer, &Config::timeslice_momenta)
          .defaults_to(1)
          .range(1, 64)
          .explained("momenta n 2 pi / L (n = 1 .. N) along each spatial axis, besides p = 0",
                     "N: besides p = 0, the momenta n 2 pi / L_a e_a, n = 1 .. N, along each "
                     "spatial axis a"),
      // [output]
      KeySpec("output", "path", K::string, &Config::output_path)
          .computed(default_output_path, "`<input stem>.h5`")
          .chain_role(ChainRole::no)
          .explained("output HDF5 file",
                     "output HDF5 file, relative to the working directory (a sweep's point i "
                     "writes `<stem>.<i>.h5`)"),
      KeySpec("output", "snapshot_every", K::integer, &Config::snapshot_every)
          .defaults_to(0)
          .range(0, kMaxCount)
          .chain_role(ChainRole::no)
          .explained("sweeps between snapshots, 0 = final only",
                     "sweeps between saved configurations in the measurement phase; the final "
                     "configuration is always saved; 0 = final only"),
      KeySpec("output", "snapshot_packing", K::choice, &Config::snapshot_packing)
          .defaults_to("bytes")
          .one_of({{"bytes"}, {"bits"}})
          .chain_role(ChainRole::unless_default)  // the layout of the frames stays
          .explained("",
                     "`\"bits\"` (Ising only) stores 8 spins per byte along the last axis "
                     "(its extent a multiple of 8), an eighth of the disk and of the copying; "
                     "`analysis` unpacks them (see [Output](#output-hdf5-schema-lattica1))"),
      KeySpec("output", "flush_every", K::integer, &Config::flush_every)
          .defaults_to(1000)
          .range(1, kMaxCount)
          .chain_role(ChainRole::no)
          .explained("measurements between flushes to disk", "measurements between writes to disk"),
      KeySpec("output", "observables", K::choice, &Config::observables_output)
          .defaults_to("replicas")
          .one_of({{"replicas"}, {"means"}})
          .when(is_markov_chain, "no `[multicanonical]` or `[annealing]` section")
          .refused_with("multicanonical and population annealing runs write their own "
                        "observables (annealing.replica_output)")
          .chain_role(ChainRole::unless_default)  // the layout of /observables stays
          .explained("",
                     "`\"replicas\"`: every replica's series in `/observables`; `\"means\"`: "
                     "instead, at each measurement, the means over the replicas (tempered: over "
                     "the ladders, at each rung) of x, |x|, x^2 and x^4 for every observable "
                     "x, and the replicas' means of the structure factor's and time-slice "
                     "series, for many replicas (see [Output](#output-hdf5-schema-lattica1)); "
                     "exact histograms still count every replica"),
      KeySpec("output", "kept_replicas", K::integer, &Config::kept_replicas)
          .defaults_to(0)
          .range(0, kMaxReplicas)
          .when(writes_means, "`output.observables = \"means\"`")
          .refused_with(
              "needs output.observables = \"means\" (the replicas are all written otherwise)")
          .chain_role(ChainRole::unless_default)
          .explained("",
                     "with `output.observables = \"means\"`: also the series of replicas 0 .. "
                     "N-1 (tempered: ladders 0 .. N-1, every rung) in `/kept_replicas`; at most "
                     "`run.replicas`"),
      // [tempering]
      KeySpec("tempering", "beta", K::ladder, &Config::tempering_beta)
          .at_least(0.0)
          .range(2, kMaxReplicas)
          .for_models(kIsing | kPotts | kOn)
          .refused_with("phi^4 has no inverse temperature; temper tempering.kappa or "
                        "tempering.lambda")
          .explained("",
                     "parallel tempering: the inverse temperatures of the rungs, each >= 0, "
                     "strictly increasing or decreasing, in place of `model.beta` (see "
                     "[Parallel tempering](#parallel-tempering-replica-exchange))"),
      KeySpec("tempering", "kappa", K::ladder, &Config::tempering_kappa)
          .at_least(0.0)
          .range(2, kMaxReplicas)
          .for_models(kPhi4)
          .explained("", "phi^4: a ladder of hopping parameters in place of `model.kappa`"),
      KeySpec("tempering", "lambda", K::ladder, &Config::tempering_lambda)
          .at_least(0.0)
          .range(2, kMaxReplicas)
          .for_models(kPhi4)
          .explained("", "phi^4: a ladder of quartic couplings in place of `model.lambda`"),
      KeySpec("tempering", "h", K::ladder, &Config::tempering_h)
          .range(2, kMaxReplicas)
          .explained("", "a ladder of fields in place of `model.h`"),
      KeySpec("tempering", "exchange_every", K::integer, &Config::exchange_every)
          .defaults_to(1)
          .range(1, kMaxCount)
          .when(has_ladder, "a ladder (`tempering.beta`, `kappa`, `lambda` or `h`)")
          .refused_with("needs a ladder: tempering.beta, tempering.kappa, tempering.lambda or "
                        "tempering.h")
          .explained("sweeps between exchange rounds",
                     "sweeps between exchange rounds; rounds alternate between the pairs of "
                     "rungs (0, 1), (2, 3), ... and (1, 2), (3, 4), ..."),
      KeySpec("tempering", "feedback", K::integer, &Config::tempering_feedback)
          .defaults_to(0)
          .range(0, 1000)
          .when(has_ladder, "one ladder (`tempering.beta`, `kappa`, `lambda` or `h`)")
          .refused_with("needs a ladder: tempering.beta, tempering.kappa, tempering.lambda or "
                        "tempering.h")
          .explained("feedback steps of the ladder during thermalization (0: as given)",
                     "N > 0: the ladder's interior rungs are moved N times during "
                     "thermalization, before sweeps i x run.thermalization / (N + 1), by the "
                     "feedback rule of Katzgraber et al. (2006) from the measured f(k); then "
                     "frozen for the measurements. 0: the ladder as given"),
      // [multicanonical]
      KeySpec("multicanonical", "walkers", K::integer, &Config::muca_walkers)
          .defaults_to(1024)
          .range(1, kMaxReplicas)
          .when(is_multicanonical, "a `[multicanonical]` section")
          .explained("independent multicanonical walkers, a GPU warp (Ising, Potts) or thread each",
                     "independent walkers sharing one histogram, a GPU warp each for Ising and "
                     "Potts (a GPU wants >= 10^3), a thread each for O(n) and phi^4 (>= 10^4); "
                     "see [Multicanonical sampling](#multicanonical-sampling)"),
      KeySpec("multicanonical", "sweeps_per_iteration", K::integer,
              &Config::muca_sweeps_per_iteration)
          .defaults_to(10)
          .range(1, kMaxCount)
          .when(is_multicanonical, "a `[multicanonical]` section")
          .explained("Wang-Landau: sweeps of every walker between updates of ln g",
                     "Wang-Landau: sweeps of every walker with fixed weights between updates of "
                     "ln g"),
      KeySpec("multicanonical", "lnf_initial", K::number, &Config::muca_lnf_initial)
          .defaults_to(1.0)
          .at_least(0.0)
          .within(true, 10.0, false, "must be > 0 and <= 10")
          .when(is_multicanonical, "a `[multicanonical]` section")
          .explained("Wang-Landau: ln f of the first stage, in (0, 10]",
                     "Wang-Landau: ln f of the first stage (ln g rises by ln f per visit)"),
      KeySpec("multicanonical", "lnf_final", K::number, &Config::muca_lnf_final)
          .defaults_to(1e-6)
          .at_least(0.0)
          .within(true, 10.0, false, "must be > 0 and below multicanonical.lnf_initial")
          .when(is_multicanonical, "a `[multicanonical]` section")
          .explained("Wang-Landau: stop once ln f falls below this",
                     "Wang-Landau: the weights are frozen once ln f (halved at every flat "
                     "histogram) falls below this"),
      KeySpec("multicanonical", "flatness", K::number, &Config::muca_flatness)
          .defaults_to(0.8)
          .at_least(0.0)
          .within(true, 1.0, true, "must be strictly between 0 and 1")
          .when(is_multicanonical, "a `[multicanonical]` section")
          .explained("Wang-Landau flatness criterion, in (0, 1)",
                     "Wang-Landau: a stage's histogram is flat when every bin visited so far "
                     "has at least this fraction of the mean count of those bins"),
      KeySpec("multicanonical", "max_sweeps", K::integer, &Config::muca_max_sweeps)
          .defaults_to(1000000)
          .range(1, kMaxCount)
          .when(is_multicanonical, "a `[multicanonical]` section")
          .explained("Wang-Landau: at most this many sweeps per walker",
                     "Wang-Landau: at most this many sweeps per walker; the production then "
                     "runs with the weights reached (the output records `converged = 0`)"),
      KeySpec("multicanonical", "window", K::ladder, &Config::muca_window)
          .range(2, 2)
          .when(is_multicanonical, "a `[multicanonical]` section")
          .explained("[e_low, e_high], energies per site",
                     "`[e_low, e_high]`: sample only energies per site E/V in this range (the "
                     "whole range when absent; required for phi^4, whose E is unbounded; see "
                     "[Multicanonical sampling](#multicanonical-sampling) for O(n)'s and phi^4's "
                     "E); walkers start outside it and approach it, moves "
                     "out of it are refused. Cuts Wang-Landau's cost to the energies that "
                     "matter (both peaks of a first-order transition)"),
      KeySpec("multicanonical", "initial_weights", K::choice, &Config::muca_initial_weights)
          .defaults_to("flat")
          .one_of({{"flat"}, {"canonical"}})
          .when(is_multicanonical, "a `[multicanonical]` section")
          .explained("\"flat\" or \"canonical\"",
                     "Wang-Landau's starting weights: `\"flat\"` (ln g = 0) or `\"canonical\"` "
                     "(W(E) = exp(-beta E) at `model.beta`, phi^4 exp(-kappa E) at `model.kappa`: "
                     "near a transition only the correction "
                     "between the peaks is left to learn)"),
      KeySpec("multicanonical", "bins", K::integer, &Config::muca_bins)
          .defaults_to(256)
          .range(4, 1 << 20)
          .for_models(kContinuous)
          .when(is_multicanonical, "a `[multicanonical]` section")
          .explained("energy bins over the window (O(n), phi^4)",
                     "O(n) and phi^4: equal energy bins over `multicanonical.window` (the weights "
                     "are constant within a bin); Ising and Potts have a bin per energy level"),
      KeySpec("multicanonical", "refine_iterations", K::integer, &Config::muca_refine_iterations)
          .defaults_to(0)
          .range(0, 1 << 20)
          .when(is_multicanonical, "a `[multicanonical]` section")
          .chain_role(ChainRole::unless_default)  // runs without it resume as before
          .explained("refinement iterations after Wang-Landau (0: none)",
                     "N > 0: after Wang-Landau, N iterations of Berg's accumulated "
                     "multicanonical recursion refine the weights from runs with frozen weights "
                     "(each walker's ratios of neighbouring bins), for large first-order lattices "
                     "with many walkers; 0: the production uses Wang-Landau's weights (see "
                     "[Multicanonical sampling](#multicanonical-sampling))"),
      KeySpec("multicanonical", "refine_sweeps", K::integer, &Config::muca_refine_sweeps)
          .defaults_to(10000)
          .range(1, int64_t(1) << 31)
          .when(is_refining, "`multicanonical.refine_iterations` > 0")
          .refused_with("only with multicanonical.refine_iterations > 0")
          .explained("sweeps of every walker per refinement iteration",
                     "refinement: sweeps of every walker with frozen weights in each iteration "
                     "(at most 2^31)"),
      // [annealing]
      KeySpec("annealing", "beta", K::ladder, &Config::annealing_beta)
          .at_least(0.0)
          .range(2, kMaxAnnealingSteps + 1)
          .for_models(kIsing | kPotts | kOn)
          .refused_with("phi^4 has no inverse temperature to anneal")
          .explained("",
                     "population annealing: the schedule of inverse temperatures, from 0, "
                     "strictly increasing, in place of `model.beta`; with `annealing.steps` its "
                     "two entries are the ends of a linear schedule (see "
                     "[Population annealing](#population-annealing))"),
      KeySpec("annealing", "steps", K::integer, &Config::annealing_steps)
          .defaults_to(0)
          .range(0, kMaxAnnealingSteps)
          .when(has_annealing, "`annealing.beta`")
          .refused_with("needs the schedule annealing.beta")
          .explained("steps of a linear schedule, 0 = annealing.beta is the schedule",
                     "N > 0: `annealing.beta = [start, stop]` are the ends of N equal steps in "
                     "beta (N + 1 temperatures); 0: `annealing.beta` lists every temperature"),
      KeySpec("annealing", "sweeps", K::integer, &Config::annealing_sweeps)
          .defaults_to(10)
          .range(1, kMaxCount)
          .when(has_annealing, "`annealing.beta`")
          .refused_with("needs the schedule annealing.beta")
          .explained("sweeps of every replica at each temperature, after its resampling"),
      KeySpec("annealing", "resampling", K::choice, &Config::annealing_resampling)
          .defaults_to("systematic")
          .one_of({{"systematic"}, {"multinomial"}})
          .when(has_annealing, "`annealing.beta`")
          .refused_with("needs the schedule annealing.beta")
          .explained("",
                     "how a population is redrawn by its weights, keeping its size: "
                     "`\"systematic\"` (one uniform per population and step; each replica gets "
                     "the floor or ceiling of its expected copies) or `\"multinomial\"` (one "
                     "independent draw per new replica)"),
      KeySpec("annealing", "populations", K::integer, &Config::annealing_populations)
          .defaults_to(1)
          .range(1, kMaxReplicas)
          .when(has_annealing, "`annealing.beta`")
          .refused_with("needs the schedule annealing.beta")
          .explained("independent populations the replicas are split into",
                     "independent populations of run.replicas / P replicas each, resampled "
                     "separately: their free energies give the error bar of one run"),
      KeySpec("annealing", "replica_output", K::boolean, &Config::annealing_replica_output)
          .defaults_to(false)
          .when(has_annealing, "`annealing.beta`")
          .refused_with("needs the schedule annealing.beta")
          .explained("",
                     "also write every replica's observables and family at every step "
                     "(8 bytes per replica and observable per step); otherwise population "
                     "averages only"),
      // [parallel]
      KeySpec("parallel", "grid", K::grid, &Config::parallel_grid)
          .chain_role(ChainRole::no)  // a checkpoint resumes on any number of ranks
          .explained("",
                     "boxes per lattice axis of an MPI run, their product the number of ranks "
                     "(see [Several GPUs or nodes](#several-gpus-or-nodes-mpi-domain-"
                     "decomposition)); without it, the grid with the smallest halo is chosen"),
  };
}

}  // namespace

const std::vector<PassName>& pass_names() {
  static const std::vector<PassName> names = {
      {"metropolis", UpdateAlgorithm::metropolis, kAllModels},
      {"heatbath", UpdateAlgorithm::heatbath, kIsing | kPotts | kOn},
      {"overrelaxation", UpdateAlgorithm::overrelaxation, kContinuous},
      {"langevin", UpdateAlgorithm::langevin, kPhi4},
      {"mala", UpdateAlgorithm::mala, kPhi4},
      {"swendsen_wang", UpdateAlgorithm::swendsen_wang, kAllModels},
      {"wolff", UpdateAlgorithm::wolff, kAllModels}};
  return names;
}

const std::vector<TemperedCoupling>& tempered_couplings() {
  static const std::vector<TemperedCoupling> couplings = {
      {"beta", &Config::beta, &Config::tempering_beta},
      {"kappa", &Config::kappa, &Config::tempering_kappa},
      {"lambda", &Config::lambda, &Config::tempering_lambda},
      {"h", &Config::field, &Config::tempering_h}};
  return couplings;
}

const std::vector<std::pair<const char*, const char*>>& keys_annealing_replaces() {
  static const std::vector<std::pair<const char*, const char*>> keys = {
      {"model", "beta"},
      {"run", "thermalization"},
      {"run", "measurements"},
      {"run", "measure_every"},
      {"run", "checkpoint_every"},
      {"run", "checkpoint_minutes"},
      {"run", "walltime"},
      {"output", "snapshot_every"},
      {"measure", "structure_factor"},
      {"measure", "timeslice"},
      {"tempering", "beta"},
      {"tempering", "h"},
      {"tempering", "exchange_every"},
      {"tempering", "feedback"}};
  return keys;
}

bool replaced_by_ladder(const KeySpec& spec, const Config& c) {
  if (c.annealing()) {
    for (const auto& [section, key] : keys_annealing_replaces()) {
      if (spec.section == std::string(section) && spec.key == std::string(key)) return true;
    }
  }
  if (std::string(spec.section) != "model") return false;
  for (const TemperedCoupling& t : tempered_couplings()) {
    if (spec.key == std::string(t.key)) return !(c.*t.ladder).empty();
  }
  return false;
}

UpdateAlgorithm update_algorithm_named(const std::string& name) {
  for (const PassName& p : pass_names()) {
    if (name == p.name) return p.algorithm;
  }
  throw std::logic_error("update_algorithm_named: unknown pass \"" + name + "\"");
}

const std::vector<KeySpec>& key_specs() {
  static const std::vector<KeySpec> specs = make_specs();
  return specs;
}

std::vector<std::string> section_names() {
  std::vector<std::string> names;
  for (const KeySpec& spec : key_specs()) {
    if (names.empty() || names.back() != spec.section) names.push_back(spec.section);
  }
  return names;
}

const KeySpec* find_spec(const std::string& section, const std::string& key) {
  for (const KeySpec& spec : key_specs()) {
    if (section == spec.section && key == spec.key) return &spec;
  }
  return nullptr;
}

unsigned model_bit(const std::string& kind) {
  return kind == "ising"   ? kIsing
         : kind == "potts" ? kPotts
         : kind == "on"    ? kOn
         : kind == "phi4"  ? kPhi4
                           : 0u;
}

bool applies(const KeySpec& spec, const Config& c) {
  // Keys of every model apply before model.kind is read too.
  const bool model = spec.models == kAllModels || (spec.models & model_bit(c.model_kind)) != 0;
  return model && (!spec.also_when || spec.also_when(c));
}

std::vector<std::string> choices_for(const KeySpec& spec, const Config& c) {
  std::vector<std::string> names;
  for (const Choice& choice : spec.choices) {
    if (choice.models == kAllModels || (choice.models & model_bit(c.model_kind)))
      names.push_back(choice.name);
  }
  return names;
}

std::string refusal_reason(const KeySpec& spec) {
  if (spec.refusal) return spec.refusal;
  const char* who = spec.models == kPotts        ? "Potts models (model.kind = \"potts\")"
                    : spec.models == kOn         ? "O(n) models (model.kind = \"on\")"
                    : spec.models == kPhi4       ? "phi^4 models (model.kind = \"phi4\")"
                    : spec.models == kContinuous ? "continuous models (\"on\", \"phi4\")"
                    : spec.models == kIsing      ? "the Ising model"
                                                 : "some models";
  return std::string("only ") + who + " take this key";
}

bool uses_langevin(const std::vector<std::string>& sequence) {
  return std::any_of(sequence.begin(), sequence.end(),
                     [](const std::string& a) { return a == "langevin" || a == "mala"; });
}

std::string default_output_path(const std::string& source_name) {
  std::string stem = source_name;
  const size_t slash = stem.find_last_of('/');
  if (slash != std::string::npos) stem = stem.substr(slash + 1);
  const size_t dot = stem.find_last_of('.');
  if (dot != std::string::npos && dot > 0) stem = stem.substr(0, dot);
  return (stem.empty() ? "lattica" : stem) + ".h5";
}

}  // namespace lattica::config
