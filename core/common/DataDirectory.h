#pragma once
// Where octofluid finds its data (scene files, meshes) at run time: never a compiled-in source
// path, so an installed program and a lone clone's build behave the same.
#include <string>

namespace octo {

/// The folder holding `scenes/` and `meshes/`: $OCTO_DATA_DIR when set and non-empty, else
/// <folder of the running executable>/OCTO_DATA_RELATIVE (default "../share/octofluid"), the
/// GNUInstallDirs layout bin/ + share/octofluid/ that the build tree stages too (build/app/ and
/// build/tests/ sit beside build/share/octofluid/). Not checked for existence: callers' errors
/// name the folder they looked in.
std::string dataDirectory();

/// Folder of the running executable ("" when it cannot be determined).
std::string executableDirectory();

} // namespace octo
