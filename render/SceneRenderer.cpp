#include "render/SceneRenderer.h"

#include <QFile>
#include <QOpenGLShaderProgram>
#include <algorithm>
#include <glm/gtc/type_ptr.hpp>

static void initShaderResource() {
    Q_INIT_RESOURCE(shaders);
}

namespace octo::render {

namespace {
constexpr GLuint kPos = 0, kAttr1 = 1, kAttr2 = 2;

/// Source of a resource shader with `#define`s inserted after its #version line.
QByteArray shaderSource(const QString& path, const QStringList& defines) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    QByteArray text = file.readAll();
    QByteArray extra;
    for (const QString& d : defines)
        extra += "#define " + d.toUtf8() + "\n";
    const qsizetype eol = text.indexOf('\n');
    return eol < 0 ? text : text.insert(eol + 1, extra);
}

std::unique_ptr<QOpenGLShaderProgram> buildProgram(const QString& name, QString* error,
                                                   const QStringList& defines = {}) {
    auto program = std::make_unique<QOpenGLShaderProgram>();
    const QString vert = ":/shaders/" + name + ".vert", frag = ":/shaders/" + name + ".frag";
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
    if (!particleProgram_ || !particleDepthProgram_ || !meshProgram_ || !lineProgram_)
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
    deleteLines(octreeLines_);
    deleteLines(floorLines_);
    const unsigned buffers[] = {quadVbo_, fluidPosVbo_, fluidColorVbo_, boundaryPosVbo_};
    glDeleteBuffers(4, buffers);
    const unsigned vaos[] = {fluidVao_, boundaryVao_};
    glDeleteVertexArrays(2, vaos);
    particleProgram_.reset();
    particleDepthProgram_.reset();
    meshProgram_.reset();
    lineProgram_.reset();
    initialized_ = false;
    uploadedFrame_ = uploadedColorsFrame_ = uploadedOctreeFrame_ = sortedFrame_ = nullptr;
    uploadedColorKey_ = uploadedOctreeKey_ = uploadedFloorKey_ = -1;
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
    for (size_t i = 0; i < mesh.vertices.size(); ++i) {
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

void SceneRenderer::syncBuffers(const RenderSettings& st, const OrbitCamera& camera) {
    const FrameSnapshot* f = frame_.get();
    if (!f)
        return;
    if (uploadedFrame_ != f) {
        fluidCount_ = int(f->positions.size());
        ++uploads_.positions; // sent below, in depth order
        boundaryCount_ = int(f->boundaryPositions.size());
        if (st.showBoundary || boundaryCount_ == 0) {
            glBindBuffer(GL_ARRAY_BUFFER, boundaryPosVbo_);
            glBufferData(GL_ARRAY_BUFFER, GLsizeiptr(f->boundaryPositions.size() * sizeof(Vec3f)),
                         f->boundaryPositions.data(), GL_STREAM_DRAW);
            ++uploads_.boundary;
        } else {
            boundaryCount_ = -1; // stale: uploaded lazily when the toggle goes on
        }
        uploadMesh(surfaceMesh_, f->surfaceMesh);
        ++uploads_.surfaceMesh;
        // Body shapes never change: upload each shared mesh once, drop the ones gone.
        std::map<const TriangleMesh*, std::pair<std::shared_ptr<const TriangleMesh>, MeshBuffers>> kept;
        for (const BodySnapshot& b : f->bodies) {
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
        uploadedFrame_ = f;
    }
    if (st.showBoundary && boundaryCount_ < 0) {
        boundaryCount_ = int(f->boundaryPositions.size());
        glBindBuffer(GL_ARRAY_BUFFER, boundaryPosVbo_);
        glBufferData(GL_ARRAY_BUFFER, GLsizeiptr(f->boundaryPositions.size() * sizeof(Vec3f)),
                     f->boundaryPositions.data(), GL_STREAM_DRAW);
        ++uploads_.boundary;
    }
    const int colorKey = int(st.colorMode) * 2 + (st.highlightSurface ? 1 : 0) +
                         (st.colorMode == ColorMode::Velocity ? int(st.velocityMax * 1000.0f) * 16 : 0);
    const bool colorsStale = uploadedColorsFrame_ != f || uploadedColorKey_ != colorKey;
    const glm::vec3 eye = camera.eye();
    const bool viewMoved = glm::length(eye - sortedEye_) > 1e-3f * camera.distance;
    if (st.showParticles && (colorsStale || viewMoved || sortedFrame_ != f)) {
        if (colorsStale) {
            particleColors(*f, st, colorScratch_);
            ++uploads_.colors;
            uploadedColorsFrame_ = f;
            uploadedColorKey_ = colorKey;
        }
        uploadSortedParticles(*f, eye, camera.forward());
        sortedFrame_ = f;
        sortedEye_ = eye;
    }
    const int octreeKey = (st.octreeSurface ? 1 : 0) | (st.octreeInterior ? 2 : 0) |
                          (st.octreeExterior ? 4 : 0) | (st.octreeMinDepth << 3) | (st.octreeMaxDepth << 9);
    if (st.showOctree() && (uploadedOctreeFrame_ != f || uploadedOctreeKey_ != octreeKey)) {
        octreeLines(f->octreeNodes, st, lineScratch_);
        uploadLines(octreeLines_, lineScratch_);
        ++uploads_.octree;
        uploadedOctreeFrame_ = f;
        uploadedOctreeKey_ = octreeKey;
    }
    const int floorKey = (st.showGrid ? 1 : 0) | (st.showBox ? 2 : 0);
    const bool domainChanged =
        (f->domain.min != uploadedDomain_.min) || (f->domain.max != uploadedDomain_.max);
    if (floorKey != uploadedFloorKey_ || domainChanged) {
        floorAndBoxLines(f->domain, st.showGrid, st.showBox, lineScratch_);
        uploadLines(floorLines_, lineScratch_);
        ++uploads_.floor;
        uploadedFloorKey_ = floorKey;
        uploadedDomain_ = f->domain;
    }
}

void SceneRenderer::uploadSortedParticles(const FrameSnapshot& f, const glm::vec3& eye,
                                          const glm::vec3& forward) {
    // Front-to-back order lets the depth test reject hidden impostor fragments before shading;
    // with software GL (Xvfb/llvmpipe) overdraw of ~10 layers otherwise dominates the frame.
    const size_t n = f.positions.size();
    sortKeys_.resize(n);
    const Vec3f e(eye.x, eye.y, eye.z), fw(forward.x, forward.y, forward.z);
    for (size_t i = 0; i < n; ++i)
        sortKeys_[i] = {(f.positions[i] - e).dot(fw), uint32_t(i)};
    // Serial on purpose: TBB's threads belong to the (lower-priority) simulation, see SimulationWorker.
    std::sort(sortKeys_.begin(), sortKeys_.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    sortedPositions_.resize(n);
    sortedColors_.resize(n);
    const bool haveColors = colorScratch_.size() == n;
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

void SceneRenderer::render(const OrbitCamera& camera, const RenderSettings& st, int fbWidth, int fbHeight) {
    glViewport(0, 0, fbWidth, fbHeight);
    glClearColor(0.11f, 0.12f, 0.15f, 1.0f);
    glClearDepthf(1.0f);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    if (!initialized_ || !frame_)
        return;
    syncBuffers(st, camera);

    const glm::mat4 view = camera.view(), proj = camera.projection();
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_LESS);
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    glDisable(GL_CULL_FACE);

    drawLines(floorLines_, view, proj);
    const float radius = particleRadius_ * st.particleScale;
    exactDepth_ = st.exactSphereDepth;
    if (st.showParticles)
        drawParticles(fluidVao_, fluidCount_, view, proj, radius, nullptr);
    if (st.showBoundary && boundaryCount_ > 0) {
        const glm::vec3 grey(0.55f, 0.55f, 0.58f);
        const glm::vec3 eye = camera.eye();
        drawParticles(boundaryVao_, boundaryCount_, view, proj, radius * 0.8f, &grey,
                      st.cutawayWalls ? &eye : nullptr);
    }
    if (st.showBodies) {
        for (const BodySnapshot& b : frame_->bodies) {
            auto it = b.mesh ? bodyMeshes_.find(b.mesh.get()) : bodyMeshes_.end();
            if (it == bodyMeshes_.end())
                continue;
            const glm::vec4 color =
                b.kinematic ? glm::vec4(0.6f, 0.6f, 0.65f, 1.0f) : glm::vec4(0.85f, 0.45f, 0.2f, 1.0f);
            // Shapes without normals (boxes, low-poly meshes) read best with facet normals.
            const bool flat = b.mesh->normals.size() != b.mesh->vertices.size();
            drawMesh(it->second.second, bodyModel(b), view, proj, color, 0.0f, flat);
        }
    }
    if (st.showOctree())
        drawLines(octreeLines_, view, proj);
    if (st.showMesh && surfaceMesh_.indexCount > 0) {
        // Translucent water: no depth writes, back faces first then front faces, so the
        // near surface blends over the far one without sorting triangles.
        glDepthMask(GL_FALSE);
        glEnable(GL_CULL_FACE);
        const glm::vec4 water(0.2f, 0.5f, 0.9f, st.meshAlpha);
        for (GLenum cull : {GL_FRONT, GL_BACK}) {
            glCullFace(cull);
            drawMesh(surfaceMesh_, glm::mat4(1.0f), view, proj, water, 0.5f);
        }
        glDisable(GL_CULL_FACE);
        glDepthMask(GL_TRUE);
    }
    glBindVertexArray(0);
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
                             const glm::mat4& proj, const glm::vec4& color, float fresnel, bool flat) {
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
