#include "sim/background_writer.hpp"

#include <utility>

namespace lattica {

BackgroundWriter::BackgroundWriter() : thread_([this] { work(); }) {}

BackgroundWriter::~BackgroundWriter() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

uint64_t BackgroundWriter::submit(std::function<void()> job) {
  std::lock_guard<std::mutex> lock(mutex_);
  rethrow_error();
  jobs_.push_back(std::move(job));
  ++submitted_;
  changed_.notify_all();
  return submitted_;
}

void BackgroundWriter::wait_for(uint64_t number) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return finished_ >= number || error_; });
  rethrow_error();
}

void BackgroundWriter::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return finished_ == submitted_ || error_; });
  rethrow_error();
}

void BackgroundWriter::rethrow_error() {
  if (error_) std::rethrow_exception(error_);
}

void BackgroundWriter::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, nothing left
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    const bool skip = error_ != nullptr;
    lock.unlock();
    std::exception_ptr error;
    if (!skip) {
      try {
        job();
      } catch (...) {
        error = std::current_exception();
      }
    }
    job = nullptr;  // whatever it captured is released outside the lock
    lock.lock();
    if (error && !error_) error_ = error;
    ++finished_;
    changed_.notify_all();
  }
}

}  // namespace lattica
