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

class InputLimits : public Cli {
 protected:
  /// Waits at most `seconds` for a sim started with start(); kills it (and fails) when it is
  /// still running then, so a hang shows as a failure instead of stopping the suite.
  RunResult finish_within(pid_t pid, int seconds) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    int status = 0;
    pid_t done = 0;
    while ((done = waitpid(pid, &status, WNOHANG)) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid, SIGKILL);
        ADD_FAILURE() << "sim still ran after " << seconds << " s; killed";
        return finish(pid);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (done != pid) return finish(pid);  // waitpid failed here (EINTR): finish() retries
    RunResult r;                          // reaped above: only the captured output is left to read
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    r.out = read_bytes(base_ + "/stdout.txt");
    r.err = read_bytes(base_ + "/stderr.txt");
    return r;
  }

  /// sim with `args` under a 4 GiB address-space limit (a sim that reads an endless input into
  /// memory fails there instead of exhausting the machine), for at most `seconds`.
  RunResult limited_sim(const std::vector<std::string>& args, int seconds = 60) const {
    std::vector<std::string> shell{"-c", "ulimit -v 4194304 && exec \"$0\" \"$@\"", sim_exe()};
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

}  // namespace
}  // namespace lattica
