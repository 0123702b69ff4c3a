#pragma once
// The `reconstruct` table of `octofluid-cli bench` (implemented in BenchReconstruct.cpp).
#include "Command.h"

namespace octo::cli {
/// Prints the four-method surface reconstruction table; returns an exit code.
int runReconstructBench(const Args& args);
} // namespace octo::cli
