#pragma once
// The `realtime` table of `octofluid-cli bench` (implemented in BenchRealtime.cpp).
#include "Command.h"

namespace octo::cli {
/// Simulated seconds per wall second of every built-in scene, per preset and pressure solver.
int runRealtimeBench(const Args& args);
} // namespace octo::cli
