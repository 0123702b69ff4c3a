#include "render/SceneRenderer.h"

#include "render/Picking.h"

#include <QFile>
#include <QOpenGLShaderProgram>
#include <algorithm>
#include <array>
#include <cmath>
#include <glm/gtc/type_ptr.hpp>
#include <limits>
#include <unordered_map>

static void initShaderResource() {
    Q_INIT_RESOURCE(shaders);
}

namespace octo::render {

namespace {
constexpr GLuint kPos = 0, kAttr1 = 1, kAttr2 = 2;

QByteArray readResource(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

/// Source of a resource shader with `#define`s (and the shared sky function when it calls
/// sky()) inserted after its #version line.
QByteArray shaderSource(const QString& path, const QStringList& defines) {
    QByteArray text = readResource(path);
    if (text.isEmpty())
        return {};
    QByteArray extra;
    for (const QString& d : defines)
        extra += "#define " + d.toUtf8() + "\n";
    if (text.contains("sky("))
        extra += readResource(":/shaders/sky.glsl");
    const qsizetype eol = text.indexOf('\n');
    return eol < 0 ? text : text.insert(eol + 1, extra);
}

/// Program from :/shaders/<vertName>.vert and <fragName>.frag (fragName empty: same name).
std::unique_ptr<QOpenGLShaderProgram> buildProgram(const QString& vertName, QString* error,
                                                   const QStringList& defines = {}, QString fragName = {}) {
    auto program = std::make_unique<QOpenGLShaderProgram>();
    const QString name = fragName.isEmpty() ? vertName : vertName + "/" + fragName;
    const QString vert = ":/shaders/" + vertName + ".vert",
                  frag = ":/shaders/" + (fragName.isEmpty() ? vertName : fragName) + ".frag";
    const QByteArray vertSource = shaderSource(vert, defines), fragSource = shaderSource(frag, defines);
    if (vertSource.isEmpty() || fragSource.isEmpty()) {
        if (error)
            *error = "shader resource missing: " + vert;
        return nullptr;
    }
    if (!program->addShaderFromSourceCode(QOpenGLShader::Vertex, vertSource) ||
        !program->addShaderFromSourceCode(QOpenGLShader::Fragment, fragSource) || !program->link()) {
        if (error)
            *error = name + " shader: " + program->log();
        return nullptr;
    }
    return program;
}

glm::mat4 bodyModel(const BodySnapshot& b) {
    glm::mat4 m(1.0f);
    for (int c = 0; c < 3; ++c)
        for (int r = 0; r < 3; ++r)
            m[c][r] = b.rotation(r, c);
    m[3] = glm::vec4(b.translation.x(), b.translation.y(), b.translation.z(), 1.0f);
    return m;
}
} // namespace

SceneRenderer::SceneRenderer() = default;
SceneRenderer::~SceneRenderer() = default; // GPU objects need a current context: owner calls release()

bool SceneRenderer::initialize(QString* error) {
    if (initialized_)
        return true;
    initShaderResource();
    initializeOpenGLFunctions();
    particleProgram_ = buildProgram("particle", error);
    particleDepthProgram_ = buildProgram("particle", error, {"EXACT_DEPTH"});
    meshProgram_ = buildProgram("mesh", error);
    lineProgram_ = buildProgram("line", error);
    octreeProgram_ = buildProgram("octree", error, {}, "line");
    skyProgram_ = buildProgram("sky", error);
    floorProgram_ = buildProgram("floor", error);
    waterProgram_ = buildProgram("mesh", error, {}, "water");
    thicknessProgram_ = buildProgram("mesh", error, {}, "thickness");
    if (!particleProgram_ || !particleDepthProgram_ || !meshProgram_ || !lineProgram_ || !octreeProgram_ ||
        !skyProgram_ || !floorProgram_ || !waterProgram_ || !thicknessProgram_)
        return false;

    const float quad[8] = {-1, -1, 1, -1, -1, 1, 1, 1};
    glGenBuffers(1, &quadVbo_);
    glBindBuffer(GL_ARRAY_BUFFER, quadVbo_);
    glBufferData(GL_ARRAY_BUFFER, sizeof(quad), quad, GL_STATIC_DRAW);

    auto makeParticleVao = [&](unsigned& vao, unsigned& posVbo, unsigned* colorVbo) {
        glGenVertexArrays(1, &vao);
        glBindVertexArray(vao);
        glBindBuffer(GL_ARRAY_BUFFER, quadVbo_);
        glEnableVertexAttribArray(kPos);
        glVertexAttribPointer(kPos, 2, GL_FLOAT, GL_FALSE, 0, nullptr);
        glGenBuffers(1, &posVbo);
        glBindBuffer(GL_ARRAY_BUFFER, posVbo);
        glEnableVertexAttribArray(kAttr1);
        glVertexAttribPointer(kAttr1, 3, GL_FLOAT, GL_FALSE, sizeof(Vec3f), nullptr);
        glVertexAttribDivisor(kAttr1, 1);
        if (colorVbo) {
            glGenBuffers(1, colorVbo);
            glBindBuffer(GL_ARRAY_BUFFER, *colorVbo);
            glEnableVertexAttribArray(kAttr2);
            glVertexAttribPointer(kAttr2, 3, GL_FLOAT, GL_FALSE, sizeof(glm::vec3), nullptr);
            glVertexAttribDivisor(kAttr2, 1);
        }
        glBindVertexArray(0);
    };
    makeParticleVao(fluidVao_, fluidPosVbo_, &fluidColorVbo_);
    makeParticleVao(boundaryVao_, boundaryPosVbo_, nullptr);
    makeParticleVao(dropletVao_, dropletPosVbo_, nullptr);

    // Octree outlines: one GL_LINES vertex buffer of the shown nodes' edges, each edge once.
    glGenVertexArrays(1, &octreeVao_);
    glBindVertexArray(octreeVao_);
    glGenBuffers(1, &octreeEdgeVbo_);
    glBindBuffer(GL_ARRAY_BUFFER, octreeEdgeVbo_);
    glEnableVertexAttribArray(kPos);
    glVertexAttribPointer(kPos, 3, GL_FLOAT, GL_FALSE, sizeof(OctreeEdgeVertex), nullptr);
    glEnableVertexAttribArray(kAttr2);
    glVertexAttribPointer(kAttr2, 2, GL_FLOAT, GL_FALSE, sizeof(OctreeEdgeVertex),
                          reinterpret_cast<void*>(offsetof(OctreeEdgeVertex, depth)));

    glGenVertexArrays(1, &emptyVao_); // the sky's full-screen triangle has no attributes
    glGenVertexArrays(1, &floorVao_);
    glBindVertexArray(floorVao_);
    glBindBuffer(GL_ARRAY_BUFFER, quadVbo_);
    glEnableVertexAttribArray(kPos);
    glVertexAttribPointer(kPos, 2, GL_FLOAT, GL_FALSE, 0, nullptr);
    glBindVertexArray(0);
    for (unsigned* tex :
         {&shadowTex_, &thicknessTex_[0], &thicknessTex_[1], &thicknessTex_[2], &behindTex_}) {
        glGenTextures(1, tex);
        glBindTexture(GL_TEXTURE_2D, *tex);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    }
    glGenFramebuffers(GLsizei(thicknessFbo_.size()), thicknessFbo_.data());
    glGenFramebuffers(1, &behindFbo_);
    glBindTexture(GL_TEXTURE_2D, 0);
    initialized_ = true;
    return true;
}

void SceneRenderer::release() {
    if (!initialized_)
        return;
    deleteMesh(surfaceMesh_);
    for (auto& [key, entry] : bodyMeshes_)
        deleteMesh(entry.second);
    bodyMeshes_.clear();
    deleteLines(floorLines_);
    const unsigned buffers[] = {quadVbo_,        fluidPosVbo_,   fluidColorVbo_,
                                boundaryPosVbo_, octreeEdgeVbo_, dropletPosVbo_};
    glDeleteBuffers(GLsizei(std::size(buffers)), buffers);
    const unsigned vaos[] = {fluidVao_, boundaryVao_, octreeVao_, emptyVao_, floorVao_, dropletVao_};
    glDeleteVertexArrays(GLsizei(std::size(vaos)), vaos);
    glDeleteTextures(1, &shadowTex_);
    glDeleteTextures(1, &behindTex_);
    glDeleteFramebuffers(1, &behindFbo_);
    behindW_ = behindH_ = 0;
    dropletFrame_ = nullptr;
    dropletCount_ = 0;
    glDeleteTextures(GLsizei(thicknessTex_.size()), thicknessTex_.data());
    glDeleteFramebuffers(GLsizei(thicknessFbo_.size()), thicknessFbo_.data());
    thicknessW_ = thicknessH_ = thicknessPaints_ = 0;
    octreeCount_ = 0;
    octreeOutlines_.reset();
    octreeEdges_.clear();
    for (auto* p : {&particleProgram_, &particleDepthProgram_, &meshProgram_, &lineProgram_, &octreeProgram_,
                    &skyProgram_, &floorProgram_, &waterProgram_, &thicknessProgram_})
        p->reset();
    initialized_ = false;
    uploadedFrame_ = uploadedColorsFrame_ = uploadedOctreeFrame_ = sortedFrame_ = shadowFrame_ = nullptr;
    uploadedSurfaceSerial_ = 0;
    uploadedColorKey_ = uploadedFloorKey_ = -1;
}

void SceneRenderer::setFrame(FrameSnapshotPtr frame, float particleRadius) {
    frame_ = std::move(frame);
    particleRadius_ = particleRadius;
}

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

void SceneRenderer::render(const OrbitCamera& camera, const RenderSettings& settings, int fbWidth,
                           int fbHeight) {
    glViewport(0, 0, fbWidth, fbHeight);
    glClearColor(0.11f, 0.12f, 0.15f, 1.0f);
    glClearDepthf(1.0f);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    if (!initialized_ || !frame_)
        return;
    RenderSettings st = settings;
    if (!st.drawsParticles() && st.showMesh && frame_->surfaceMesh.triangles.empty())
        st.showParticles = true; // no surface (reconstruction off): show the fluid as particles
    syncBuffers(st, camera);

    const glm::mat4 view = camera.view(), proj = camera.projection();
    const bool water = st.shading == Shading::Water;
    const bool waterMesh = water && st.showMesh && surfaceMesh_.indexCount > 0;
    shadowStrength_ = waterMesh ? 1.0f : 0.0f; // no water drawn, no darkened floor under it
    const unsigned thicknessTex = waterMesh ? drawThickness(camera, fbWidth, fbHeight) : 0;
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_LESS);
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    glDisable(GL_CULL_FACE);

