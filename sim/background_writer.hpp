#pragma once
// A thread that runs output jobs (HDF5 writes) one at a time in the order they were submitted,
// so the run loop keeps the device busy while a snapshot or a batch of measurements is written.
// HDF5 is not thread-safe: while jobs may be pending only jobs touch the output file, and the
// submitting thread calls drain() before it uses the file itself.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace lattica {

class BackgroundWriter {
 public:
  BackgroundWriter();
  /// Runs the jobs still pending (their errors are lost), then stops the thread.
  ~BackgroundWriter();
  BackgroundWriter(const BackgroundWriter&) = delete;
  BackgroundWriter& operator=(const BackgroundWriter&) = delete;

  /// Queues a job and returns its number (1, 2, ...). Rethrows the error of a failed job; the
  /// jobs after a failed one are skipped.
  uint64_t submit(std::function<void()> job);
  /// Waits until job `number` (0: none) has run; rethrows a job's error.
  void wait_for(uint64_t number);
  /// Waits until every job submitted has run; rethrows a job's error.
  void drain();

 private:
  void work();
  void rethrow_error();  ///< with mutex_ held

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> jobs_;
  uint64_t submitted_ = 0;
  uint64_t finished_ = 0;
  std::exception_ptr error_;
  bool stopping_ = false;
  std::thread thread_;  ///< last: starts once the members above exist
};

}  // namespace lattica
