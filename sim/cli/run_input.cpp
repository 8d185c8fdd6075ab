#include <filesystem>
#include <iostream>
#include <vector>

#include "sim/cli/commands.hpp"
#include "sim/cli/exits.hpp"
#include "sim/cli/point.hpp"
#include "sim/cli/resume.hpp"
#include "sim/decomposition.hpp"
#include "sim/output_lock.hpp"
#include "sim/sweep_index.hpp"

namespace lattica::cli {

namespace {

/// The points of the plan to run: all, or the one --task-id names (0 for a plan of one point).
std::vector<const Config*> selected_points(const RunPlan& plan, int64_t task_id) {
  const auto n_points = static_cast<int64_t>(plan.points.size());
  std::vector<const Config*> selected;
  for (const auto& c : plan.points) {
    if (task_id < 0 || c.point_index == task_id || (n_points == 1 && task_id == 0))
      selected.push_back(&c);
  }
  return selected;
}

/// Everything that can refuse the run, checked before anything is written, so that a refusal
/// (exit 2) leaves every file as it was: the outputs (by rank 0, which writes them, for every
/// rank), the grids, and, under each point's lock, how --resume continues it. Fills `locks`
/// (rank 0's, held until the run ends, so that no other run touches these outputs meanwhile)
/// and `starts` (every rank's); false when the run is refused (rank 0 said why).
bool prepare_points(const std::vector<const Config*>& selected, bool sweep,
                    const CliOptions& options, Communicator& world, std::vector<OutputLock>& locks,
                    std::vector<PointStart>& starts) {
  const bool root = world.rank() == 0;
  starts.assign(selected.size(), options.resume ? PointStart::resume : PointStart::fresh);
  bool refused = false;
  for (const Config* c : selected) {
    std::error_code ec;
    if (root && !refused && !options.force && !options.resume &&
        std::filesystem::exists(c->output_path, ec)) {
      std::cerr << "sim: error: output.path = \"" << c->output_path
                << "\": the file exists; use --force to overwrite it\n";
      refused = true;
    }
  }
  try {
    for (const Config* c : selected) {
      if (!refused && !c->parallel_grid.empty())
        Decomposition(c->dims, c->parallel_grid, world.size());
    }
    for (size_t i = 0; root && !refused && i < selected.size(); ++i) {
      locks.emplace_back(selected[i]->output_path);
      if (options.resume) starts[i] = resume_start(*selected[i], sweep);
    }
  } catch (const InputError& e) {
    if (root) std::cerr << "sim: error: " << e.what() << "\n";
    refused = true;
  } catch (const std::exception& e) {
    locks.clear();
    fail_at_runtime(e, world);
  }
  if (world.max(refused ? 1 : 0) != 0) return false;
  world.broadcast(starts.data(), starts.size() * sizeof(PointStart), 0);
  return true;
}

}  // namespace

int run_input(const CliOptions& options, const std::shared_ptr<Communicator>& world) {
  const bool root = world->rank() == 0;
  const bool quiet = options.quiet;
  RunPlan plan;
  try {
    plan = load_plan(options.input_path, options.overrides);
  } catch (const ConfigError& e) {
    if (root)
      for (const auto& m : e.messages()) std::cerr << "sim: error: " << m << "\n";
    return kExitBadInput;
  }
  const auto n_points = static_cast<int64_t>(plan.points.size());
  if (options.task_id >= n_points) {
    if (!root) return kExitBadInput;
    std::cerr << "sim: error: --task-id " << options.task_id << ": the input has " << n_points
              << " point(s), numbered 0 to " << n_points - 1 << "\n";
    return kExitBadInput;
  }
  const std::vector<const Config*> selected = selected_points(plan, options.task_id);
  const bool sweep = !plan.swept.empty();
  std::vector<OutputLock> locks;
  std::vector<PointStart> starts;
  if (!prepare_points(selected, sweep, options, *world, locks, starts)) return kExitBadInput;

  bool index_written = !sweep || !root;
  auto write_index = [&] {
    if (index_written) return;
    write_sweep_index(plan);
    if (!quiet)
      std::cerr << "sim: sweep of " << n_points << " points, index " << plan.index_path << "\n";
    index_written = true;
  };
  try {
    for (size_t i = 0; i < selected.size(); ++i) {
      const Config& c = *selected[i];
      if (starts[i] == PointStart::skip) {
        if (!quiet) {
          std::cerr << "sim: ";
          if (c.point_index >= 0) std::cerr << "sweep point " << c.point_index << ": ";
          std::cerr << c.output_path << " is finished; skipped\n";
        }
        continue;
      }
      if (c.multicanonical) {
        write_index();
        if (run_multicanonical_point(c, *world, options.force, quiet,
                                     starts[i] == PointStart::resume))
          return kExitStopped;
        continue;
      }
      std::unique_ptr<Engine> engine = make_engine(c, world, quiet);
      write_index();  // once the first point is sure to run
      if (run_point(c, *engine, *world, options.force, quiet, starts[i] == PointStart::resume))
        return kExitStopped;
    }
    write_index();  // every point was finished already
  } catch (const InputError& e) {
    // Every rank reads the same input, so every rank finds the same error.
    if (root) std::cerr << "sim: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    locks.clear();
    fail_at_runtime(e, *world);
  }
  return 0;
}

}  // namespace lattica::cli
