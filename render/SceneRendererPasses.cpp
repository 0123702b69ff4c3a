// SceneRenderer's screen passes: floor and sky, the water (thickness, the scene behind for
// refraction, depth pre-pass and shading) and the octree outlines.
#include "render/SceneRenderer.h"

#include "render/Picking.h"

#include <QOpenGLShaderProgram>
#include <algorithm>
#include <cmath>
#include <glm/gtc/type_ptr.hpp>

namespace octo::render {

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
} // namespace octo::render
