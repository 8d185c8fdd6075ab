// Output files under stress (issue 17): two runs on one output, a resume while the disk is
// still full, a full disk at any moment of a run, resuming a stopped sweep, recovering a file cut
// short, a closed stderr, and refusals that must leave every file as it was.

#include <gtest/gtest.h>
#include <hdf5.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "tests/cli/cli_support.hpp"

namespace lattica {
namespace {

using namespace cli;

class OutputSafety : public Cli {
 protected:
  /// The names of the files in the working directory (and its subfolders, as "dir/name").
  std::set<std::string> files() const {
    std::set<std::string> names;
    for (const auto& entry : fs::recursive_directory_iterator(dir_))
      names.insert(fs::relative(entry.path(), dir_).string());
    return names;
  }

  /// Runs `sh_command` (with sim's path as $0 and `args` after it) under /bin/sh.
  RunResult shell(const std::string& sh_command, const std::vector<std::string>& args) const {
    std::vector<std::string> all{"-c", sh_command, sim_exe()};
    all.insert(all.end(), args.begin(), args.end());
    return finish(start(all, "/bin/sh"));
  }
};

/// About 4 s on one core (long enough for the checks below while it runs): checkpoints every
/// 500 sweeps, snapshots, the structure factor, and output blocks that do not line up with the
/// checkpoints.
const char* const kIsing =
    "[lattice]\ndims = [48, 48]\n[model]\nkind = \"ising\"\nbeta = 0.44\n"
    "[run]\nthermalization = 1000\nmeasurements = 9000\nmeasure_every = 2\nseed = 9\n"
    "checkpoint_every = 500\n"
    "[measure]\nstructure_factor = true\n"
    "[output]\nsnapshot_every = 700\nflush_every = 230\n";

// Issue 17.2: a second run on the same output (a job submitted twice, with --force, --resume or
// --recover) is refused with exit 2 naming the live run, and touches neither its output nor its
// checkpoint; the first run finishes as if alone. A run killed with -9 leaves its lock file, which
// does not stop the resume.
TEST_F(OutputSafety, SecondRunLeavesALiveRunsOutputAlone) {
  std::ofstream(path("in.toml")) << kIsing;
  ASSERT_EQ(sim({path("in.toml"), "--backend", "cpu", "-o", "reference.h5", "-q"}).exit_code, 0);
  const pid_t first = start({path("in.toml"), "--backend", "cpu", "-o", "out.h5", "-q"});
  wait_for_file(path("out.h5.checkpoint"));
  EXPECT_TRUE(fs::exists(path("out.h5.lock")));
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {path("in.toml"), "--backend", "cpu", "-o", "out.h5", "--force"},
           {path("in.toml"), "--backend", "cpu", "-o", "out.h5", "--resume"},
           {"--recover", "out.h5"}}) {
    const RunResult second = sim(args);
    EXPECT_EQ(second.exit_code, 2) << args.back() << "\n" << second;
    EXPECT_NE(second.err.find("in use by process " + std::to_string(first)), std::string::npos)
        << second;
    EXPECT_TRUE(fs::exists(path("out.h5.checkpoint"))) << args.back();
  }
  int status = 0;
  ASSERT_EQ(waitpid(first, &status, WNOHANG), 0) << "the first run ended during the test";
  const RunResult finished = finish(first);
  ASSERT_EQ(finished.exit_code, 0) << finished;
  expect_same_datasets(path("reference.h5"), path("out.h5"));
  EXPECT_FALSE(fs::exists(path("out.h5.lock")));

