// SceneRenderer's uploads: what changed since the last paint (new snapshot, colour mode, camera
// for the depth order, octree filter, floor) goes to the GPU, nothing else.
#include "render/SceneRenderer.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <unordered_map>

namespace octo::render {

void SceneRenderer::uploadMesh(MeshBuffers& b, const TriangleMesh& mesh) {
    if (!b.vao) {
        glGenVertexArrays(1, &b.vao);
        glGenBuffers(1, &b.vbo);
        glGenBuffers(1, &b.ebo);
        glBindVertexArray(b.vao);
        glBindBuffer(GL_ARRAY_BUFFER, b.vbo);
        glEnableVertexAttribArray(kPos);
        glVertexAttribPointer(kPos, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float), nullptr);
        glEnableVertexAttribArray(kAttr1);
        glVertexAttribPointer(kAttr1, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float),
                              reinterpret_cast<void*>(3 * sizeof(float)));
        glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, b.ebo); // recorded in the VAO
        glBindVertexArray(0);
    }
    const std::vector<Vec3f> normals = vertexNormals(mesh);
    std::vector<float> interleaved(mesh.vertices.size() * 6);
    b.boundsMin = glm::vec3(std::numeric_limits<float>::max());
    b.boundsMax = glm::vec3(-std::numeric_limits<float>::max());
    for (size_t i = 0; i < mesh.vertices.size(); ++i) {
        const glm::vec3 v(mesh.vertices[i].x(), mesh.vertices[i].y(), mesh.vertices[i].z());
        b.boundsMin = glm::min(b.boundsMin, v);
        b.boundsMax = glm::max(b.boundsMax, v);
        for (int k = 0; k < 3; ++k) {
            interleaved[6 * i + k] = mesh.vertices[i][k];
            interleaved[6 * i + 3 + k] = normals[i][k];
        }
    }
    glBindVertexArray(b.vao);
    glBindBuffer(GL_ARRAY_BUFFER, b.vbo);
    glBufferData(GL_ARRAY_BUFFER, GLsizeiptr(interleaved.size() * sizeof(float)), interleaved.data(),
                 GL_DYNAMIC_DRAW);
    glBufferData(GL_ELEMENT_ARRAY_BUFFER, GLsizeiptr(mesh.triangles.size() * sizeof(mesh.triangles[0])),
                 mesh.triangles.data(), GL_DYNAMIC_DRAW);
    glBindVertexArray(0);
    b.indexCount = int(mesh.triangles.size() * 3);
}

void SceneRenderer::uploadLines(LineBuffers& b, const std::vector<LineVertex>& v) {
    if (!b.vao) {
        glGenVertexArrays(1, &b.vao);
        glGenBuffers(1, &b.vbo);
        glBindVertexArray(b.vao);
        glBindBuffer(GL_ARRAY_BUFFER, b.vbo);
        glEnableVertexAttribArray(kPos);
        glVertexAttribPointer(kPos, 3, GL_FLOAT, GL_FALSE, sizeof(LineVertex), nullptr);
        glEnableVertexAttribArray(kAttr1);
        glVertexAttribPointer(kAttr1, 4, GL_FLOAT, GL_FALSE, sizeof(LineVertex),
                              reinterpret_cast<void*>(offsetof(LineVertex, color)));
        glBindVertexArray(0);
    }
    glBindBuffer(GL_ARRAY_BUFFER, b.vbo);
    glBufferData(GL_ARRAY_BUFFER, GLsizeiptr(v.size() * sizeof(LineVertex)), v.data(), GL_DYNAMIC_DRAW);
    b.vertexCount = int(v.size());
}

void SceneRenderer::deleteMesh(MeshBuffers& b) {
    if (!b.vao)
        return;
    glDeleteVertexArrays(1, &b.vao);
    glDeleteBuffers(1, &b.vbo);
    glDeleteBuffers(1, &b.ebo);
    b = {};
}

void SceneRenderer::deleteLines(LineBuffers& b) {
    if (!b.vao)
        return;
    glDeleteVertexArrays(1, &b.vao);
    glDeleteBuffers(1, &b.vbo);
    b = {};
}

void SceneRenderer::uploadBoundary(const FrameSnapshot& f) {
    boundaryCount_ = int(f.boundaryPositions.size());
    glBindBuffer(GL_ARRAY_BUFFER, boundaryPosVbo_);
    glBufferData(GL_ARRAY_BUFFER, GLsizeiptr(f.boundaryPositions.size() * sizeof(Vec3f)),
                 f.boundaryPositions.data(), GL_STREAM_DRAW);
    ++uploads_.boundary;
}

