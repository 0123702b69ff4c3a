#pragma once
// What the viewport draws: overlays, colour mode, octree filter. Plain data shared by the
// renderer, the Overlays dock and the scripted capture (--overlay).
#include <string>
#include <vector>

namespace octo::render {

enum class ColorMode { Uniform = 0, Velocity, Density, Lambda, SurfaceFlag };
/// Water: Fresnel sky reflection, Beer–Lambert transmission, sky and shaded floor (the default).
/// Diagnostic: the flat-lit translucent mesh on a dark background (reads geometry, not looks).
enum class Shading { Water = 0, Diagnostic };

inline const std::vector<std::string>& colorModeNames() {
    static const std::vector<std::string> names{"uniform", "velocity", "density", "lambda", "surface flag"};
    return names;
}

struct RenderSettings {
    /// Off by default: the water surface is the default look (particles are drawn anyway when
    /// there is no surface mesh, e.g. with "Reconstruct surface" off).
    bool showParticles = false;
    /// Surface particles in a distinct colour; with showParticles off, the surface particles alone
    /// (Shao et al. 2016, Fig. 5b).
    bool highlightSurface = false;
    bool showMesh = true;
    bool showBodies = true;
    bool showBoundary = false;
    bool cutawayWalls = true; ///< hide wall particles between the eye and the fluid
    bool octreeSurface = false;
    bool octreeInterior = false;
    bool octreeExterior = false;
    int octreeMinDepth = 0; ///< depth filter for the node boxes (inclusive)
    int octreeMaxDepth = 31;
    bool octreeDepthCue = true; ///< far node outlines fade (Shao et al. 2016, Fig. 5c)
    bool showGrid = true;
    bool showBox = true;
    ColorMode colorMode = ColorMode::Velocity;
    float particleScale = 1.0f;    ///< impostor radius / particle radius
    bool exactSphereDepth = false; ///< per-pixel sphere depth (slower: no early depth test)
    float meshAlpha = 0.6f;
    float velocityMax = 3.0f; ///< m/s at the top of the colour map
    float restDensity = 1000.0f;
    Shading shading = Shading::Water;
    bool showLegend = true;     ///< colour scale of the active colour mode / octree depths
    bool showBodyLabels = true; ///< name and density next to each body

    bool showOctree() const { return octreeSurface || octreeInterior || octreeExterior; }
    /// Particles are drawn at all: all of them, or the surface ones alone.
    bool drawsParticles() const { return showParticles || highlightSurface; }
};

/// Applies a comma list as used by `--overlay`: named overlays on, the other main overlays off.
/// Names: particles, surface-particles, mesh, octree (all classes), octree-surface,
/// octree-interior, octree-exterior, bodies, boundary, grid, diagnostic (flat shading).
/// "surface-particles" alone shows the surface particles without the others. Returns the unknown names.
std::vector<std::string> applyOverlayList(RenderSettings& settings, const std::string& commaList);

} // namespace octo::render
