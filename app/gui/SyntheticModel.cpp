#include "SyntheticModel.h"

#include <chrono>
#include <cmath>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace octo::app {

TriangleMesh boxMesh(const Vec3f& lo, const Vec3f& hi) {
    TriangleMesh m;
    for (int i = 0; i < 8; ++i)
        m.vertices.emplace_back(i & 1 ? hi.x() : lo.x(), i & 2 ? hi.y() : lo.y(), i & 4 ? hi.z() : lo.z());
    // Two triangles per face, counter-clockwise seen from outside.
    m.triangles = {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6}, {0, 1, 4}, {1, 5, 4},
                   {2, 6, 3}, {3, 6, 7}, {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}};
    return m;
}

SyntheticModel::SyntheticModel(int particlesPerAxis) : n_(particlesPerAxis) {
    if (n_ < 2 || n_ > 200)
        throw std::invalid_argument("synthetic model: particlesPerAxis must be in [2, 200]");
    bodyMesh_ = std::make_shared<const TriangleMesh>(
        boxMesh(Vec3f(-0.06f, -0.06f, -0.06f), Vec3f(0.06f, 0.06f, 0.06f)));
    reset();
}

void SyntheticModel::reset() {
    time_ = 0.0;
    steps_ = 0;
    bodyPos_ = Vec3f(0.75f, 0.25f, 0.25f);
    dragging_ = false;
    forcedProblem_.clear();
}

void SyntheticModel::step() {
    if (stepDelayMs_ > 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(stepDelayMs_));
    time_ += 0.005;
    ++steps_;
    if (dragging_)
        bodyPos_ += 0.3f * (dragTarget_ - dragOffset_ - bodyPos_); // spring toward the cursor
}

void SyntheticModel::setParameter(const std::string& name, double value) {
    params_.set(name, value);
    ++parameterEdits_;
}

void SyntheticModel::beginDrag(int bodyId, const Vec3f& bodySpacePoint) {
    if (bodyId != 0)
        throw std::invalid_argument("synthetic model: no body " + std::to_string(bodyId));
    dragging_ = true;
    dragOffset_ = bodySpacePoint;
    dragTarget_ = bodyPos_ + bodySpacePoint;
}

void SyntheticModel::setDragTarget(const Vec3f& worldPoint) {
    dragTarget_ = worldPoint;
}
void SyntheticModel::endDrag() {
    dragging_ = false;
}

FrameSnapshotPtr SyntheticModel::snapshot() const {
    auto f = std::make_shared<FrameSnapshot>();
    f->step = steps_;
    f->time = time_;
    f->domain = Aabb(Vec3f(0, 0, 0), Vec3f(1.0f, 0.6f, 0.5f));
    const float spacing = 0.5f / float(n_);
    const float lambdaMin = params_.getf(Param::lambdaMin);
    const float t = float(time_);
    for (int i = 0; i < n_; ++i)
        for (int k = 0; k < n_; ++k) {
            const float x = (float(i) + 0.5f) * spacing, z = (float(k) + 0.5f) * spacing;
            const float height = 0.3f + 0.05f * std::sin(6.0f * x - 3.0f * t);
            for (int j = 0; (float(j) + 0.5f) * spacing < height; ++j) {
                const float y = (float(j) + 0.5f) * spacing;
                f->positions.emplace_back(x, y, z);
                f->velocities.emplace_back(0.0f, 0.15f * std::cos(6.0f * x - 3.0f * t), 0.0f);
                f->densities.push_back(1000.0f + 20.0f * (y / height - 0.5f));
                f->pressures.push_back(1000.0f * 9.81f * (height - y));
                // Smallest eigenvalue ramps 0.5 → 1 within ~3 spacings of the free surface/walls.
                const float depth = std::min({height - y, x, z, 0.5f - x, 0.5f - z, y});
                const float lambda = std::min(1.0f, 0.5f + 0.5f * depth / (3.0f * spacing));
                f->lambda.push_back(lambda);
                f->surfaceFlag.push_back(lambda <= lambdaMin ? 1 : 0);
            }
        }
    // Boundary: the floor of the tank, one layer.
    for (float x = 0.0f; x <= 1.0f; x += spacing)
        for (float z = 0.0f; z <= 0.5f; z += spacing)
            f->boundaryPositions.emplace_back(x, -0.5f * spacing, z);
    // A two-level "octree": 8x5x4 cells of 0.125 m classified by the particles they hold.
    const float edge = 0.125f;
    size_t surfaceNodes = 0;
    for (int a = 0; a < 8; ++a)
        for (int b = 0; b < 5; ++b)
            for (int c = 0; c < 4; ++c) {
                OctreeNodeBox node;
                node.min = Vec3f(float(a) * edge, float(b) * edge, float(c) * edge);
                node.edge = edge;
                node.depth = 3;
                const bool inBlock = node.min.x() < 0.5f && node.min.z() < 0.5f;
                const float top = node.min.y() + edge;
                node.cls = !inBlock               ? NodeClass::Exterior
                           : top < 0.25f          ? NodeClass::Interior
                           : node.min.y() < 0.35f ? NodeClass::Surface
                                                  : NodeClass::Exterior;
                surfaceNodes += node.cls == NodeClass::Surface;
                f->octreeNodes.push_back(node);
            }
    f->surfaceMesh = boxMesh(Vec3f(0, 0, 0), Vec3f(0.5f, 0.3f, 0.5f));
    BodySnapshot body;
    body.id = 0;
    body.name = "box";
    body.translation = bodyPos_;
    body.density = 500.0f;
    body.mesh = bodyMesh_;
    f->bodies.push_back(body);
    size_t surfaceCount = 0;
    for (uint8_t s : f->surfaceFlag)
        surfaceCount += s;
    f->stats = {{"#FP", double(f->positions.size())},
                {"#SP", double(f->boundaryPositions.size())},
                {"#FPsurface", double(surfaceCount)},
                {"#Cube(octree)", double(surfaceNodes * 8)},
                {"#Triangles", double(f->surfaceMesh.triangles.size())},
                {"Tps", 1.0 + 0.2 * std::sin(time_)},
                {"Tode", 0.5},
                {"Tmc", 0.1}};
    f->status = forcedProblem_;
    return f;
}

void SyntheticModel::exportParticles(const std::string& path) const {
    std::ofstream out(path);
    if (!out)
        throw std::runtime_error("cannot write '" + path + "'");
    const auto f = snapshot();
    out << "ply\nformat ascii 1.0\nelement vertex " << f->positions.size()
        << "\nproperty float x\nproperty float y\nproperty float z\nend_header\n";
    for (const auto& p : f->positions)
        out << p.x() << ' ' << p.y() << ' ' << p.z() << '\n';
    if (!out)
        throw std::runtime_error("write failed for '" + path + "'");
}

} // namespace octo::app