void SceneRenderer::uploadNewFrame(const RenderSettings& st, const FrameSnapshot& f) {
    fluidCount_ = int(f.positions.size());
    ++uploads_.positions; // sent by syncBuffers, in depth order
    if (st.showBoundary || f.boundaryPositions.empty())
        uploadBoundary(f);
    else
        boundaryCount_ = -1; // stale: uploaded lazily when the toggle goes on
    // Snapshots come every step, the surface once per frame: upload a mesh only when it is new.
    if (f.surfaceSerial == 0 || f.surfaceSerial != uploadedSurfaceSerial_) {
        uploadMesh(surfaceMesh_, f.surfaceMesh);
        ++uploads_.surfaceMesh;
        uploadedSurfaceSerial_ = f.surfaceSerial;
    }
    // Body shapes never change: upload each shared mesh once, drop the ones gone.
    std::map<const TriangleMesh*, std::pair<std::shared_ptr<const TriangleMesh>, MeshBuffers>> kept;
    for (const BodySnapshot& b : f.bodies) {
        if (!b.mesh)
            continue;
        auto it = bodyMeshes_.find(b.mesh.get());
        if (it != bodyMeshes_.end()) {
            kept[b.mesh.get()] = it->second;
            bodyMeshes_.erase(it);
        } else if (!kept.count(b.mesh.get())) {
            MeshBuffers mb;
            uploadMesh(mb, *b.mesh);
            ++uploads_.bodyMeshes;
            kept[b.mesh.get()] = {b.mesh, mb};
        }
    }
    for (auto& [key, entry] : bodyMeshes_)
        deleteMesh(entry.second);
    bodyMeshes_ = std::move(kept);
    uploadedFrame_ = &f;
}

void SceneRenderer::syncBuffers(const RenderSettings& st, const OrbitCamera& camera) {
    const FrameSnapshot* f = frame_.get();
    if (!f)
        return;
    if (uploadedFrame_ != f)
        uploadNewFrame(st, *f);
    if (st.showBoundary && boundaryCount_ < 0)
        uploadBoundary(*f);
    const int colorKey = int(st.colorMode) * 2 + (st.highlightSurface ? 1 : 0) +
                         (st.colorMode == ColorMode::Velocity ? int(st.velocityMax * 1000.0f) * 16 : 0);
    const bool colorsStale = uploadedColorsFrame_ != f || uploadedColorKey_ != colorKey;
    const glm::vec3 eye = camera.eye();
    const bool viewMoved = glm::length(eye - sortedEye_) > 1e-3f * camera.distance;
    const bool surfaceOnly = !st.showParticles && st.highlightSurface;
    if (st.drawsParticles() &&
        (colorsStale || viewMoved || sortedFrame_ != f || sortedSurfaceOnly_ != surfaceOnly)) {
        if (colorsStale) {
            particleColors(*f, st, colorScratch_);
            ++uploads_.colors;
            uploadedColorsFrame_ = f;
            uploadedColorKey_ = colorKey;
        }
        uploadSortedParticles(*f, eye, camera.forward(), surfaceOnly);
        sortedFrame_ = f;
        sortedEye_ = eye;
        sortedSurfaceOnly_ = surfaceOnly;
    }
    if (st.showOctree() && syncOctree(octreeFilter(st)))
        ++uploads_.octree;
    if (st.shading == Shading::Water && shadowFrame_ != f) {
        constexpr int kShadowRes = 48;
        floorShadow(*f, kShadowRes, shadowScratch_);
        glBindTexture(GL_TEXTURE_2D, shadowTex_);
        glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, kShadowRes, kShadowRes, 0, GL_RED, GL_FLOAT,
                     shadowScratch_.data());
        glBindTexture(GL_TEXTURE_2D, 0);
        shadowFrame_ = f;
    }
    const bool water = st.shading == Shading::Water;
    const int floorKey = (st.showGrid && !water ? 1 : 0) | (st.showBox ? 2 : 0);
    const bool domainChanged =
        (f->domain.min != uploadedDomain_.min) || (f->domain.max != uploadedDomain_.max);
    if (floorKey != uploadedFloorKey_ || domainChanged) {
        floorAndBoxLines(f->domain, floorKey & 1, st.showBox, lineScratch_);
        uploadLines(floorLines_, lineScratch_);
        ++uploads_.floor;
        uploadedFloorKey_ = floorKey;
        uploadedDomain_ = f->domain;
    }
}

