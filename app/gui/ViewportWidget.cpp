#include "ViewportWidget.h"

#include <QMouseEvent>
#include <QOpenGLContext>
#include <QOpenGLFramebufferObject>
#include <QOpenGLFunctions>
#include <QWheelEvent>
#include <algorithm>

namespace octo::app {

ViewportWidget::ViewportWidget(QWidget* parent) : QOpenGLWidget(parent) {
    setMinimumSize(320, 240);
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(true); // the Bodies dock spawns under the last hover position
    fpsClock_.start();
}

ViewportWidget::~ViewportWidget() {
    cleanupGL();
    // ~QOpenGLWidget destroys the context later; this object is no longer a ViewportWidget then.
    if (context())
        disconnect(context(), nullptr, this, nullptr);
}

void ViewportWidget::cleanupGL() {
    if (!glReady_)
        return;
    makeCurrent();
    renderer_.release();
    doneCurrent();
    glReady_ = false;
}

void ViewportWidget::initializeGL() {
    QString error;
    const auto fmt = context()->format();
    if (fmt.majorVersion() * 10 + fmt.minorVersion() < 33 && !context()->isOpenGLES()) {
        glError_ = QString("OpenGL 3.3 is needed, got %1.%2").arg(fmt.majorVersion()).arg(fmt.minorVersion());
    } else if (!renderer_.initialize(&error)) {
        glError_ = error;
    } else {
        glReady_ = true;
    }
    if (!glError_.isEmpty())
        emit glFailed(glError_);
    // The context can go away (reparenting, app exit): free GL objects while it is current.
    connect(context(), &QOpenGLContext::aboutToBeDestroyed, this, &ViewportWidget::cleanupGL,
            Qt::UniqueConnection);
}

void ViewportWidget::resizeGL(int w, int h) {
    camera_.setViewport(w, h);
}

void ViewportWidget::paintGL() {
    QElapsedTimer paintClock;
    paintClock.start();
    camera_.setViewport(width(), height());
    if (glReady_) {
        const qreal dpr = devicePixelRatioF();
        renderer_.render(camera_, settings_, int(width() * dpr), int(height() * dpr));
        if (qEnvironmentVariableIsSet("OCTO_GL_FINISH"))
            context()->functions()->glFinish(); // profiling only
    }
    lastPaintMs_ = double(paintClock.nsecsElapsed()) * 1e-6;
    ++fpsCount_;
    if (fpsClock_.elapsed() >= 1000) {
        fps_ = fpsCount_ * 1000.0 / double(fpsClock_.restart());
        fpsCount_ = 0;
    }
    emit rendered();
}

void ViewportWidget::setFrame(PublishedFramePtr frame) {
    frame_ = std::move(frame);
    if (!frame_ || !frame_->snapshot)
        return;
    const float radius = float(frame_->parameters.get("particleRadius"));
    settings_.restDensity = float(frame_->parameters.get("restDensity"));
    renderer_.setFrame(frame_->snapshot, radius);
    if (!cameraFramed_ && !frame_->snapshot->domain.empty()) {
        resetCamera();
        cameraFramed_ = true;
    }
    update();
}

void ViewportWidget::setSettings(const render::RenderSettings& settings) {
    const float restDensity = settings_.restDensity;
    settings_ = settings;
    settings_.restDensity = restDensity;
    update();
}

void ViewportWidget::resetCamera() {
    cameraTouched_ = false;
    camera_.setViewport(width(), height());
    if (frame_ && frame_->snapshot && !frame_->snapshot->domain.empty()) {
        const Aabb& d = frame_->snapshot->domain;
        camera_.fit(render::toGlm(d.min), render::toGlm(d.max));
    } else {
        camera_.fit(glm::vec3(-0.5f), glm::vec3(0.5f));
    }
    update();
}

QImage ViewportWidget::renderToImage(const QSize& size) {
    if (!glReady_ || size.isEmpty())
        return {};
    makeCurrent();
    QOpenGLFramebufferObjectFormat format;
    format.setAttachment(QOpenGLFramebufferObject::Depth);
    QOpenGLFramebufferObject fbo(size, format);
    QImage image;
    if (fbo.isValid() && fbo.bind()) {
        render::OrbitCamera cam = camera_;
        cam.setViewport(size.width(), size.height());
        // An untouched view is re-framed for the image's aspect (captures, recordings at a size
        // other than the widget's); once the user moved the camera, the image shows their view.
        if (!cameraTouched_ && frame_ && frame_->snapshot && !frame_->snapshot->domain.empty())
            cam.fit(render::toGlm(frame_->snapshot->domain.min), render::toGlm(frame_->snapshot->domain.max));
        renderer_.render(cam, settings_, size.width(), size.height());
        // flipped = true: GL rows start at the bottom, images at the top.
        image = fbo.toImage(true).convertToFormat(QImage::Format_RGB32);
        fbo.release();
    }
    doneCurrent();
    return image;
}

Vec3f ViewportWidget::spawnPoint(float size) const {
    if (!frame_ || !frame_->snapshot || frame_->snapshot->domain.empty())
        return Vec3f(0.0f, size, 0.0f);
    const FrameSnapshot& f = *frame_->snapshot;
    const Aabb& d = f.domain;
    const float margin = 0.6f * size; // keep the whole body (half-size + a little) inside the walls
    float fluidTop = d.min.y();
    for (const Vec3f& p : f.positions)
        fluidTop = std::max(fluidTop, p.y());
    const float y = std::clamp(fluidTop + 1.0f * size, d.min.y() + margin,
                               std::max(d.max.y() - margin, d.min.y() + margin));
    Vec3f at(0.5f * (d.min.x() + d.max.x()), y, 0.5f * (d.min.z() + d.max.z()));
    if (hover_) {
        // The cursor ray meets the horizontal plane at the spawn height.
        render::OrbitCamera cam = camera_;
        cam.setViewport(width(), height());
        const render::Ray ray = cam.rayThroughPixel(float(hover_->x()), float(hover_->y()));
        if (std::abs(ray.dir.y) > 1e-4f) {
            const float t = (y - ray.origin.y) / ray.dir.y;
            if (t > 0.0f) {
                const glm::vec3 hit = ray.origin + t * ray.dir;
                at.x() = hit.x;
                at.z() = hit.z;
            }
        }
    }
    for (int k : {0, 2}) {
        const float lo = d.min[k] + margin, hi = d.max[k] - margin;
        at[k] = lo <= hi ? std::clamp(at[k], lo, hi) : 0.5f * (d.min[k] + d.max[k]);
    }
    return at;
}

void ViewportWidget::mousePressEvent(QMouseEvent* e) {
    lastMouse_ = e->position().toPoint();
    activeButton_ = e->button();
    if (e->button() != Qt::LeftButton || (e->modifiers() & Qt::ShiftModifier))
        return;
    const render::Ray ray = camera_.rayThroughPixel(float(e->position().x()), float(e->position().y()));
    if (tool_ == Tool::DragBody && frame_ && frame_->snapshot) {
        if (auto hit = dragger_.begin(*frame_->snapshot, ray, camera_.forward())) {
            emit dragStarted(hit->bodyId, render::toEigen(hit->bodyPoint));
            emit dragMoved(render::toEigen(hit->worldPoint));
        }
    } else if (tool_ == Tool::Stir) {
        stirring_ = true;
        emit stirRequested(render::toEigen(ray.origin), render::toEigen(ray.dir));
    }
}

void ViewportWidget::mouseMoveEvent(QMouseEvent* e) {
    const QPoint p = e->position().toPoint();
    const QPoint d = p - lastMouse_;
    lastMouse_ = p;
    hover_ = e->position();
    const render::Ray ray = camera_.rayThroughPixel(float(p.x()), float(p.y()));
    if (dragger_.active()) {
        if (auto target = dragger_.move(ray))
            emit dragMoved(render::toEigen(*target));
        return;
    }
    if (stirring_) {
        emit stirRequested(render::toEigen(ray.origin), render::toEigen(ray.dir));
        return;
    }
    if (activeButton_ == Qt::LeftButton && !(e->modifiers() & Qt::ShiftModifier))
        camera_.orbit(float(d.x()), float(d.y()));
    else if (activeButton_ != Qt::NoButton)
        camera_.pan(float(d.x()), float(d.y()));
    else
        return;
    cameraTouched_ = true;
    update();
}

void ViewportWidget::mouseReleaseEvent(QMouseEvent*) {
    if (dragger_.active()) {
        dragger_.end();
        emit dragEnded();
    }
    stirring_ = false;
    activeButton_ = Qt::NoButton;
}

void ViewportWidget::wheelEvent(QWheelEvent* e) {
    camera_.zoom(float(e->angleDelta().y()) / 120.0f);
    cameraTouched_ = true;
    update();
}

} // namespace octo::app
