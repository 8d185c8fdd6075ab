#include "sim/run/stop_signals.hpp"

#include <csignal>
#include <initializer_list>

namespace lattica {

namespace {

volatile std::sig_atomic_t stop_signal = 0;

volatile std::sig_atomic_t progress_request = 0;

extern "C" void on_stop_signal(int signal) { stop_signal = signal; }

extern "C" void on_progress_signal(int) { progress_request = 1; }

}  // namespace

void install_stop_signals() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  for (int signal : {SIGTERM, SIGUSR1}) sigaction(signal, &action, nullptr);
  struct sigaction progress {};
  progress.sa_handler = on_progress_signal;
  sigemptyset(&progress.sa_mask);
  sigaction(SIGUSR2, &progress, nullptr);
  action.sa_flags = SA_RESETHAND;  // a second Ctrl-C kills
  sigaction(SIGINT, &action, nullptr);
  // Past a file-size limit (ulimit -f) a write fails with EFBIG, reported like a full disk,
  // instead of the signal killing the run without a word.
  std::signal(SIGXFSZ, SIG_IGN);
  // A closed stderr (sim ... 2>&1 | head -1) makes messages fail with EPIPE instead of killing
  // the run.
  std::signal(SIGPIPE, SIG_IGN);
}

int received_stop_signal() { return stop_signal; }

bool progress_requested() { return progress_request != 0; }

void take_progress_request() { progress_request = 0; }

const char* signal_name(int signal) {
  switch (signal) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    case SIGUSR1:
      return "SIGUSR1";
    default:
      return "a signal";
  }
}

}  // namespace lattica
