#pragma once
// What the command-line tests share: the sim executable and source tree (SIM_EXE and
// SIM_SOURCE_DIR override the build's own, for running the tests from a bundle on another
// machine), and the Cli fixture, which runs sim as a subprocess in a fresh temporary directory.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace lattica {

namespace fs = std::filesystem;

inline std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

inline std::string sim_exe() { return env_or("SIM_EXE", LATTICA_SIM_EXE); }
inline std::string source_dir() { return env_or("SIM_SOURCE_DIR", LATTICA_SOURCE_DIR); }
inline std::string default_input() { return source_dir() + "/inputs/lattice.toml"; }

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct RunResult {
  int exit_code = -1;  ///< the exit status, or -SIGNAL when the process was killed
  std::string out;
  std::string err;
  std::string all() const { return out + err; }
};

inline std::ostream& operator<<(std::ostream& os, const RunResult& r) {
  return os << "exit code " << r.exit_code << "\n--- stdout ---\n"
            << r.out << "--- stderr ---\n"
            << r.err;
}

// --- the fixture ----------------------------------------------------------------------------

class Cli : public testing::Test {
 protected:
  void SetUp() override {
    char base[] = "/tmp/lattica_cli_test_XXXXXX";
    ASSERT_NE(mkdtemp(base), nullptr) << "cannot create a temporary directory";
    base_ = base;
    dir_ = base_ + "/work";
    ASSERT_TRUE(fs::create_directory(dir_));
  }

  void TearDown() override {
    std::error_code ec;
    if (!base_.empty()) fs::remove_all(base_, ec);
  }

  /// Waits (at most 2 minutes) until a file exists, e.g. a running sim's first checkpoint.
  static void wait_for_file(const std::string& file) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (!fs::exists(file) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }

  /// A path inside the test's working directory.
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  /// Runs sim with `args` in the working directory, capturing stdout, stderr and the exit code.
  RunResult sim(const std::vector<std::string>& args) const { return finish(start(args)); }

  /// Starts sim with `args` in the working directory (stdout and stderr to files); finish()
  /// waits for it. One at a time.
  pid_t start(const std::vector<std::string>& args, const std::string& program = "") const {
    const std::string exe = program.empty() ? sim_exe() : program;
    const std::string out_path = base_ + "/stdout.txt", err_path = base_ + "/stderr.txt";
    std::vector<std::string> argv_strings{exe};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_strings) argv.push_back(a.data());
    argv.push_back(nullptr);
    // Idle OpenMP threads sleep instead of spinning: with several tests running at once on a
    // small machine, spinning threads of tiny runs slow each other down a hundredfold.
    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e) env_strings.emplace_back(*e);
    if (!std::getenv("OMP_WAIT_POLICY")) env_strings.emplace_back("OMP_WAIT_POLICY=passive");
    std::vector<char*> envp;
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);

    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      // The child: only async-signal-safe calls until exec.
      const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (out < 0 || err < 0 || dup2(out, STDOUT_FILENO) < 0 || dup2(err, STDERR_FILENO) < 0 ||
          chdir(dir_.c_str()) != 0) {
        _exit(126);
      }
      close(out);
      close(err);
      execve(exe.c_str(), argv.data(), envp.data());
      _exit(127);
    }
    return pid;
  }

  RunResult finish(pid_t pid) const {
    const std::string exe = sim_exe();
    const std::string out_path = base_ + "/stdout.txt", err_path = base_ + "/stderr.txt";
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
      if (errno != EINTR) throw std::runtime_error("waitpid failed");
    }
    RunResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    r.out = read_bytes(out_path);
    r.err = read_bytes(err_path);
    if (r.exit_code == 127 || r.exit_code == 126) {
      ADD_FAILURE() << "could not run " << exe << " (set SIM_EXE to the sim executable)";
    }
    return r;
  }

  /// The default input made small: 16x16, 10 + 40 * 3 = 130 sweeps, snapshots every 30.
  static std::vector<std::string> small_run(const std::vector<std::string>& extra) {
    std::vector<std::string> args{
        default_input(),         "--set", "lattice.dims=[16,16]",    "--set",
        "run.thermalization=10", "--set", "run.measurements=40",     "--set",
        "run.measure_every=3",   "--set", "output.snapshot_every=30"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  std::string base_;  ///< per-test scratch; holds the captured output and dir_
  std::string dir_;   ///< the working directory sim runs in
};

}  // namespace lattica