    if (water)
        drawSkyAndFloor(camera);
    drawLines(floorLines_, view, proj);
    const float radius = particleRadius_ * st.particleScale;
    exactDepth_ = st.exactSphereDepth;
    if (st.drawsParticles())
        drawParticles(fluidVao_, fluidCount_, view, proj, radius, nullptr);
    if (st.showBoundary && boundaryCount_ > 0) {
        const glm::vec3 grey(0.55f, 0.55f, 0.58f);
        const glm::vec3 eye = camera.eye();
        drawParticles(boundaryVao_, boundaryCount_, view, proj, radius * 0.8f, &grey,
                      st.cutawayWalls ? &eye : nullptr);
    }
    if (st.showBodies) {
        for (size_t i = 0; i < frame_->bodies.size(); ++i) {
            const BodySnapshot& b = frame_->bodies[i];
            auto it = b.mesh ? bodyMeshes_.find(b.mesh.get()) : bodyMeshes_.end();
            if (it == bodyMeshes_.end())
                continue;
            // Colour by id: a body keeps its colour when another one is deleted.
            const glm::vec3 c = b.kinematic ? glm::vec3(0.6f, 0.6f, 0.65f) : bodyColor(b.id);
            // Shapes without normals (boxes, low-poly meshes) read best with facet normals.
            const bool flat = b.mesh->normals.size() != b.mesh->vertices.size();
            drawMesh(it->second.second, bodyModel(b), view, proj, glm::vec4(c, 1.0f), 0.0f, flat,
                     b.id == highlightedBody_ ? 1.0f : 0.0f);
        }
    }
    if (waterMesh && !st.drawsParticles()) {
        // Spray and droplets the surface leaves out, drawn as small water drops.
        if (dropletFrame_ != frame_.get())
            uploadDroplets(*frame_);
        const glm::vec3 drop(0.62f, 0.80f, 0.92f);
        drawParticles(dropletVao_, dropletCount_, view, proj, radius * 0.9f, &drop);
    }
    if (st.showOctree() && !waterMesh)
        drawOctree(st, camera);
    if (st.showMesh && surfaceMesh_.indexCount > 0) {
        if (waterMesh) {
            copyBehind(fbWidth, fbHeight);
            drawWater(camera, fbWidth, fbHeight, thicknessTex);
            // Outlines over the water, so the octree reads in the water look too (under it they
            // were tinted into a haze).
            if (st.showOctree())
                drawOctree(st, camera);
        } else {
            // Translucent water: no depth writes, back faces first then front faces, so the
            // near surface blends over the far one without sorting triangles.
            glDepthMask(GL_FALSE);
            glEnable(GL_CULL_FACE);
            const glm::vec4 color(0.2f, 0.5f, 0.9f, st.meshAlpha);
            for (GLenum cull : {GL_FRONT, GL_BACK}) {
                glCullFace(cull);
                drawMesh(surfaceMesh_, glm::mat4(1.0f), view, proj, color, 0.5f);
            }
            glDisable(GL_CULL_FACE);
            glDepthMask(GL_TRUE);
        }
    }
    glBindVertexArray(0);
    glUseProgram(0);
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

void SceneRenderer::copyBehind(int fbWidth, int fbHeight) {
    GLint previousFbo = 0;
    glGetIntegerv(GL_FRAMEBUFFER_BINDING, &previousFbo);
    if (fbWidth != behindW_ || fbHeight != behindH_) {
        glBindTexture(GL_TEXTURE_2D, behindTex_);
        glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, fbWidth, fbHeight, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
        glBindTexture(GL_TEXTURE_2D, 0);
        glBindFramebuffer(GL_FRAMEBUFFER, behindFbo_);
        glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, behindTex_, 0);
        behindW_ = fbWidth;
        behindH_ = fbHeight;
    }
    glBindFramebuffer(GL_READ_FRAMEBUFFER, GLuint(previousFbo));
    glBindFramebuffer(GL_DRAW_FRAMEBUFFER, behindFbo_);
    glBlitFramebuffer(0, 0, fbWidth, fbHeight, 0, 0, fbWidth, fbHeight, GL_COLOR_BUFFER_BIT, GL_NEAREST);
    glBindFramebuffer(GL_FRAMEBUFFER, GLuint(previousFbo));
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

void SceneRenderer::drawOctree(const RenderSettings& st, const OrbitCamera& camera) {
    if (octreeCount_ <= 0)
        return;
    QOpenGLShaderProgram* p = octreeProgram_.get();
    p->bind();
    glUniformMatrix4fv(p->uniformLocation("view"), 1, GL_FALSE, glm::value_ptr(camera.view()));
    glUniformMatrix4fv(p->uniformLocation("projection"), 1, GL_FALSE, glm::value_ptr(camera.projection()));
    const auto [lo, hi] = octreeDepthRange_;
    p->setUniformValue("depthLo", lo);
    glm::vec3 colors[32];
    for (int k = 0; k < 32; ++k)
        colors[k] = octreeDepthColor(lo + k, lo, hi);
    glUniform3fv(p->uniformLocation("depthColors"), 32, glm::value_ptr(colors[0]));
    p->setUniformValue("depthCue", st.octreeDepthCue);
    // Fade from the domain's near side to its far side as seen from the eye.
    float near = 0.0f, far = 1.0f;
    if (frame_ && !frame_->domain.empty()) {
        const glm::vec3 c = 0.5f * (toGlm(frame_->domain.min) + toGlm(frame_->domain.max));
        const float r = 0.5f * glm::length(toGlm(frame_->domain.max) - toGlm(frame_->domain.min));
        const float d = glm::length(camera.eye() - c);
        near = std::max(d - r, 0.0f);
        far = d + 0.6f * r;
    }
    p->setUniformValue("cueRange", near, far);
    glDepthMask(GL_FALSE); // outlines do not hide each other or the mesh drawn after them
    glBindVertexArray(octreeVao_);
    glDrawArrays(GL_LINES, 0, octreeCount_);
    glDepthMask(GL_TRUE);
}

void SceneRenderer::drawSkyAndFloor(const OrbitCamera& camera) {
    const glm::mat4 view = camera.view(), proj = camera.projection();
    if (frame_ && !frame_->domain.empty()) {
        const Aabb& d = frame_->domain;
        const glm::vec3 lo = toGlm(d.min), hi = toGlm(d.max);
        const float extent = std::max(hi.x - lo.x, hi.z - lo.z);
        const float raw = extent / 8.0f, p10 = std::pow(10.0f, std::floor(std::log10(std::max(raw, 1e-6f))));
        const float tile = raw / p10 < 2.0f ? p10 : raw / p10 < 5.0f ? 2.0f * p10 : 5.0f * p10;
        QOpenGLShaderProgram* p = floorProgram_.get();
        p->bind();
        glUniformMatrix4fv(p->uniformLocation("view"), 1, GL_FALSE, glm::value_ptr(view));
        glUniformMatrix4fv(p->uniformLocation("projection"), 1, GL_FALSE, glm::value_ptr(proj));
        // Slightly below the container's floor, so wall particles and the box edge stay on top.
        p->setUniformValue("center", 0.5f * (lo.x + hi.x), lo.y - 2e-3f * extent, 0.5f * (lo.z + hi.z));
        p->setUniformValue("extent", 2.5f * extent);
        p->setUniformValue("tile", tile);
        p->setUniformValue("domainMinXZ", lo.x, lo.z);
        p->setUniformValue("domainMaxXZ", hi.x, hi.z);
        glActiveTexture(GL_TEXTURE0);
        glBindTexture(GL_TEXTURE_2D, shadowTex_);
        p->setUniformValue("shadow", 0);
        p->setUniformValue("shadowStrength", shadowStrength_);
        glBindVertexArray(floorVao_);
        glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
    }
    // The sky after the floor, at the far plane: the depth test skips the pixels the floor covers
    // (software GL pays per shaded pixel).
    skyProgram_->bind();
    const glm::mat4 inv = glm::inverse(proj * view);
    glUniformMatrix4fv(skyProgram_->uniformLocation("inverseViewProjection"), 1, GL_FALSE,
                       glm::value_ptr(inv));
    glDepthFunc(GL_LEQUAL);
    glDepthMask(GL_FALSE);
    glBindVertexArray(emptyVao_);
    glDrawArrays(GL_TRIANGLES, 0, 3);
    glDepthMask(GL_TRUE);
    glDepthFunc(GL_LESS);
}

unsigned SceneRenderer::drawThickness(const OrbitCamera& camera, int fbWidth, int fbHeight) {
    const glm::mat4 view = camera.view(), proj = camera.projection(), model(1.0f);
    GLint previousFbo = 0;
    glGetIntegerv(GL_FRAMEBUFFER_BINDING, &previousFbo);
    // Quarter resolution (soft anyway): signed distances summed by additive blending.
    const int tw = std::max(fbWidth / 4, 1), th = std::max(fbHeight / 4, 1);
    if (tw != thicknessW_ || th != thicknessH_) {
        for (size_t k = 0; k < thicknessTex_.size(); ++k) {
            glBindTexture(GL_TEXTURE_2D, thicknessTex_[k]);
            glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, tw, th, 0, GL_RED, GL_FLOAT, nullptr);
            glBindFramebuffer(GL_FRAMEBUFFER, thicknessFbo_[k]);
            glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, thicknessTex_[k], 0);
        }
        thicknessW_ = tw;
        thicknessH_ = th;
        thicknessPaints_ = 0;
    }
    const size_t current = size_t(thicknessPaints_ % 3), previous = size_t((thicknessPaints_ + 2) % 3);
    // The previous paint's thickness only when it is of this very surface: after a scene switch
    // or a new mesh while paused (one paint), an older one tinted the new water wrongly (nearly
    // invisible, or a slab where the old water was) until the next frame.
    // While paused (exactThickness_) every paint is exact: it is the only paint of that frame.
    const bool usePrevious = !exactRender_ && thicknessPaints_ > 0 &&
                             (!exactThickness_ || (uploadedSurfaceSerial_ != 0 &&
                                                   thicknessSerial_[previous] == uploadedSurfaceSerial_));
    thicknessSerial_[current] = uploadedSurfaceSerial_;
    ++thicknessPaints_;
    glBindFramebuffer(GL_FRAMEBUFFER, thicknessFbo_[current]);
    glViewport(0, 0, tw, th);
    glClearColor(0.0f, 0.0f, 0.0f, 0.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    glDisable(GL_DEPTH_TEST);
    glEnable(GL_BLEND);
    glBlendFunc(GL_ONE, GL_ONE);
    thicknessProgram_->bind();
    glUniformMatrix4fv(thicknessProgram_->uniformLocation("model"), 1, GL_FALSE, glm::value_ptr(model));
    glUniformMatrix4fv(thicknessProgram_->uniformLocation("view"), 1, GL_FALSE, glm::value_ptr(view));
    glUniformMatrix4fv(thicknessProgram_->uniformLocation("projection"), 1, GL_FALSE, glm::value_ptr(proj));
    glBindVertexArray(surfaceMesh_.vao);
    glDrawElements(GL_TRIANGLES, surfaceMesh_.indexCount, GL_UNSIGNED_INT, nullptr);
    glBindFramebuffer(GL_FRAMEBUFFER, GLuint(previousFbo));
    glViewport(0, 0, fbWidth, fbHeight);
    // Sampling the texture just drawn makes software GL (llvmpipe) finish every queued paint
    // first: ~6 ms of a ~18 ms paint at the default scene. The live view takes the previous
    // paint's thickness instead (one paint old, soft anyway); images stay exact.
    return thicknessTex_[usePrevious ? previous : current];
}

void SceneRenderer::drawWater(const OrbitCamera& camera, int fbWidth, int fbHeight, unsigned thicknessTex) {
    const glm::mat4 view = camera.view(), proj = camera.projection(), model(1.0f);
    // 1. The thickness was drawn at the start of the paint (drawThickness).
    glBindVertexArray(surfaceMesh_.vao);
    glEnable(GL_DEPTH_TEST);
    thicknessProgram_->bind(); // its vertex stage is the mesh's: used for depth only here
    // The surface is closed and wound outwards: seen from outside its bounds (and the near plane
    // clear of them) only front faces can be nearest, so back faces are culled, half the
    // rasteriser's work in the depth and shading passes. From inside the water, no culling.
    const glm::vec3 eye = camera.eye();
    const float pad = 0.02f * camera.distance + 1e-3f; // > the near plane, 0.01 distance
    const bool outside = glm::any(glm::lessThan(eye, surfaceMesh_.boundsMin - pad)) ||
                         glm::any(glm::greaterThan(eye, surfaceMesh_.boundsMax + pad));
    if (outside) {
        glEnable(GL_CULL_FACE);
        glCullFace(GL_BACK);
    }

    // 2. Depth pre-pass, so only the nearest water layer is shaded (no triangle sorting).
    glColorMask(GL_FALSE, GL_FALSE, GL_FALSE, GL_FALSE);
    glDrawElements(GL_TRIANGLES, surfaceMesh_.indexCount, GL_UNSIGNED_INT, nullptr);
    glColorMask(GL_TRUE, GL_TRUE, GL_TRUE, GL_TRUE);

    // 3. Shading: reflection, the refracted scene behind (copyBehind) and absorption in one colour.
    QOpenGLShaderProgram* p = waterProgram_.get();
    p->bind();
    glUniformMatrix4fv(p->uniformLocation("model"), 1, GL_FALSE, glm::value_ptr(model));
    glUniformMatrix4fv(p->uniformLocation("view"), 1, GL_FALSE, glm::value_ptr(view));
    glUniformMatrix4fv(p->uniformLocation("projection"), 1, GL_FALSE, glm::value_ptr(proj));
    const glm::mat3 viewToWorld = glm::transpose(glm::mat3(view));
    glUniformMatrix3fv(p->uniformLocation("viewToWorld"), 1, GL_FALSE, glm::value_ptr(viewToWorld));
    const glm::vec3 sun = glm::normalize(glm::mat3(view) * glm::normalize(glm::vec3(0.45f, 0.75f, 0.5f)));
    p->setUniformValue("sunDirView", sun.x, sun.y, sun.z);
    // Absorption scaled to the container, so a full tank is tinted like a metre of sea water
    // would be in a pool: red goes first, blue last.
    float extent = 1.0f;
    if (frame_ && !frame_->domain.empty())
        extent = std::max((frame_->domain.max - frame_->domain.min).maxCoeff(), 1e-3f);
    const glm::vec3 sigma = glm::vec3(10.0f, 3.4f, 1.7f) / extent;
    p->setUniformValue("absorption", sigma.x, sigma.y, sigma.z);
    p->setUniformValue("deepColor", 0.03f, 0.30f, 0.46f);
    p->setUniformValue("viewportSize", float(fbWidth), float(fbHeight));
    // Thin sheets, jets and the drop's splash stay visible: never thinner than ~3 particle radii.
    p->setUniformValue("minThickness", 3.0f * particleRadius_);
    p->setUniformValue("refraction", 0.1f / extent);
    glActiveTexture(GL_TEXTURE1);
    glBindTexture(GL_TEXTURE_2D, behindTex_);
    p->setUniformValue("behind", 1);
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, thicknessTex);
    p->setUniformValue("thickness", 0);
    glDepthFunc(GL_LEQUAL);
    glDepthMask(GL_FALSE);
    glDisable(GL_BLEND);
    glDrawElements(GL_TRIANGLES, surfaceMesh_.indexCount, GL_UNSIGNED_INT, nullptr);
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    glDepthMask(GL_TRUE);
    glDepthFunc(GL_LESS);
    glDisable(GL_CULL_FACE);
    glActiveTexture(GL_TEXTURE1);
    glBindTexture(GL_TEXTURE_2D, 0);
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, 0);
}

