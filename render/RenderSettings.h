#pragma once
// What the viewport draws: overlays, colour mode, octree filter. Plain data shared by the
// renderer, the Overlays dock and the scripted capture (--overlay).
#include <string>
#include <vector>

namespace octo::render {

enum class ColorMode { Uniform = 0, Velocity, Density, Lambda, SurfaceFlag };

inline const std::vector<std::string>& colorModeNames() {
    static const std::vector<std::string> names{"uniform", "velocity", "density", "lambda", "surface flag"};
    return names;
}

struct RenderSettings {
    bool showParticles = true;
    bool highlightSurface = false; ///< surface particles drawn in a distinct colour
    bool showMesh = true;
    bool showBodies = true;
    bool showBoundary = false;
    bool cutawayWalls = true; ///< hide wall particles between the eye and the fluid
    bool octreeSurface = false;
    bool octreeInterior = false;
    bool octreeExterior = false;
    int octreeMinDepth = 0; ///< depth filter for the node boxes (inclusive)
    int octreeMaxDepth = 31;
    bool showGrid = true;
    bool showBox = true;
    ColorMode colorMode = ColorMode::Velocity;
    float particleScale = 1.0f;    ///< impostor radius / particle radius
    bool exactSphereDepth = false; ///< per-pixel sphere depth (slower: no early depth test)
    float meshAlpha = 0.6f;
    float velocityMax = 3.0f; ///< m/s at the top of the colour map
    float restDensity = 1000.0f;

    bool showOctree() const { return octreeSurface || octreeInterior || octreeExterior; }
};

/// Applies a comma list as used by `--overlay`: named overlays on, the other main overlays off.
/// Names: particles, surface-particles, mesh, octree (all classes), octree-surface,
/// octree-interior, octree-exterior, bodies, boundary, grid. Returns the unknown names.
std::vector<std::string> applyOverlayList(RenderSettings& settings, const std::string& commaList);

} // namespace octo::render
