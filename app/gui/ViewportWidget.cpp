// The viewport's GL life cycle, its paints and off-screen images. Mouse input, tools and the
// spawn point are in ViewportInput.cpp; the 2D marks painted over the 3D image in
// ViewportOverlay.cpp.
#include "ViewportWidget.h"

#include "ViewportSurface.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QOpenGLContext>
#include <QOpenGLFramebufferObject>
#include <QOpenGLFunctions>
#include <QPainter>
#include <QScreen>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

namespace octo::app {

ViewportWidget::ViewportWidget(QWidget* parent) : QWidget(parent) {
    setMinimumSize(320, 240);
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(true); // the Bodies dock spawns under the last hover position
    surface_ = new ViewportSurface(this);
    QWidget* container = QWidget::createWindowContainer(surface_, this);
    container->setFocusPolicy(Qt::NoFocus);
    container->setMouseTracking(true);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(container);
    fpsClock_.start();
}

ViewportWidget::~ViewportWidget() {
    cleanupGL();
    // The container deletes the surface (and its context) after this destructor.
    if (QOpenGLContext* context = surface_->context())
        disconnect(context, nullptr, this, nullptr);
}

void ViewportWidget::cleanupGL() {
    if (!glReady_)
        return;
    surface_->makeCurrent();
    renderer_.release();
    if (recordRenderer_)
        recordRenderer_->release();
    recordRenderer_.reset();
    surface_->doneCurrent();
    glReady_ = false;
}

void ViewportWidget::requestPaint() {
    // At most one paint per display refresh: new snapshots and input ask for a paint, and the
    // ones that come faster than the screen shows are merged into one (the cores stay with the
    // physics). The first request after a quiet spell paints at once. A paint that costs more than
    // a quarter of that time (software OpenGL: 13-19 ms on llvmpipe, where a GPU takes ~1 ms) also
    // waits until the paints use at most a quarter of the GUI thread's time, so a drag, which asks
    // for a paint at every mouse move, does not take a fifth of a two-core machine from the solver.
    const QScreen* screen = surface_->screen();
    const double refresh = screen && screen->refreshRate() > 1.0 ? screen->refreshRate() : 60.0;
    const double displayInterval = 1000.0 / std::min(refresh, 240.0);
    const qint64 interval = qint64(std::ceil(std::max(displayInterval, lastPaintMs_ / kMaxPaintDuty)));
    if (!paintClock_.isValid() || paintClock_.elapsed() >= interval) {
        surface_->update();
        return;
    }
    if (paintQueued_)
        return;
    paintQueued_ = true;
    QTimer::singleShot(int(interval - paintClock_.elapsed()), this, [this] {
        paintQueued_ = false;
        surface_->update();
    });
}

bool ViewportWidget::ensureGlReady() {
    QElapsedTimer waited;
    waited.start();
    while (!glReady_ && glError_.isEmpty() && isVisible() && waited.elapsed() < 10000) {
        surface_->update();
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    }
    return glReady_;
}

void ViewportWidget::initializeGL() {
    QString error;
    QOpenGLContext* context = surface_->context();
    const auto fmt = context->format();
    if (fmt.majorVersion() * 10 + fmt.minorVersion() < 33 && !context->isOpenGLES()) {
        glError_ = QString("OpenGL 3.3 is needed, got %1.%2").arg(fmt.majorVersion()).arg(fmt.minorVersion());
    } else if (!renderer_.initialize(&error)) {
        glError_ = error;
    } else {
        glReady_ = true;
    }
    if (!glError_.isEmpty())
        emit glFailed(glError_);
    // The context can go away (reparenting, app exit): free GL objects while it is current.
    connect(context, &QOpenGLContext::aboutToBeDestroyed, this, &ViewportWidget::cleanupGL,
            Qt::UniqueConnection);
}

void ViewportWidget::resizeGL(int w, int h) {
    camera_.setViewport(w, h);
}

void ViewportWidget::paintGL() {
    QElapsedTimer paintClock;
    paintClock.start();
    paintClock_.start(); // requestPaint: the next paint no earlier than one refresh from now
    camera_.setViewport(width(), height());
    if (glReady_) {
        const qreal dpr = devicePixelRatioF();
        renderer_.setHighlightedBody(draggedBody());
        renderer_.setExactThickness(!(frame_ && frame_->playing));
        renderer_.render(camera_, settings_, int(width() * dpr), int(height() * dpr));
        // Profiling switches (README, "Environment variables"), read once rather than on every paint.
        static const bool glFinishAfterScene = qEnvironmentVariableIsSet("OCTO_GL_FINISH");
        static const bool noOverlay = qEnvironmentVariableIsSet("OCTO_NO_OVERLAY");
        if (glFinishAfterScene)
            surface_->context()->functions()->glFinish();
        if (!noOverlay) { // the 2D marks cost ~a third of a paint under llvmpipe
            QPainter painter(surface_);
            paintOverlay(painter, camera_, size());
        }
    }
    lastPaintMs_ = double(paintClock.nsecsElapsed()) * 1e-6;
    if (glReady_ && settings_.showOctree() && renderer_.octreePending() && !octreeRepaintQueued_) {
        // The octree outlines are built in the background: show them as soon as they are done,
        // also while paused (no new frame would repaint).
        octreeRepaintQueued_ = true;
        QTimer::singleShot(15, this, [this] {
            octreeRepaintQueued_ = false;
            requestPaint();
        });
    }
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
    const float radius = float(frame_->parameters.get(Param::particleRadius));
    settings_.restDensity = float(frame_->parameters.get(Param::restDensity));
    renderer_.setFrame(frame_->snapshot, radius);
    const Aabb& d = frame_->snapshot->domain;
    if (!d.empty() && (d.min != framedDomain_.min || d.max != framedDomain_.max)) {
        resetCamera(); // a new scene: small ones must not be a dot, big ones not a close-up
        framedDomain_ = d;
    }
    if (stirring_ && stirMoveClock_.isValid() && stirMoveClock_.elapsed() > 100) {
        // Holding the button still keeps pushing: the core applies a stir during one step, so a frame
        // that covers several steps pushes as many times as hard (capped: a burst stays stable).
        const uint64_t step = frame_->snapshot->step;
        const float steps = step > stirStep_ ? float(std::min<uint64_t>(step - stirStep_, 8)) : 0.0f;
        stirStep_ = step;
        if (steps > 0.0f)
            emitStir(steps);
    }
    requestPaint();
}

void ViewportWidget::setSettings(const render::RenderSettings& settings) {
    const float restDensity = settings_.restDensity;
    settings_ = settings;
    settings_.restDensity = restDensity;
    requestPaint();
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
    requestPaint();
}

QImage ViewportWidget::renderToImage(const QSize& size) {
    if (size.isEmpty() || !ensureGlReady())
        return {};
    render::OrbitCamera cam = camera_;
    cam.setViewport(size.width(), size.height());
    // An untouched view is re-framed for the image's aspect (captures, recordings at a size
    // other than the widget's); once the user moved the camera, the image shows their view.
    if (!cameraTouched_ && frame_ && frame_->snapshot && !frame_->snapshot->domain.empty())
        cam.fit(render::toGlm(frame_->snapshot->domain.min), render::toGlm(frame_->snapshot->domain.max));
    return renderImage(size, cam, size);
}

QImage ViewportWidget::grabFramebuffer() {
    if (!ensureGlReady())
        return {};
    render::OrbitCamera cam = camera_;
    cam.setViewport(width(), height());
    const qreal dpr = devicePixelRatioF();
    return renderImage(QSize(int(width() * dpr), int(height() * dpr)), cam, size());
}

QImage ViewportWidget::renderImage(const QSize& pixels, render::OrbitCamera cam, QSize logical) {
    surface_->makeCurrent();
    QOpenGLFramebufferObjectFormat format;
    format.setAttachment(QOpenGLFramebufferObject::Depth);
    QOpenGLFramebufferObject fbo(pixels, format);
    QImage image;
    if (fbo.isValid() && fbo.bind()) {
        renderer_.setHighlightedBody(draggedBody());
        renderer_.setExactRender(true); // an image shows the newest octree outlines and water thickness
        renderer_.render(cam, settings_, pixels.width(), pixels.height());
        renderer_.setExactRender(false);
        // flipped = true: GL rows start at the bottom, images at the top.
        image = fbo.toImage(true).convertToFormat(QImage::Format_RGB32);
        fbo.release();
        image.setDevicePixelRatio(double(pixels.width()) / double(std::max(logical.width(), 1)));
        QPainter painter(&image); // recordings show what the viewport shows, legend included
        paintOverlay(painter, cam, logical);
    }
    surface_->doneCurrent();
    return image;
}

QImage ViewportWidget::renderRecordedFrame(const PublishedFramePtr& frame, const QSize& size, bool legend) {
    if (size.isEmpty() || !frame || !frame->snapshot || !ensureGlReady())
        return {};
    surface_->makeCurrent();
    if (!recordRenderer_) {
        recordRenderer_ = std::make_unique<render::SceneRenderer>();
        QString error;
        if (!recordRenderer_->initialize(&error)) {
            recordRenderer_.reset();
            surface_->doneCurrent();
            emit glFailed("recording renderer: " + error);
            return {};
        }
    }
    const FrameSnapshot& f = *frame->snapshot;
    recordRenderer_->setFrame(frame->snapshot, float(frame->parameters.get(Param::particleRadius)));
    render::RenderSettings look = settings_;
    look.restDensity = float(frame->parameters.get(Param::restDensity));
    render::OrbitCamera cam = camera_;
    cam.setViewport(size.width(), size.height());
    if (!cameraTouched_ && !f.domain.empty())
        cam.fit(render::toGlm(f.domain.min), render::toGlm(f.domain.max));
    QOpenGLFramebufferObjectFormat format;
    format.setAttachment(QOpenGLFramebufferObject::Depth);
    QOpenGLFramebufferObject fbo(size, format);
    QImage image;
    if (fbo.isValid() && fbo.bind()) {
        recordRenderer_->setExactRender(true);
        recordRenderer_->render(cam, look, size.width(), size.height());
        image = fbo.toImage(true).convertToFormat(QImage::Format_RGB32);
        fbo.release();
        if (legend) {
            QPainter painter(&image);
            painter.setRenderHint(QPainter::Antialiasing);
            QFont font = painter.font();
            font.setPixelSize(12);
            painter.setFont(font);
            paintLegend(painter, size, &f, *recordRenderer_);
        }
    }
    surface_->doneCurrent();
    return image;
}

void ViewportWidget::setTool(Tool tool) {
    tool_ = tool;
    const Qt::CursorShape cursor = tool == Tool::Orbit      ? Qt::ArrowCursor
                                   : tool == Tool::DragBody ? Qt::OpenHandCursor
                                                            : Qt::CrossCursor;
    setCursor(cursor);
    surface_->setCursor(cursor);
    requestPaint();
}

void ViewportWidget::setStir(float radius, float strength) {
    stirRadius_ = radius;
    stirStrength_ = strength;
    requestPaint();
}

} // namespace octo::app
