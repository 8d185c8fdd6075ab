#include "sim/cli/resume.hpp"

#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include "sim/checkpoint_fit.hpp"
#include "sim/checkpoint_parts.hpp"
#include "sim/decomposition.hpp"
#include "sim/output.hpp"
#include "sim/parallel/slab_fft.hpp"
#include "sim/run/multicanonical_run.hpp"

namespace lattica::cli {

namespace {

/// What `read` reads from a checkpoint file, its CheckpointError an InputError of --resume.
template <class Read>
auto read_to_resume(const Read& read) {
  try {
    return read();
  } catch (const CheckpointError& e) {
    throw InputError(std::string("--resume: ") + e.what());
  }
}

/// Refuses the checkpoint at path when its chain keys (`chain`) are not the input's.
void refuse_other_chain(const std::string& path, const std::string& chain, const Config& config) {
  const std::vector<std::string> changed = chain_differences(chain, config.chain_toml);
  if (changed.empty()) return;
  std::string list;
  for (const std::string& line : changed) list += "\n  " + line;
  throw InputError("--resume: " + path +
                   " continues a chain with other settings; these keys differ "
                   "(only run.measurements may grow, and the backend, threads, "
                   "device, output and checkpoint keys change):" +
                   list);
}

}  // namespace

Checkpoint checkpoint_to_resume(const Config& config) {
  const std::string path = checkpoint_path(config.output_path);
  const Checkpoint c = read_to_resume([&] { return read_checkpoint(path); });
  refuse_other_chain(path, c.chain_config, config);
  const int64_t total = config.total_sweeps();
  if (total < c.sweep) {
    throw InputError("--resume: run.measurements = " + std::to_string(config.measurements) +
                     " asks for " + std::to_string(total) +
                     " sweeps, but the checkpoint is at sweep " + std::to_string(c.sweep));
  }
  try {
    check_checkpoint_fits(c, config, path);  // a valid checksum, impossible contents
  } catch (const CheckpointError& e) {
    throw InputError(std::string("--resume: ") + e.what());
  }
  if (!std::filesystem::exists(config.output_path)) {
    throw InputError("--resume: the output " + config.output_path +
                     " of the checkpoint is missing");
  }
  return c;
}

void read_resumed_configuration(Checkpoint& c, const Config& config, Communicator& world) {
  if (c.parts.generation.empty()) return;  // a single file: the configuration is in it
  const std::string path = checkpoint_path(config.output_path);
  EngineState& e = c.engine;
  if (world.size() > 1) {  // this rank's storage: its box and the ghost layers around it
    const Decomposition boxes(config.dims, config.parallel_grid, world.size());
    e.region_origin = boxes.storage_origin(world.rank());
    e.region_extents = boxes.storage_extents();
  }
  const std::vector<int64_t> origin =
      world.size() > 1 ? e.region_origin : std::vector<int64_t>(config.dims.size(), 0);
  const std::vector<int64_t> extents = world.size() > 1 ? e.region_extents : config.dims;
  std::string failure;
  try {
    e.configuration = read_checkpoint_region(path, c, origin, extents);
    check_region_fits(e.configuration, volume_of(extents), config, path);
    StructureFactorSums& sums = e.structure_factor;
    if (sums.samples > 0 && sums.power_sum.empty()) {  // this rank's rows, from the parts
      const AxisSplit rows{config.dims[0], world.size()};
      read_checkpoint_spectrum_rows(path, c, rows.first(world.rank()), rows.count(world.rank()),
                                    sums);
    }
  } catch (const CheckpointError& error) {
    failure = error.what();
  } catch (const std::exception& error) {  // HdfError: a part missing or unreadable
    failure = "checkpoint " + path + ": a part cannot be read: " + error.what();
  }
  if (world.max(failure.empty() ? 0 : 1) != 0) {  // every rank stops, each with a reason
    throw InputError(
        "--resume: " +
        (failure.empty() ? "checkpoint " + path + ": another rank cannot read its box" : failure));
  }
}

MulticanonicalCheckpoint multicanonical_checkpoint_to_resume(const Config& config) {
  const std::string path = checkpoint_path(config.output_path);
  const MulticanonicalCheckpoint c =
      read_to_resume([&] { return read_multicanonical_checkpoint(path); });
  refuse_other_chain(path, c.chain_config, config);
  if (c.phase == 2 && c.phase_done > config.measurements) {
    throw InputError("--resume: run.measurements = " + std::to_string(config.measurements) +
                     ", but the checkpoint holds " + std::to_string(c.phase_done) +
                     " measurements");
  }
  const size_t bins = muca_bin_energies(config).size();
  const auto spins = static_cast<size_t>(config.volume() * config.muca_walkers) *
                     static_cast<size_t>(config.muca_spin_bytes());
  if (c.log_g.size() != bins || c.spins.size() != spins)
    throw InputError("--resume: checkpoint " + path + " holds another lattice or walker count");
  return c;
}

PointStart resume_start(const Config& config, bool sweep) {
  std::error_code ec;
  const bool has_output = std::filesystem::exists(config.output_path, ec);
  if (config.multicanonical) {
    if (std::filesystem::exists(checkpoint_path(config.output_path), ec)) {
      const MulticanonicalCheckpoint c = multicanonical_checkpoint_to_resume(config);
      const bool done = c.phase == 2 && c.phase_done == config.measurements &&
                        output_finished(config.output_path);
      return done ? PointStart::skip : PointStart::resume;
    }
    if (has_output && output_finished(config.output_path)) return PointStart::skip;
    throw InputError("--resume: " + config.output_path +
                     " has no checkpoint (a multicanonical run writes them with "
                     "run.checkpoint_every, run.checkpoint_minutes or run.walltime)");
  }
  if (config.annealing()) {  // a finished one is skipped like any other point
    if (has_output && output_finished(config.output_path)) return PointStart::skip;
    throw InputError("--resume: " + config.output_path +
                     ": population annealing ([annealing]) writes no checkpoints; run it again "
                     "without --resume (--force replaces an unfinished output)");
  }
  if (std::filesystem::exists(checkpoint_path(config.output_path), ec)) {
    const Checkpoint c = checkpoint_to_resume(config);
    // The checkpoint at the end of a run is kept for extending it; without more measurements
    // there is nothing to do (unless the run died before it could say it finished).
    const bool done = c.sweep == config.total_sweeps() && output_finished(config.output_path);
    return done ? PointStart::skip : PointStart::resume;
  }
  if (has_output && output_finished(config.output_path)) return PointStart::skip;
  if (sweep && !has_output) return PointStart::fresh;
  if (sweep) {
    const std::string n = std::to_string(config.point_index);
    throw InputError("--resume: sweep point " + n + ": " + config.output_path +
                     " has no checkpoint and did not finish (stopped before its first "
                     "checkpoint?); run that point again with --force --task-id " +
                     n);
  }
  checkpoint_to_resume(config);  // throws, saying why there is no checkpoint
  return PointStart::resume;
}

}  // namespace lattica::cli
