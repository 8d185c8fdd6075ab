// Inputs at and beyond their limits, end to end (issue 17): a walltime inside the safety
// margin, couplings whose tables or energies overflow, measurements that are not finite,
// inputs that never end, and checkpoints whose checksum is right but whose contents are
// impossible. Each is refused with its cause, and a refused run touches nothing on disk.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "sim/checkpoint.hpp"
#include "tests/cli/cli_support.hpp"

namespace lattica {
namespace {

using namespace cli;

class InputLimits : public Cli {
 protected:
  /// Waits at most `seconds` for a sim started with start(); kills it (and fails) when it is
  /// still running then, so a hang shows as a failure instead of stopping the suite.
  RunResult finish_within(pid_t pid, int seconds) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    for (;;) {
      // Polls without reaping (WNOWAIT): finish() reaps it and reads its captured output.
      siginfo_t info{};
      const int r = waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
      if (r != 0 || info.si_pid == pid) return finish(pid);
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid, SIGKILL);
        ADD_FAILURE() << "sim still ran after " << seconds << " s; killed";
        return finish(pid);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  /// sim with `args` under a 4 GiB address-space limit where it can be set (a sim that reads an
  /// endless input into memory fails there instead of exhausting the machine), for at most
  /// `seconds`.
  RunResult limited_sim(const std::vector<std::string>& args, int seconds = 60) const {
    // Best effort: where the limit cannot be set (some sandboxes), the timeout still applies.
    std::vector<std::string> shell{"-c", "ulimit -v 4194304 2>/dev/null; exec \"$0\" \"$@\"",
                                   sim_exe()};
    shell.insert(shell.end(), args.begin(), args.end());
    return finish_within(start(shell, "/bin/sh"), seconds);
  }
};

/// Expects a refusal: exit 2, "sim: error:", every word of `words` in the message.
void expect_refused(const RunResult& r, const std::vector<std::string>& words) {
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_NE(r.err.find("sim: error:"), std::string::npos) << r;
  for (const std::string& w : words) EXPECT_NE(r.err.find(w), std::string::npos) << w << "\n" << r;
}

// --- run.walltime ------------------------------------------------------------------------------

// The run keeps 30 s for its final checkpoint: a walltime within them would stop after the
// first sweeps of every job (and, requeued, advance a few sweeps per job forever).
TEST_F(InputLimits, WalltimeWithinTheSafetyMarginIsRefused) {
  for (const char* walltime : {"00:00:20", "00:00:30"}) {
    const RunResult r = sim(small_run(
        {"--backend", "cpu", "-o", "out.h5", "--set", std::string("run.walltime=") + walltime}));
    expect_refused(r, {"run.walltime", walltime, "30 s"});
    EXPECT_FALSE(fs::exists(path("out.h5")));
    EXPECT_FALSE(fs::exists(path("out.h5.checkpoint")));
  }
}

// --- couplings that overflow -------------------------------------------------------------------

/// A small run of each model, to which a test adds couplings with --set.
std::vector<std::string> model_run(const std::string& model,
                                   const std::vector<std::string>& extra) {
  std::vector<std::string> args{default_input(), "--backend",
                                "cpu",           "-o",
                                "out.h5",        "-q",
                                "--set",         "lattice.dims=[8,8]",
                                "--set",         "run.thermalization=10",
                                "--set",         "run.measurements=10",
                                "--set",         "model.kind=" + model};
  if (model == "potts") args.insert(args.end(), {"--set", "model.q=3"});
  if (model == "on") args.insert(args.end(), {"--set", "model.n=3"});
  if (model == "phi4") {
    // lattice.toml sets model.beta, which phi^4 refuses: a file of its own.
    args[0] = "phi4.toml";
  }
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// Huge couplings used to run and write -inf or NaN observables with exit 0; now the input is
// refused, naming the coupling, whether it comes from the file, --set or a sweep.
TEST_F(InputLimits, CouplingsThatOverflowAreRefusedForEveryModel) {
  std::ofstream(path("phi4.toml"))
      << "[model]\nkind = \"phi4\"\nkappa = 0.2\nlambda = 0.5\n[run]\nseed = 1\n";
  const struct {
    const char* model;
    std::vector<std::string> set;
    const char* key;
  } cases[] = {
      {"ising", {"--set", "model.beta=1e308"}, "model.beta"},
      {"ising", {"--set", "model.h=-1e308"}, "model.h"},
      {"potts", {"--set", "model.beta=1e308"}, "model.beta"},
      {"potts", {"--set", "model.h=-1e308"}, "model.h"},
      {"on", {"--set", "model.beta=1e308"}, "model.beta"},
      {"on", {"--set", "model.h=-1e308"}, "model.h"},
      {"on", {"--set", "model.precision=float", "--set", "model.beta=1e38"}, "model.beta"},
      {"phi4", {"--set", "model.kappa=1e308"}, "model.kappa"},
      {"phi4", {"--set", "model.lambda=1e308"}, "model.lambda"},
      {"phi4", {"--set", "model.h=-1e308"}, "model.h"},
      {"ising", {"--set", "model.beta=[0.4, 1e308]"}, "model.beta"},  // a sweep
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.model) + " " + c.set.back());
    const RunResult r = sim(model_run(c.model, c.set));
    expect_refused(r, {c.key, "overflow"});
    EXPECT_FALSE(fs::exists(path("out.h5")));
    EXPECT_FALSE(fs::exists(path("out.0.h5")));
    EXPECT_FALSE(fs::exists(path("out.index.json")));
  }
  // Enormous couplings whose tables stay finite are the zero-temperature limit: they run, and
  // their measurements are finite (a non-finite one would end the run with exit 3).
  for (const std::vector<std::string>& fine : std::vector<std::vector<std::string>>{
           {"--set", "model.beta=1e300"}, {"--set", "model.h=1e290"}}) {
    const RunResult r = sim(model_run("ising", fine));
    EXPECT_EQ(r.exit_code, 0) << fine.back() << "\n" << r;
    fs::remove(path("out.h5"));
  }
}

// A measurement that is not finite stops the run (exit 3, a runtime failure) with the
// observable, the replica and the sweep, instead of being written: here a Langevin step so
// large that the unadjusted dynamics diverges.
TEST_F(InputLimits, NonFiniteMeasurementIsARuntimeErrorNamingObservableAndSweep) {
  std::ofstream(path("ula.toml")) << "[lattice]\ndims = [8, 8]\n"
                                     "[model]\nkind = \"phi4\"\nkappa = 0.25\nlambda = 0.5\n"
                                     "[update]\nalgorithm = \"langevin\"\nlangevin_step = 5.0\n"
                                     "[run]\nthermalization = 20\nmeasurements = 100\n"
                                     "seed = 4\nbackend = \"cpu\"\n";
  const RunResult r = sim({path("ula.toml"), "-o", "ula.h5"});
  EXPECT_EQ(r.exit_code, 3) << r;
  EXPECT_NE(r.err.find("sim: runtime failure:"), std::string::npos) << r;
  EXPECT_NE(r.err.find("is not finite"), std::string::npos) << r;
  EXPECT_NE(r.err.find("at sweep "), std::string::npos) << r;
  EXPECT_NE(r.err.find("diverged"), std::string::npos) << r;
  bool names_an_observable = false;
  for (const char* name : {"'phi'", "'abs_phi'", "'phi2'", "'phi4'", "'link'", "'action'"})
    names_an_observable |= r.err.find(name) != std::string::npos;
  EXPECT_TRUE(names_an_observable) << r;
}

// --- inputs that never end ---------------------------------------------------------------------

// An input larger than 4 MiB is refused before it is read further: endless devices used to be
// read until memory ran out (an uncaught std::bad_alloc), a FIFO without a writer to block.
TEST_F(InputLimits, EndlessOrHugeInputsAreRefused) {
  for (const char* device : {"/dev/zero", "/dev/urandom"}) {
    const RunResult r = limited_sim({device, "-o", "out.h5"});
    expect_refused(r, {device, "4 MiB"});
    EXPECT_FALSE(fs::exists(path("out.h5")));
  }
  {  // a regular file of valid TOML (comments only) one byte over the cap
    std::string text;
    while (text.size() <= (size_t(4) << 20)) text += "# a comment line of some length, repeated\n";
    std::ofstream(path("huge.toml")) << text;
    expect_refused(limited_sim({path("huge.toml"), "-o", "out.h5"}), {"huge.toml", "4 MiB"});
  }
  // A FIFO nobody writes to reads as empty, and one whose writer never stops hits the cap.
  ASSERT_EQ(mkfifo(path("fifo.toml").c_str(), 0600), 0);
  expect_refused(limited_sim({path("fifo.toml"), "-o", "out.h5"}, 30), {"fifo.toml"});
  // This process holds both ends, so sim never sees the writer missing; writes that find the
  // pipe full wait a millisecond and retry until sim has finished.
  const int fifo = open(path("fifo.toml").c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(fifo, 0);
  std::atomic<bool> done{false};
  std::thread writer([&] {
    std::string line;  // 4 KiB per write
    while (line.size() < 4096) line += "# endless\n";
    while (!done) {
      if (write(fifo, line.data(), line.size()) < 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  const RunResult endless = limited_sim({path("fifo.toml"), "-o", "out.h5"}, 30);
  done = true;
  writer.join();
  close(fifo);
  expect_refused(endless, {"fifo.toml", "4 MiB"});
  EXPECT_FALSE(fs::exists(path("out.h5")));
}

// --- checkpoints with a valid checksum and impossible contents ---------------------------------

/// Rewrites the checkpoint at `file` with `change` applied, through the program's own writer:
/// the checksum is right (FNV-1a over the payload, computed by write_checkpoint), only the
/// contents are wrong.
void forge(const std::string& file, const std::function<void(Checkpoint&)>& change) {
  Checkpoint c = read_checkpoint(file);
  change(c);
  write_checkpoint(file, c);
}

/// A double's bytes at index i of a configuration of doubles.
void set_double(std::vector<unsigned char>& bytes, size_t i, double value) {
  std::memcpy(bytes.data() + i * sizeof(double), &value, sizeof value);
}

struct Forgery {
  const char* what;
  std::function<void(Checkpoint&)> change;
  std::vector<std::string> words;  ///< the message must name these
};

/// Runs `input` (with checkpoints) to its end, then for each forgery resumes from a forged copy
/// of its checkpoint: exit 2 with the cause, and neither the output nor the checkpoint touched.
void expect_forgeries_refused(const std::string& input, const std::vector<Forgery>& forgeries,
                              const std::function<RunResult(const std::vector<std::string>&)>& run,
                              const std::string& dir) {
  const std::string in = dir + "/in.toml", out = dir + "/out.h5", checkpoint = out + ".checkpoint";
  std::ofstream(in) << input;
  ASSERT_EQ(run({in, "--backend", "cpu", "-o", out, "-q"}).exit_code, 0);
  const std::string pristine = read_bytes(checkpoint);
  ASSERT_FALSE(pristine.empty());
  const std::string output = read_bytes(out);
  for (const Forgery& f : forgeries) {
    SCOPED_TRACE(f.what);
    std::ofstream(checkpoint, std::ios::binary) << pristine;
    forge(checkpoint, f.change);
    const std::string forged = read_bytes(checkpoint);
    const RunResult r =
        run({in, "--backend", "cpu", "-o", out, "--resume", "--set", "run.measurements=40"});
    expect_refused(r, f.words);
    EXPECT_EQ(r.err.find("checksum"), std::string::npos) << r;  // the checksum was right
    EXPECT_TRUE(read_bytes(out) == output) << "the output was touched";
    EXPECT_TRUE(read_bytes(checkpoint) == forged) << "the checkpoint was touched";
  }
  // The pristine checkpoint still resumes (run.measurements may grow).
  std::ofstream(checkpoint, std::ios::binary) << pristine;
  const RunResult resumed =
      run({in, "--backend", "cpu", "-o", out, "--resume", "--set", "run.measurements=40"});
  EXPECT_EQ(resumed.exit_code, 0) << resumed;
}

const char* const kIsingInput =
    "[lattice]\ndims = [16, 16]\n[model]\nkind = \"ising\"\nbeta = 0.4\n"
    "[run]\nthermalization = 10\nmeasurements = 20\nseed = 3\ncheckpoint_every = 5\n";

TEST_F(InputLimits, CheckpointWithImpossibleCountersIsRefused) {
  const auto run = [&](const std::vector<std::string>& args) {
    return finish_within(start(args), 120);
  };
  expect_forgeries_refused(
      kIsingInput,
      {{"a negative sweep", [](Checkpoint& c) { c.sweep = -3; }, {"sweep", "-3"}},
       {"a sweep beyond the run", [](Checkpoint& c) { c.sweep = 1000; }, {"sweep 1000"}},
       {"a snapshot after the checkpoint's sweep",
        [](Checkpoint& c) { c.last_snapshot = c.sweep + 7; },
        {"snapshot"}},
       {"more output rows than measurements",
        [](Checkpoint& c) { c.output.measurements += 5; },
        {"measurements", "25"}},
       {"the engine's measurement count",
        [](Checkpoint& c) { c.engine.measurements = 1000; },
        {"measurements", "1000"}},
       {"negative output rows", [](Checkpoint& c) { c.output.snapshots = -1; }, {"snapshots"}},
       {"a histogram that does not add up",
        [](Checkpoint& c) { c.engine.histograms.at(0).samples += 1; },
        {"histogram", "energy"}},
       {"a configuration of the wrong size",
        [](Checkpoint& c) { c.engine.configuration.resize(10); },
        {"configuration", "10 bytes"}}},
      run, dir_);
}

TEST_F(InputLimits, CheckpointWithImpossibleSpinsIsRefused) {
  const auto run = [&](const std::vector<std::string>& args) {
    return finish_within(start(args), 120);
  };
  expect_forgeries_refused(kIsingInput,
                           {{"an Ising spin of 7",
                             [](Checkpoint& c) { c.engine.configuration.at(5) = 7; },
                             {"site 5", "7", "+1 or -1"}}},
                           run, dir_);
  fs::create_directory(path("potts"));
  expect_forgeries_refused(
      "[lattice]\ndims = [8, 8]\n[model]\nkind = \"potts\"\nq = 3\nbeta = 0.5\n"
      "[run]\nthermalization = 10\nmeasurements = 20\nseed = 3\ncheckpoint_every = 5\n",
      {{"a Potts state >= q",
        [](Checkpoint& c) { c.engine.configuration.at(9) = 3; },
        {"site 9", "3", "q = 3"}}},
      run, path("potts"));
  fs::create_directory(path("on"));
  expect_forgeries_refused(
      "[lattice]\ndims = [8, 8]\n[model]\nkind = \"on\"\nn = 3\nbeta = 0.5\n"
      "[run]\nthermalization = 10\nmeasurements = 20\nseed = 3\ncheckpoint_every = 5\n",
      {{"an O(3) spin of length 2",
        [](Checkpoint& c) {
          for (size_t k = 0; k < 3; ++k) set_double(c.engine.configuration, 3 * 4 + k, k ? 0 : 2);
        },
        {"site 4", "unit"}},
       {"an O(3) spin with a NaN",
        [](Checkpoint& c) {
          set_double(c.engine.configuration, 0, std::numeric_limits<double>::quiet_NaN());
        },
        {"site 0", "unit"}}},
      run, path("on"));
  fs::create_directory(path("phi4"));
  expect_forgeries_refused(
      "[lattice]\ndims = [8, 8]\n[model]\nkind = \"phi4\"\nkappa = 0.2\nlambda = 0.5\n"
      "[run]\nthermalization = 10\nmeasurements = 20\nseed = 3\ncheckpoint_every = 5\n",
      {{"a NaN field value",
        [](Checkpoint& c) {
          set_double(c.engine.configuration, 11, std::numeric_limits<double>::quiet_NaN());
        },
        {"site 11", "finite"}},
       {"an infinite field value",
        [](Checkpoint& c) {
          set_double(c.engine.configuration, 2, -std::numeric_limits<double>::infinity());
        },
        {"site 2", "finite"}}},
      run, path("phi4"));
}

}  // namespace
}  // namespace lattica
