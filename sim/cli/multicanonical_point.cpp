// The command line's multicanonical point: walkers on the chosen backend, the run, the output.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>

#include "sim/checkpoint.hpp"
#include "sim/cli/point.hpp"
#include "sim/cli/resume.hpp"
#include "sim/run/multicanonical_run.hpp"
#include "sim/run/stop_policy.hpp"

namespace lattica::cli {

namespace {

/// The walkers on the backend run.backend asks for ("auto": a GPU when there is one).
std::unique_ptr<WalkerEnsemble> make_walkers(const Config& config, bool quiet) {
  const WalkerSettings settings = walker_settings(config);
  std::string reason;
  const bool gpu =
      config.backend == "cuda" || (config.backend == "auto" && cuda_device_count(reason) > 0);
  if (config.backend == "auto" && !gpu && !quiet)
    std::cerr << "sim: " << reason << "; using the CPU backend\n";
  return gpu ? make_cuda_walkers(settings) : make_cpu_walkers(settings);
}

}  // namespace

bool run_multicanonical_point(const Config& config, Communicator& world, bool force, bool quiet,
                              bool resume) {
  if (world.size() > 1)
    throw InputError("[multicanonical]: a multicanonical run is one process; run it without MPI");
  const std::string checkpoint_file = checkpoint_path(config.output_path);
  std::optional<MulticanonicalCheckpoint> from;
  if (resume) from = multicanonical_checkpoint_to_resume(config);
  std::unique_ptr<WalkerEnsemble> walkers = make_walkers(config, quiet);
  if (!quiet) {
    std::cerr << "sim: backend " << walkers->backend_name() << " (" << walkers->device_name()
              << "), " << config.muca_walkers << " multicanonical walkers";
    if (from) std::cerr << ", resuming at sweep " << from->sweep;
    std::cerr << "\n";
  }
  RunMetadata meta = config_metadata(config);
  meta.backend = walkers->backend_name();
  meta.device = walkers->device_name();
  meta.snapshot = walkers->snapshot_format();  // none is written; the empty dataset's shape
  if (!from) std::filesystem::remove(checkpoint_file);  // stale: another run's
  // The output is written at the end; a resumed run writes it afresh.
  OutputFile out(config.output_path, force || resume, meta, {}, {});

  StopPolicy policy(config, nullptr);
  policy.start();
  auto last_step = std::chrono::steady_clock::now();
  std::string stop_reason;
  uint64_t stopped_at = 0;
  const MulticanonicalStep step = [&](uint64_t previous, uint64_t done, bool last,
                                      const std::function<MulticanonicalCheckpoint()>& state) {
    const auto now = std::chrono::steady_clock::now();
    policy.step_took(std::chrono::duration<double>(now - last_step).count());
    const StopDecision d =
        policy.decide(static_cast<int64_t>(previous), static_cast<int64_t>(done));
    // A run that checkpoints ends with one, so that more measurements can extend it.
    if (!d.stop_reason.empty() || d.checkpoint || (last && policy.checkpoints())) {
      const auto begin = std::chrono::steady_clock::now();
      write_multicanonical_checkpoint(checkpoint_file, state());
      policy.checkpoint_took(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
    }
    last_step = std::chrono::steady_clock::now();
    stop_reason = d.stop_reason;
    stopped_at = done;
    return !d.stop_reason.empty();
  };
  bool stopped = false;
  const MulticanonicalRecord record =
      run_multicanonical(config, *walkers, quiet, from ? &*from : nullptr, step, &stopped);
  if (stopped) {
    out.close();
    std::fprintf(stderr,
                 "sim: stopped by %s after sweep %llu; checkpoint %s written; continue with "
                 "--resume\n",
                 stop_reason.c_str(), static_cast<unsigned long long>(stopped_at),
                 checkpoint_file.c_str());
    return true;
  }
  out.write_multicanonical(record);
  out.mark_finished();
  out.close();
  if (!policy.checkpoints()) std::filesystem::remove(checkpoint_file);
  if (!quiet) {
    const double updates =
        static_cast<double>(record.walkers) * record.volume *
        static_cast<double>(record.wang_landau_sweeps +
                            record.refine_iterations * record.refine_sweeps +
                            record.thermalization + record.measure_every * record.sweeps.size());
    std::fprintf(
        stderr,
        "sim: wrote %s: %lld Wang-Landau sweeps (%d stages, ln f = %.3g), %zu "
        "measurements of %lld walkers in %.3f s (%.3f site updates/ns, histograms "
        "%.1f%% of the time, %s)\n",
        config.output_path.c_str(), static_cast<long long>(record.wang_landau_sweeps),
        record.stages, record.lnf_reached, record.sweeps.size(),
        static_cast<long long>(record.walkers), record.seconds, updates / (record.seconds * 1e9),
        100.0 * record.histogram_seconds / record.seconds, walkers->backend_name().c_str());
  }
  return false;
}

}  // namespace lattica::cli
