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
/// Octree outline colour of a node depth within the depths present [lo, hi]: coarse = blue,
/// fine = warm yellow (legend and shader use the same ramp).
glm::vec3 octreeDepthColor(int depth, int lo, int hi);
/// A distinct colour per body (by its id, so a body keeps its colour when another is deleted),
/// readable on the water and the floor.
glm::vec3 bodyColor(int index);

/// One end of an octree outline edge: position, node depth (colour) and the brightest class among
/// the shown nodes that share the edge (alpha).
struct OctreeEdgeVertex {
    glm::vec3 position;
    float depth;
    float cls;
};
/// Which octree nodes the overlay shows: bit c of classMask shows NodeClass c; depths inclusive.
struct OctreeFilter {
    int classMask = 0, minDepth = 0, maxDepth = 31;
    bool hull = true; ///< skip edges inside a block of shown cells (4 shown cells around the edge)
    bool operator==(const OctreeFilter& o) const {
        return classMask == o.classMask && minDepth == o.minDepth && maxDepth == o.maxDepth && hull == o.hull;
    }
    bool operator!=(const OctreeFilter& o) const { return !(*this == o); }
};
/// Reused between rebuilds: the edge hash table (no allocation per rebuild once warm).
struct OctreeEdgeScratch {
    struct Slot {
        uint64_t key;
        uint32_t vertex;     ///< first vertex of the edge in the output
        uint16_t owners;     ///< shown nodes sharing it
        uint16_t generation; ///< rebuild that wrote the slot: older slots count as empty (no clearing)
    };
    std::vector<Slot> table;
    uint16_t generation = 0;
};
/// GL_LINES vertices of the outlines of the nodes passing the filter, each edge once, without the
/// edges inside a block of shown cells (hull): the surface leaves form a band several cells thick,
/// whose inner lattice is ~85 % of the edges and only greys the view (and cost ~200 ms a paint on
/// llvmpipe). A shared edge takes its brightest node's class. depthRange gets the min and max
/// depth of all nodes (legend; 0, 0 when there are none).
void octreeEdges(const std::vector<OctreeNodeBox>& nodes, const OctreeFilter& filter,
                 OctreeEdgeScratch& scratch, std::vector<OctreeEdgeVertex>& out,
                 std::pair<int, int>& depthRange);
/// Column density of fluid particles over the floor (res x res cells over the domain's x-z
/// footprint, blurred, 0..1): darkens the floor under the water.
void floorShadow(const FrameSnapshot& frame, int res, std::vector<float>& out);
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
/// Floor grid under the domain (y = domain.min.y) plus, if asked, the container box.
void floorAndBoxLines(const Aabb& domain, bool grid, bool box, std::vector<LineVertex>& out);

/// Per-vertex normals: the mesh's own if present, else area-weighted face normals.
std::vector<Vec3f> vertexNormals(const TriangleMesh& mesh);

} // namespace octo::render
