#pragma once
// Built-in scenes: JSON files resources/scenes/<name>.json, installed (and staged in the build
// tree) as share/octofluid/scenes/<name>.json.
#include "scene/Scene.h"

#include <string>
#include <vector>

namespace octo {

/// Folder with the built-in scene files: $OCTO_SCENE_DIR if set, else dataDirectory()/scenes
/// (installed: <prefix>/share/octofluid/scenes; build tree: build/share/octofluid/scenes).
std::string sceneDirectory();

class SceneLibrary {
public:
    /// Names of the built-in scenes ("dam-break", "tank", "drop", ...), sorted.
    static std::vector<std::string> names();
    /// Loads a built-in scene; throws SceneError listing the known names when unknown.
    static SceneDescription load(const std::string& name);
};

} // namespace octo
