#include "scene/SceneLibrary.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "common/DataDirectory.h"

namespace octo {

namespace fs = std::filesystem;

std::string sceneDirectory() {
    if (const char* env = std::getenv("OCTO_SCENE_DIR"); env && *env)
        return env;
    return (fs::path(dataDirectory()) / "scenes").string();
}

std::vector<std::string> SceneLibrary::names() {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(sceneDirectory(), ec))
        if (entry.path().extension() == ".json")
            out.push_back(entry.path().stem().string());
    std::sort(out.begin(), out.end());
    return out;
}

SceneDescription SceneLibrary::load(const std::string& name) {
    const fs::path path = fs::path(sceneDirectory()) / (name + ".json");
    std::error_code ec;
    if (name.empty() || name.find('/') != std::string::npos || !fs::is_regular_file(path, ec)) {
        std::string known;
        for (const auto& n : names())
            known += (known.empty() ? "" : ", ") + n;
        throw SceneError("unknown scene '" + name + "' (built-in scenes in " + sceneDirectory() + ": " +
                         (known.empty() ? "none found" : known) + ")");
    }
    return loadSceneFile(path.string());
}

} // namespace octo
