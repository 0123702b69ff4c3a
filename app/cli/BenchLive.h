#pragma once
// The `live` table of `octofluid-cli bench` (implemented in BenchLive.cpp).
#include "Command.h"

namespace octo::cli {
/// Physics vs surface per simulated frame (issue 12); returns an exit code.
int runLiveBench(const Args& args);
} // namespace octo::cli
