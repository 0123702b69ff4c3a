// SceneRenderer: shaders and GL objects, the order of one paint (render()) and the plain draws
// (particles, meshes, lines, bodies). What is uploaded when is in SceneRendererBuffers.cpp; the
// water, octree, floor and sky passes in SceneRendererPasses.cpp.
#include "render/SceneRenderer.h"

#include "render/Picking.h"

#include <QFile>
#include <QOpenGLShaderProgram>
#include <algorithm>
#include <array>
#include <cmath>
#include <glm/gtc/type_ptr.hpp>

static void initShaderResource() {
    Q_INIT_RESOURCE(shaders);
}

namespace octo::render {

namespace {
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
    createBuffers();
    initialized_ = true;
    return true;
}

void SceneRenderer::createBuffers() {
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
    if (st.showBodies)
        drawBodies(view, proj);
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
            drawTranslucentMesh(view, proj, st.meshAlpha);
        }
    }
    glBindVertexArray(0);
    glUseProgram(0);
}

void SceneRenderer::drawBodies(const glm::mat4& view, const glm::mat4& proj) {
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

void SceneRenderer::drawTranslucentMesh(const glm::mat4& view, const glm::mat4& proj, float alpha) {
    // Translucent water: no depth writes, back faces first then front faces, so the
    // near surface blends over the far one without sorting triangles.
    glDepthMask(GL_FALSE);
    glEnable(GL_CULL_FACE);
    const glm::vec4 color(0.2f, 0.5f, 0.9f, alpha);
    for (GLenum cull : {GL_FRONT, GL_BACK}) {
        glCullFace(cull);
        drawMesh(surfaceMesh_, glm::mat4(1.0f), view, proj, color, 0.5f);
    }
    glDisable(GL_CULL_FACE);
    glDepthMask(GL_TRUE);
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
