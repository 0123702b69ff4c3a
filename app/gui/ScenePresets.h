#pragma once
// Resolution presets of the Scene dock and the parameters the user saved per particle radius:
// what MainWindow asks the worker for when it loads a scene, kept apart from the widgets.
#include "common/Parameters.h"
#include "scene/Scene.h"

#include <QString>
#include <optional>
#include <string>
#include <vector>

namespace octo::app {

/// Resolution of built-in scenes and scene files (Scene dock). The CLI always uses the file's.
enum class ResolutionPreset {
    Interactive = 0, ///< at most ~9 k particles: live on 2 cores
    Paper,           ///< the scene file's own particle radius
    High,            ///< twice the file's particle count
    Custom           ///< the radius the user typed (for the scene it was typed for)
};

/// The Scene dock's names of the presets, in the enum's order.
inline constexpr const char* kPresetLabels[] = {"Interactive (\u2264 9 k particles)",
                                                "Paper (scene file's r)", "High (2\u00D7 paper)", "Custom r"};

bool isSceneFile(const std::string& scene);

/// The scene's description (built-in name or file); throws SceneError naming the problem.
SceneDescription describeScene(const std::string& scene);

/// Particle radius of a preset for a scene (0: no opinion).
double presetRadius(ResolutionPreset preset, const SceneDescription& d);

/// What a preset sets on top of a scene's own parameters, at the radius it chose (0: the file's).
std::vector<std::string> presetOverrides(double radius);

/// QSettings key of a value the user edited. Lengths (leaf edge L ...) only make sense at the
/// resolution they were chosen for, so they are kept per particle radius.
QString savedParameterKey(const ParameterInfo& p, double radius);

/// The last particle radius in a list of name=value overrides (none: the list leaves it alone).
std::optional<double> overriddenRadius(const std::vector<std::string>& overrides);

} // namespace octo::app
