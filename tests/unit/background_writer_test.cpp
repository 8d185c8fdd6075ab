// The run loop's output thread: jobs run in order, waits see them done, and an error surfaces
// in the submitting thread without later jobs running.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <stdexcept>
#include <thread>
#include <vector>

#include "sim/background_writer.hpp"

namespace lattica {
namespace {

TEST(BackgroundWriter, RunsJobsInOrderAndWaitsForThem) {
  BackgroundWriter writer;
  std::vector<int> order;  // touched only by jobs, read after drain()
  uint64_t first = 0;
  for (int i = 0; i < 100; ++i) {
    const uint64_t number = writer.submit([&order, i] {
      if (i == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      order.push_back(i);
    });
    if (i == 0) first = number;
  }
  writer.wait_for(first);
  writer.drain();
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
  writer.wait_for(0);  // no job: returns at once
}

TEST(BackgroundWriter, AnErrorReachesTheSubmitterAndStopsLaterJobs) {
  BackgroundWriter writer;
  std::atomic<int> ran{0};
  // The first job holds the thread until all three are queued: otherwise the failure may come
  // first and the third submit() rethrow it, as it should, outside the try below.
  std::promise<void> queued;
  std::shared_future<void> all_queued = queued.get_future().share();
  writer.submit([&ran, all_queued] {
    all_queued.wait();
    ++ran;
  });
  const uint64_t failing = writer.submit([] { throw std::runtime_error("disk full"); });
  writer.submit([&] { ++ran; });  // queued behind the failure: skipped
  queued.set_value();
  try {
    writer.wait_for(failing);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "disk full");
  }
  EXPECT_THROW(writer.drain(), std::runtime_error);
  EXPECT_THROW(writer.submit([&] { ++ran; }), std::runtime_error);
  EXPECT_EQ(ran.load(), 1);
}

TEST(BackgroundWriter, DestructionFinishesPendingJobs) {
  std::atomic<int> ran{0};
  {
    BackgroundWriter writer;
    for (int i = 0; i < 10; ++i)
      writer.submit([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        ++ran;
      });
  }
  EXPECT_EQ(ran.load(), 10);
}

}  // namespace
}  // namespace lattica
