#pragma once
// Stop signals: SIGTERM, SIGINT and SIGUSR1 ask the run loop to stop with a checkpoint;
// SIGUSR2 asks for a progress line.

namespace lattica {

/// Makes SIGTERM, SIGINT and SIGUSR1 ask the run loop to stop after the current sweeps with a
/// checkpoint (a second SIGINT kills at once); ignores SIGXFSZ and SIGPIPE, so that a file-size
/// limit or a closed stderr makes writes fail instead of killing the run. SIGUSR2 requests a
/// progress line (progress_requested) instead of killing the run.
void install_stop_signals();

/// The last stop signal received since install_stop_signals(); 0 when none.
int received_stop_signal();

/// True when SIGUSR2 came since the last take_progress_request().
bool progress_requested();

/// Clears the progress request.
void take_progress_request();

/// "SIGTERM", "SIGINT", "SIGUSR1", or "a signal" for any other.
const char* signal_name(int signal);

}  // namespace lattica
