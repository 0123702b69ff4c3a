#pragma once
// CPU-side vertex generation for the renderers: particle colours, line boxes for the octree,
// floor grid, container box, smooth normals. Headless and testable; the GL classes only upload.
#include "render/RenderSettings.h"
#include "sim/FrameSnapshot.h"

#include <glm/glm.hpp>
#include <vector>

namespace octo::render {

struct LineVertex {
    glm::vec3 position;
    glm::vec4 color;
};

/// Colours of the octree classes (surface / interior / exterior).
glm::vec4 nodeClassColor(NodeClass cls);
/// A perceptual blue→green→yellow ramp (viridis-like) for scalar fields, s in [0, 1].
glm::vec3 colorRamp(float s);
/// Deep blue → cyan → white, for speed (reads as calm water → foam), s in [0, 1].
glm::vec3 waterRamp(float s);
/// Colour of surface particles when the surface overlay is on.
inline glm::vec3 surfaceHighlightColor() {
    return {1.0f, 0.35f, 0.1f};
}

/// One RGB colour per fluid particle for the given mode (fields missing in the snapshot fall
/// back to the uniform colour, so a snapshot without surface data still renders).
void particleColors(const FrameSnapshot& frame, const RenderSettings& settings, std::vector<glm::vec3>& out);

/// 12 edges (24 vertices) of an axis-aligned box.
void appendBoxLines(std::vector<LineVertex>& out, const glm::vec3& lo, const glm::vec3& hi,
                    const glm::vec4& color);
/// Node boxes passing the class toggles and the depth filter.
void octreeLines(const std::vector<OctreeNodeBox>& nodes, const RenderSettings& settings,
                 std::vector<LineVertex>& out);
/// Floor grid under the domain (y = domain.min.y) plus, if asked, the container box.
void floorAndBoxLines(const Aabb& domain, bool grid, bool box, std::vector<LineVertex>& out);

/// Per-vertex normals: the mesh's own if present, else area-weighted face normals.
std::vector<Vec3f> vertexNormals(const TriangleMesh& mesh);

} // namespace octo::render
