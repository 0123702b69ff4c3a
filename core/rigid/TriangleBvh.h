#pragma once
// Bounding volume hierarchy over a triangle mesh: ray casts (body picking) and point-in-mesh
// queries by ray parity (the majority of three rays in fixed, non-axis directions, so that a
// ray grazing an edge or a vertex of the mesh does not decide alone).
#include "common/TriangleMesh.h"
#include "common/Types.h"

#include <optional>
#include <vector>

namespace octo {

struct RayHit {
    float t = 0.0f;        ///< distance along the (normalised) ray direction
    uint32_t triangle = 0; ///< index into mesh.triangles
    Vec3f point = Vec3f::Zero();
};

class TriangleBvh {
public:
    TriangleBvh() = default;
    /// Builds over `mesh` (copied: the BVH stays valid whatever happens to the argument).
    explicit TriangleBvh(const TriangleMesh& mesh);

    /// Nearest hit with t in [0, maxT]; `dir` need not be normalised (t is then in |dir| units).
    std::optional<RayHit> raycast(const Vec3f& origin, const Vec3f& dir,
                                  float maxT = std::numeric_limits<float>::max()) const;
    /// Number of crossings of the ray origin + t·dir, t > 0.
    int countCrossings(const Vec3f& origin, const Vec3f& dir) const;
    /// True when p is inside the closed mesh (ray parity, majority of three rays).
    bool contains(const Vec3f& p) const;
    /// Exact distance from p to the nearest point of the surface when it is below `limit`,
    /// else `limit` (the traversal skips boxes farther than the best distance so far).
    float distance(const Vec3f& p, float limit = std::numeric_limits<float>::max()) const;

    /// Two triangles of `mesh` (the mesh this BVH was built over) that cross: an edge of one
    /// passes through the other away from their shared vertices, so the surface intersects itself
    /// and "inside" is ill-defined. nullopt when no edge crosses a triangle. One BVH query per edge.
    struct Crossing {
        uint32_t edgeTriangle = 0, crossedTriangle = 0; ///< indices into mesh.triangles
        Vec3f point = Vec3f::Zero();                    ///< where the edge passes through
    };
    std::optional<Crossing> findSelfIntersection(const TriangleMesh& mesh) const;
    const Aabb& bounds() const { return bounds_; }
    bool empty() const { return nodes_.empty(); }

private:
    struct Node {
        Aabb box;
        uint32_t first = 0; ///< leaf: first index into order_; inner: index of the left child
        uint32_t count = 0; ///< leaf: triangle count; inner: 0 (right child = left + 1)
    };
    template <class F> void traverse(const Vec3f& origin, const Vec3f& invDir, float maxT, F&& visit) const;
    void build(uint32_t self, uint32_t first, uint32_t count, const std::vector<Vec3f>& centroids);

    std::vector<Vec3f> a_, e1_, e2_; ///< per triangle: vertex 0 and two edge vectors
    std::vector<uint32_t> order_;    ///< leaf triangle lists
    std::vector<Node> nodes_;
    Aabb bounds_;
};

/// Points of the regular lattice with the given spacing that lie inside the closed mesh.
/// The lattice is centred on the mesh's bounding box. Parallel (TBB); deterministic order.
std::vector<Vec3f> sampleInterior(const TriangleMesh& mesh, float spacing);

} // namespace octo