void SceneRenderer::drawParticles(unsigned vao, int count, const glm::mat4& view, const glm::mat4& proj,
                                  float radius, const glm::vec3* uniformColor,
                                  const glm::vec3* eyeForCutaway) {
    if (count <= 0)
        return;
    QOpenGLShaderProgram* program = exactDepth_ ? particleDepthProgram_.get() : particleProgram_.get();
    program->bind();
    glUniformMatrix4fv(program->uniformLocation("view"), 1, GL_FALSE, glm::value_ptr(view));
    glUniformMatrix4fv(program->uniformLocation("projection"), 1, GL_FALSE, glm::value_ptr(proj));
    program->setUniformValue("radius", radius);
    program->setUniformValue("useUniformColor", uniformColor != nullptr);
    if (uniformColor)
        program->setUniformValue("uniformColor", uniformColor->x, uniformColor->y, uniformColor->z);
    const bool cutaway = eyeForCutaway && frame_ && !frame_->domain.empty();
    program->setUniformValue("cutaway", cutaway);
    if (cutaway) {
        const Aabb& d = frame_->domain;
        program->setUniformValue("domainMin", d.min.x(), d.min.y(), d.min.z());
        program->setUniformValue("domainMax", d.max.x(), d.max.y(), d.max.z());
        program->setUniformValue("eyeWorld", eyeForCutaway->x, eyeForCutaway->y, eyeForCutaway->z);
    }
    const glm::vec3 light = glm::normalize(glm::vec3(0.4f, 0.7f, 0.6f));
    program->setUniformValue("lightDirView", light.x, light.y, light.z);
    glBindVertexArray(vao);
    glDrawArraysInstanced(GL_TRIANGLE_STRIP, 0, 4, count);
}