  fs::remove(path("out.h5.checkpoint"));  // the finished run's: wait for the new one
  const pid_t killed = start({path("in.toml"), "--backend", "cpu", "-o", "out.h5", "--force"});
  wait_for_file(path("out.h5.checkpoint"));
  kill(killed, SIGKILL);
  ASSERT_EQ(finish(killed).exit_code, -SIGKILL);
  EXPECT_TRUE(fs::exists(path("out.h5.lock")));  // the dead run's, with its lock dropped
  const RunResult resumed = sim({path("in.toml"), "--backend", "cpu", "-o", "out.h5", "--resume"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed;
  expect_same_datasets(path("reference.h5"), path("out.h5"));
  EXPECT_FALSE(fs::exists(path("out.h5.lock")));
}

// Issue 17.3: a resume while the disk is still full (here a file-size limit, ulimit -f, below
// the size the output has reached) fails with exit 3 and leaves the output and the checkpoint
// byte for byte as they were; once there is room, --recover and --resume work as if that
// resume had never run.
TEST_F(OutputSafety, FailedResumeLeavesTheFilesAsTheyWere) {
  std::ofstream(path("in.toml")) << kIsing;
  ASSERT_EQ(sim({path("in.toml"), "--backend", "cpu", "-o", "reference.h5", "-q"}).exit_code, 0);
  const std::vector<std::string> run{path("in.toml"), "--backend", "cpu", "-o", "out.h5", "-q"};
  const RunResult full = shell("ulimit -f 600 && exec \"$0\" \"$@\"", run);
  ASSERT_EQ(full.exit_code, 3) << full;
  const std::string output = read_bytes(path("out.h5"));
  const std::string checkpoint = read_bytes(path("out.h5.checkpoint"));
  ASSERT_FALSE(checkpoint.empty());
  const std::set<std::string> before = files();

  std::vector<std::string> resume = run;
  resume.push_back("--resume");
  const RunResult still_full = shell("ulimit -f 400 && exec \"$0\" \"$@\"", resume);
  EXPECT_EQ(still_full.exit_code, 3) << still_full;
  EXPECT_TRUE(read_bytes(path("out.h5")) == output) << "the failed resume changed the output";
  EXPECT_TRUE(read_bytes(path("out.h5.checkpoint")) == checkpoint) << "and the checkpoint";
  EXPECT_EQ(files(), before);  // no working copy, lock or temporary file left

  fs::copy_file(path("out.h5"), path("recovered.h5"));
  const RunResult recovered = sim({"--recover", path("recovered.h5")});
  ASSERT_EQ(recovered.exit_code, 0) << recovered;
  const RunResult resumed = sim(resume);
  ASSERT_EQ(resumed.exit_code, 0) << resumed;
  expect_same_datasets(path("reference.h5"), path("out.h5"));
}

// A disk that fills up at any moment of a run (here a file-size limit from 100 to 380 KiB, in
// steps that land in every kind of write: measurements, snapshots, tables, checkpoints' flushes)
// stops it with exit 3 and leaves an output that the checkpoint continues to the uninterrupted
// run's file. Before sim reserved room ahead of HDF5's writes, several limits between 180 and
// 260 KiB left metadata pointing past the file's end: the resume failed (exit 3, "addr
// overflow"), and a failure in another place let a resume write over live data.
TEST_F(OutputSafety, AFullDiskAtAnyMomentLeavesAResumableRun) {
  {  // sim reserves room with fallocate; where the filesystem cannot, it runs as before
    const int fd = ::open(path("probe").c_str(), O_CREAT | O_WRONLY, 0644);
    const bool reserves = fd >= 0 && ::fallocate(fd, 0, 0, 4096) == 0;
    if (fd >= 0) ::close(fd);
    fs::remove(path("probe"));
    if (!reserves) GTEST_SKIP() << "this filesystem cannot reserve space (fallocate)";
  }
  std::ofstream(path("in.toml")) << kIsing;
  ASSERT_EQ(sim({path("in.toml"), "--backend", "cpu", "-o", "reference.h5", "-q"}).exit_code, 0);
  const std::vector<std::string> run{path("in.toml"), "--backend", "cpu", "-o", "out.h5", "-q"};
  std::vector<std::string> resume = run;
  resume.push_back("--resume");
  for (int blocks = 200; blocks <= 760; blocks += 40) {  // of 512 bytes, as /bin/sh counts
    SCOPED_TRACE("ulimit -f " + std::to_string(blocks));
    for (const char* name : {"out.h5", "out.h5.checkpoint"}) fs::remove(path(name));
    const RunResult full =
        shell("ulimit -f " + std::to_string(blocks) + " && exec \"$0\" \"$@\"", run);
    ASSERT_EQ(full.exit_code, 3) << full;
    const RunResult resumed = sim(resume);
    ASSERT_EQ(resumed.exit_code, 0) << resumed;
    expect_same_datasets(path("reference.h5"), path("out.h5"));
  }
}

/// A sweep of three points of about 1 s each.
const char* const kSweep =
    "[lattice]\ndims = [32, 32]\n[model]\nkind = \"ising\"\nbeta = [0.40, 0.42, 0.44]\n"
    "[run]\nthermalization = 500\nmeasurements = 4000\nseed = 5\n"
    "[measure]\nstructure_factor = true\nstructure_factor_every = 10\n"
    "[output]\npath = \"sweep.h5\"\nsnapshot_every = 1000\n";

// Issue 17.4: a sweep stopped by a signal continues with --resume: the finished point is
// skipped (with a line saying so), the stopped one resumed, the one never started run from the
// start; every file equals the uninterrupted sweep's.
TEST_F(OutputSafety, StoppedSweepResumesItsUnfinishedPoints) {
  std::ofstream(path("sweep.toml")) << kSweep;
  fs::create_directory(path("ref"));
  ASSERT_EQ(sim({path("sweep.toml"), "--backend", "cpu", "-o", "ref/sweep.h5", "-q"}).exit_code, 0);
  const pid_t pid = start({path("sweep.toml"), "--backend", "cpu"});
  wait_for_file(path("sweep.1.h5"));
  kill(pid, SIGTERM);
  const RunResult stopped = finish(pid);
  ASSERT_EQ(stopped.exit_code, 75) << stopped;
  EXPECT_NE(stopped.err.find("continue with --resume"), std::string::npos) << stopped;
  EXPECT_FALSE(fs::exists(path("sweep.0.h5.checkpoint")));
  EXPECT_TRUE(fs::exists(path("sweep.1.h5.checkpoint")));
  EXPECT_FALSE(fs::exists(path("sweep.2.h5")));

  const RunResult resumed = sim({path("sweep.toml"), "--backend", "cpu", "--resume"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed;
  EXPECT_NE(resumed.err.find("sweep point 0: sweep.0.h5 is finished; skipped"), std::string::npos)
      << resumed;
  EXPECT_NE(resumed.err.find("sweep point 1, resuming at sweep"), std::string::npos) << resumed;
  for (int i = 0; i < 3; ++i) {
    const std::string name = "sweep." + std::to_string(i) + ".h5";
    expect_same_datasets(path("ref/" + name), path(name));
  }
  // Everything is finished now: a second --resume has nothing to do and changes nothing.
  const std::string last = read_bytes(path("sweep.2.h5"));
  const RunResult again = sim({path("sweep.toml"), "--backend", "cpu", "--resume"});
  ASSERT_EQ(again.exit_code, 0) << again;
  EXPECT_NE(again.err.find("sweep point 2: sweep.2.h5 is finished; skipped"), std::string::npos)
      << again;
  EXPECT_TRUE(read_bytes(path("sweep.2.h5")) == last);
}

// Issue 17.4: --recover on a file cut short by a half-finished copy keeps only what the file
// holds: every dataset it leaves is the original's or, for a series, the original's first rows,
// as many as its group's committed_length; no padding passes for data. Or it refuses and leaves
// the file as it was.
TEST_F(OutputSafety, RecoverKeepsOnlyWhatIsInTheFile) {
  std::ofstream(path("in.toml")) << kIsing;
  ASSERT_EQ(sim({path("in.toml"), "--backend", "cpu", "-o", "whole.h5", "-q"}).exit_code, 0);
  const std::string whole = read_bytes(path("whole.h5"));
  const std::map<std::string, std::string> original = dataset_bytes(path("whole.h5"));
  int recovered = 0;
  for (int percent : {10, 20, 30, 40, 50, 60, 70, 80, 90, 98, 99}) {
    SCOPED_TRACE("the first " + std::to_string(percent) + " % of the file");
    const std::string cut = whole.substr(0, whole.size() * percent / 100);
    std::ofstream(path("cut.h5"), std::ios::binary) << cut;
    const RunResult r = sim({"--recover", path("cut.h5")});
    if (r.exit_code != 0) {
      EXPECT_TRUE(read_bytes(path("cut.h5")) == cut) << "a refused --recover changed the file";
      continue;
    }
    try {
      for (const auto& [name, bytes] : dataset_bytes(path("cut.h5"))) {
        ASSERT_TRUE(original.count(name)) << name;
        EXPECT_TRUE(original.at(name).compare(0, bytes.size(), bytes) == 0)
            << name << " holds what the original does not\n"
            << r;
      }
      const H5Id file = open_file(path("cut.h5"));
      const int64_t rows =
          int64_attribute(open_group(file.get(), "observables").get(), "committed_length");
      EXPECT_EQ(read_int64s(file.get(), "/observables/sweep").size(), static_cast<size_t>(rows));
      if (rows > 0) ++recovered;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "--recover said it repaired the file, but it cannot be read: " << e.what()
                    << "\n"
                    << r;
    }
  }
  EXPECT_GT(recovered, 0) << "no cut file was recovered at all";
}

// Issue 17.4: an empty file or one that is not HDF5 is refused, untouched.
TEST_F(OutputSafety, RecoverRefusesWhatIsNotAnOutputFile) {
  std::ofstream(path("empty.h5")).close();
  const RunResult empty = sim({"--recover", path("empty.h5")});
  EXPECT_EQ(empty.exit_code, 2) << empty;
  EXPECT_EQ(fs::file_size(path("empty.h5")), 0u);
  std::ofstream(path("text.h5")) << "not an HDF5 file\n";
  const RunResult text = sim({"--recover", path("text.h5")});
  EXPECT_EQ(text.exit_code, 2) << text;
  EXPECT_NE(text.err.find("not an HDF5 file"), std::string::npos) << text;
  EXPECT_EQ(read_bytes(path("text.h5")), "not an HDF5 file\n");
  EXPECT_EQ(files(), (std::set<std::string>{"empty.h5", "text.h5"}));
}

// Issue 17.4: with stderr closed (sim ... 2>&1 | head -1) writing a message fails with EPIPE
// instead of killing the run with SIGPIPE: the sweep finishes and writes every point.
TEST_F(OutputSafety, ClosedStderrDoesNotStopTheRun) {
  int pipe_ends[2];
  ASSERT_EQ(pipe(pipe_ends), 0);
  close(pipe_ends[0]);  // nobody reads: the first write to stderr breaks the pipe
  std::vector<std::string> args = sweep_run({});
  args.insert(args.begin(), sim_exe());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (dup2(pipe_ends[1], STDERR_FILENO) < 0 || chdir(dir_.c_str()) != 0) _exit(126);
    signal(SIGPIPE, SIG_DFL);  // as a shell starts it, whatever the test runner ignores
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(pipe_ends[1]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  for (int i = 0; i < 3; ++i) {
    const std::string name = "sweep." + std::to_string(i) + ".h5";
    ASSERT_TRUE(fs::exists(path(name))) << name;
    const H5Id file = open_file(path(name));
    EXPECT_EQ(read_doubles(file.get(), "/observables/energy").size(), 20u) << name;
  }
}

// Issue 17.4: refusals (exit 2) write nothing: no sweep index before a refused --resume or
// parallel.grid, and no resumed point before a later point's resume is refused.
TEST_F(OutputSafety, RefusedRunsTouchNothing) {
  {
    std::ofstream(path("sweep.1.h5")) << "keep";  // neither finished nor resumable
    const RunResult r = sim(sweep_run({"--resume"}));
    EXPECT_EQ(r.exit_code, 2) << r;
    EXPECT_NE(r.err.find("sweep.1.h5"), std::string::npos) << r;
    EXPECT_EQ(files(), std::set<std::string>{"sweep.1.h5"});
    EXPECT_EQ(read_bytes(path("sweep.1.h5")), "keep");
    fs::remove(path("sweep.1.h5"));
  }
  {
    const RunResult r = sim(sweep_run({"--set", "parallel.grid=[2,1]"}));
    EXPECT_EQ(r.exit_code, 2) << r;
    EXPECT_NE(r.err.find("parallel.grid"), std::string::npos) << r;
    EXPECT_TRUE(files().empty());
  }
  {
    ASSERT_EQ(sim(sweep_run({"--set", "run.checkpoint_every=10", "-q"})).exit_code, 0);
    std::string damaged = read_bytes(path("sweep.1.h5.checkpoint"));
    damaged[damaged.size() / 2] ^= 0x5A;
    std::ofstream(path("sweep.1.h5.checkpoint"), std::ios::binary) << damaged;
    std::map<std::string, std::string> before;
    for (const std::string& name : files()) before[name] = read_bytes(path(name));
    // Point 0 could be extended, point 1 cannot: nothing runs.
    const RunResult r = sim(sweep_run(
        {"--resume", "--set", "run.checkpoint_every=10", "--set", "run.measurements=30"}));
    EXPECT_EQ(r.exit_code, 2) << r;
    EXPECT_NE(r.err.find("checksum"), std::string::npos) << r;
    std::map<std::string, std::string> after;
    for (const std::string& name : files()) after[name] = read_bytes(path(name));
    EXPECT_TRUE(after == before) << "a refused resume changed the files";
    const H5Id file = open_file(path("sweep.0.h5"));
    EXPECT_EQ(H5Aexists(file.get(), "resumed"), 0);
  }
}

}  // namespace
}  // namespace lattica