void SceneRenderer::uploadSortedParticles(const FrameSnapshot& f, const glm::vec3& eye,
                                          const glm::vec3& forward, bool surfaceOnly) {
    // Front-to-back order lets the depth test reject hidden impostor fragments before shading;
    // with software GL (Xvfb/llvmpipe) overdraw of ~10 layers otherwise dominates the frame.
    const Vec3f e(eye.x, eye.y, eye.z), fw(forward.x, forward.y, forward.z);
    sortKeys_.clear();
    const bool haveFlags = f.surfaceFlag.size() == f.positions.size();
    for (size_t i = 0; i < f.positions.size(); ++i)
        if (!surfaceOnly || (haveFlags && f.surfaceFlag[i]))
            sortKeys_.push_back({(f.positions[i] - e).dot(fw), uint32_t(i)});
    const size_t n = sortKeys_.size();
    fluidCount_ = int(n);
    // Serial on purpose: TBB's threads belong to the (lower-priority) simulation, see SimulationWorker.
    std::sort(sortKeys_.begin(), sortKeys_.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    sortedPositions_.resize(n);
    sortedColors_.resize(n);
    const bool haveColors = colorScratch_.size() == f.positions.size();
    for (size_t k = 0; k < n; ++k) {
        const uint32_t i = sortKeys_[k].second;
        sortedPositions_[k] = f.positions[i];
        sortedColors_[k] = haveColors ? colorScratch_[i] : glm::vec3(0.3f, 0.6f, 1.0f);
    }
    glBindBuffer(GL_ARRAY_BUFFER, fluidPosVbo_);
    glBufferData(GL_ARRAY_BUFFER, GLsizeiptr(n * sizeof(Vec3f)), sortedPositions_.data(), GL_STREAM_DRAW);
    glBindBuffer(GL_ARRAY_BUFFER, fluidColorVbo_);
    glBufferData(GL_ARRAY_BUFFER, GLsizeiptr(n * sizeof(glm::vec3)), sortedColors_.data(), GL_STREAM_DRAW);
    ++uploads_.sorts;
}

void SceneRenderer::uploadDroplets(const FrameSnapshot& f) {
    // Spray: particles with fewer than 3 others within 2.6 r (a one-particle sheet has ~6). The
    // surface mesh leaves them out; drawn as drops they keep splashes and jets visible.
    dropletScratch_.clear();
    const float h = 2.6f * particleRadius_, h2 = h * h;
    if (h > 0.0f && !f.positions.empty()) {
        std::unordered_map<uint64_t, std::vector<uint32_t>> cells;
        auto key = [&](int x, int y, int z) {
            return (uint64_t(uint32_t(x) & 0x1fffff) << 42) | (uint64_t(uint32_t(y) & 0x1fffff) << 21) |
                   uint64_t(uint32_t(z) & 0x1fffff);
        };
        auto cellOf = [&](const Vec3f& p) {
            return std::array<int, 3>{int(std::floor(p.x() / h)), int(std::floor(p.y() / h)),
                                      int(std::floor(p.z() / h))};
        };
        for (uint32_t i = 0; i < f.positions.size(); ++i) {
            const auto c = cellOf(f.positions[i]);
            cells[key(c[0], c[1], c[2])].push_back(i);
        }
        for (uint32_t i = 0; i < f.positions.size(); ++i) {
            const Vec3f& p = f.positions[i];
            const auto c = cellOf(p);
            int near = 0;
            for (int dx = -1; dx <= 1 && near < 3; ++dx)
                for (int dy = -1; dy <= 1 && near < 3; ++dy)
                    for (int dz = -1; dz <= 1 && near < 3; ++dz) {
                        auto it = cells.find(key(c[0] + dx, c[1] + dy, c[2] + dz));
                        if (it == cells.end())
                            continue;
                        for (uint32_t j : it->second)
                            if (j != i && (f.positions[j] - p).squaredNorm() < h2 && ++near >= 3)
                                break;
                    }
            if (near < 3)
                dropletScratch_.push_back(p);
        }
    }
    glBindBuffer(GL_ARRAY_BUFFER, dropletPosVbo_);
    glBufferData(GL_ARRAY_BUFFER, GLsizeiptr(dropletScratch_.size() * sizeof(Vec3f)), dropletScratch_.data(),
                 GL_STREAM_DRAW);
    dropletCount_ = int(dropletScratch_.size());
    dropletFrame_ = &f;
}

OctreeFilter SceneRenderer::octreeFilter(const RenderSettings& st) {
    return {(st.octreeExterior ? 1 << int(NodeClass::Exterior) : 0) |
                (st.octreeInterior ? 1 << int(NodeClass::Interior) : 0) |
                (st.octreeSurface ? 1 << int(NodeClass::Surface) : 0),
            st.octreeMinDepth, st.octreeMaxDepth};
}

bool SceneRenderer::syncOctree(const OctreeFilter& filter) {
    // A new snapshot or filter edit asks once; frames between two surface rebuilds carry the same
    // nodes and start no build. The filter runs in the build, so a frame draws only shown edges.
    if (uploadedOctreeFrame_ != frame_.get() || filter != octreeFilter_) {
        octreeOutlines_.request(frame_, filter);
        uploadedOctreeFrame_ = frame_.get();
        octreeFilter_ = filter;
    }
    if (!octreeOutlines_.take(octreeEdges_, octreeDepthRange_, exactRender_))
        return false;
    glBindBuffer(GL_ARRAY_BUFFER, octreeEdgeVbo_);
    glBufferData(GL_ARRAY_BUFFER, GLsizeiptr(octreeEdges_.size() * sizeof(OctreeEdgeVertex)),
                 octreeEdges_.data(), GL_DYNAMIC_DRAW);
    octreeCount_ = int(octreeEdges_.size());
    return true;
}
} // namespace octo::render