void SceneRenderer::drawMesh(const MeshBuffers& mesh, const glm::mat4& model, const glm::mat4& view,
                             const glm::mat4& proj, const glm::vec4& color, float fresnel, bool flat,
                             float highlight) {
    if (mesh.indexCount <= 0)
        return;
    meshProgram_->bind();
    glUniformMatrix4fv(meshProgram_->uniformLocation("model"), 1, GL_FALSE, glm::value_ptr(model));
    glUniformMatrix4fv(meshProgram_->uniformLocation("view"), 1, GL_FALSE, glm::value_ptr(view));
    glUniformMatrix4fv(meshProgram_->uniformLocation("projection"), 1, GL_FALSE, glm::value_ptr(proj));
    meshProgram_->setUniformValue("baseColor", color.r, color.g, color.b, color.a);
    const glm::vec3 light = glm::normalize(glm::vec3(0.4f, 0.7f, 0.6f));
    meshProgram_->setUniformValue("lightDirView", light.x, light.y, light.z);
    meshProgram_->setUniformValue("fresnelStrength", fresnel);
    meshProgram_->setUniformValue("flatShading", flat);
    meshProgram_->setUniformValue("highlight", highlight);
    glBindVertexArray(mesh.vao);
    glDrawElements(GL_TRIANGLES, mesh.indexCount, GL_UNSIGNED_INT, nullptr);
}

void SceneRenderer::drawLines(const LineBuffers& lines, const glm::mat4& view, const glm::mat4& proj) {
    if (lines.vertexCount <= 0)
        return;
    lineProgram_->bind();
    glUniformMatrix4fv(lineProgram_->uniformLocation("view"), 1, GL_FALSE, glm::value_ptr(view));
    glUniformMatrix4fv(lineProgram_->uniformLocation("projection"), 1, GL_FALSE, glm::value_ptr(proj));
    glBindVertexArray(lines.vao);
    glDrawArrays(GL_LINES, 0, lines.vertexCount);
}

} // namespace octo::render
