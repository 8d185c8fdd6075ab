// The command line's multicanonical point: walkers on the chosen backend, the run, the output.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "sim/checkpoint.hpp"
#include "sim/cli/point.hpp"
#include "sim/run/multicanonical_run.hpp"

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

void run_multicanonical_point(const Config& config, Communicator& world, bool force, bool quiet) {
  if (world.size() > 1)
    throw InputError("[multicanonical]: a multicanonical run is one process; run it without MPI");
  std::unique_ptr<WalkerEnsemble> walkers = make_walkers(config, quiet);
  if (!quiet) {
    std::cerr << "sim: backend " << walkers->backend_name() << " (" << walkers->device_name()
              << "), " << config.muca_walkers << " multicanonical walkers\n";
  }
  RunMetadata meta = config_metadata(config);
  meta.backend = walkers->backend_name();
  meta.device = walkers->device_name();
  std::filesystem::remove(checkpoint_path(config.output_path));  // stale: this run writes none
  OutputFile out(config.output_path, force, meta, {}, {});
  const MulticanonicalRecord record = run_multicanonical(config, *walkers, quiet);
  out.write_multicanonical(record);
  out.mark_finished();
  out.close();
  if (!quiet) {
    const double updates = static_cast<double>(record.walkers) * record.volume *
                           static_cast<double>(record.wang_landau_sweeps + record.thermalization +
                                               record.measure_every * record.sweeps.size());
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
}

}  // namespace lattica::cli
