#include "ViewportWidget.h"

#include "LabelPlacement.h"
#include "ViewportSurface.h"

#include "render/Geometry.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QMouseEvent>
#include <QOpenGLContext>
#include <QOpenGLFramebufferObject>
#include <QOpenGLFunctions>
#include <QPainter>
#include <QPainterPath>
#include <QScreen>
#include <QTimer>
#include <QVBoxLayout>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <functional>

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
    // physics). The first request after a quiet spell paints at once.
    const QScreen* screen = surface_->screen();
    const double refresh = screen && screen->refreshRate() > 1.0 ? screen->refreshRate() : 60.0;
    const qint64 interval = qint64(std::ceil(1000.0 / std::min(refresh, 240.0)));
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
    const float radius = float(frame_->parameters.get("particleRadius"));
    settings_.restDensity = float(frame_->parameters.get("restDensity"));
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
    recordRenderer_->setFrame(frame->snapshot, float(frame->parameters.get("particleRadius")));
    render::RenderSettings look = settings_;
    look.restDensity = float(frame->parameters.get("restDensity"));
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

Vec3f ViewportWidget::spawnPoint(float size, const std::vector<std::pair<Vec3f, float>>& pending) const {
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
    auto clampInside = [&](Vec3f p) {
        for (int k : {0, 2}) {
            const float lo = d.min[k] + margin, hi = d.max[k] - margin;
            p[k] = lo <= hi ? std::clamp(p[k], lo, hi) : 0.5f * (d.min[k] + d.max[k]);
        }
        return p;
    };
    // The core refuses a body that starts inside another: look for a free spot near the preferred
    // one, testing bounding spheres (conservative), on rings of growing radius at the spawn height.
    const float reach = 0.87f * size; // half the diagonal of a cube of edge `size`
    auto isFree = [&](const Vec3f& p) {
        for (const BodySnapshot& b : f.bodies) {
            float radius = 0.0f;
            if (b.mesh)
                for (const Vec3f& v : b.mesh->vertices)
                    radius = std::max(radius, v.norm());
            if ((p - b.translation).norm() < reach + radius + 0.25f * size)
                return false;
        }
        for (const auto& [centre, other] : pending)
            if ((p - centre).norm() < reach + 0.87f * other + 0.25f * size)
                return false;
        return true;
    };
    const Vec3f preferred = clampInside(at);
    if (isFree(preferred))
        return preferred;
    for (int ring = 1; ring <= 8; ++ring)
        for (int k = 0; k < 8 * ring; ++k) {
            const float angle = 6.2831853f * float(k) / float(8 * ring);
            const Vec3f p = clampInside(preferred + 1.2f * size * float(ring) *
                                                        Vec3f(std::cos(angle), 0.0f, std::sin(angle)));
            if (isFree(p))
                return p;
        }
    return preferred; // no free spot: the core's error names the overlap
}

void ViewportWidget::mousePressEvent(QMouseEvent* e) {
    lastMouse_ = e->position().toPoint();
    activeButton_ = e->button();
    if (e->button() != Qt::LeftButton || (e->modifiers() & Qt::ShiftModifier))
        return;
    const render::Ray ray = camera_.rayThroughPixel(float(e->position().x()), float(e->position().y()));
    if (tool_ == Tool::DragBody && frame_ && frame_->snapshot) {
        if (auto hit = dragger_.begin(*frame_->snapshot, ray, camera_.forward())) {
            dragBodyPoint_ = hit->bodyPoint;
            dragTarget_ = hit->worldPoint;
            missClock_.invalidate();
            emit dragStarted(hit->bodyId, render::toEigen(hit->bodyPoint));
            emit dragMoved(render::toEigen(hit->worldPoint));
        } else {
            // A miss with the drag tool says so instead of orbiting the camera under the user.
            activeButton_ = Qt::NoButton;
            missClock_.start();
            QTimer::singleShot(2600, this, [this] { requestPaint(); });
        }
    } else if (tool_ == Tool::Stir) {
        stirring_ = true;
        stirPos_ = e->position();
        stirStep_ = frame_ && frame_->snapshot ? frame_->snapshot->step : 0;
        stirMoveClock_.start();
        emitStir();
    }
    requestPaint();
}

void ViewportWidget::emitStir(float scale, const Vec3f& cursorVelocity) {
    const render::Ray ray = camera_.rayThroughPixel(float(stirPos_.x()), float(stirPos_.y()));
    emit stirRequested(render::toEigen(ray.origin), render::toEigen(ray.dir), stirRadius_,
                       stirStrength_ * scale, cursorVelocity);
}

Vec3f ViewportWidget::cursorVelocity(QPointF from, QPointF to, double seconds) const {
    // Both rays meet the plane through the camera target facing the camera: the fluid the user
    // looks at moves with the cursor there (the same depth sizes the stir ring).
    const glm::vec3 normal = camera_.forward(), target = camera_.target;
    auto onPlane = [&](QPointF p) {
        const render::Ray ray = camera_.rayThroughPixel(float(p.x()), float(p.y()));
        const float denom = glm::dot(ray.dir, normal);
        const float t = std::abs(denom) > 1e-6f ? glm::dot(target - ray.origin, normal) / denom : 0.0f;
        return ray.origin + t * ray.dir;
    };
    constexpr float kMaxSpeed = 3.0f; // m/s: a fast flick splashes without blowing up the step
    glm::vec3 v = (onPlane(to) - onPlane(from)) / float(std::max(seconds, 0.005));
    if (glm::length(v) > kMaxSpeed)
        v *= kMaxSpeed / glm::length(v);
    return render::toEigen(v);
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

void ViewportWidget::leaveEvent(QEvent*) {
    hover_.reset();
    requestPaint();
}

void ViewportWidget::mouseMoveEvent(QMouseEvent* e) {
    const QPoint p = e->position().toPoint();
    const QPoint d = p - lastMouse_;
    lastMouse_ = p;
    hover_ = e->position();
    const render::Ray ray = camera_.rayThroughPixel(float(p.x()), float(p.y()));
    if (dragger_.active()) {
        if (auto target = dragger_.move(ray)) {
            dragTarget_ = *target;
            emit dragMoved(render::toEigen(*target));
        }
        requestPaint();
        return;
    }
    if (stirring_) {
        const QPointF from = stirPos_;
        const double seconds = stirMoveClock_.isValid() ? double(stirMoveClock_.restart()) * 1e-3 : 0.0;
        stirPos_ = e->position();
        emitStir(1.0f, cursorVelocity(from, stirPos_, seconds));
        requestPaint();
        return;
    }
    if (tool_ == Tool::Stir && activeButton_ == Qt::NoButton) {
        requestPaint(); // the cursor ring follows the mouse
        return;
    }
    if (activeButton_ == Qt::LeftButton && !(e->modifiers() & Qt::ShiftModifier))
        camera_.orbit(float(d.x()), float(d.y()));
    else if (activeButton_ != Qt::NoButton)
        camera_.pan(float(d.x()), float(d.y()));
    else
        return;
    cameraTouched_ = true;
    requestPaint();
}

void ViewportWidget::mouseReleaseEvent(QMouseEvent*) {
    if (dragger_.active()) {
        dragger_.end();
        emit dragEnded();
    }
    stirring_ = false;
    activeButton_ = Qt::NoButton;
    requestPaint();
}

void ViewportWidget::wheelEvent(QWheelEvent* e) {
    camera_.zoom(float(e->angleDelta().y()) / 120.0f);
    cameraTouched_ = true;
    requestPaint();
}

namespace {
QColor qcolor(const glm::vec3& c, int alpha = 255) {
    return QColor::fromRgbF(std::clamp(c.r, 0.0f, 1.0f), std::clamp(c.g, 0.0f, 1.0f),
                            std::clamp(c.b, 0.0f, 1.0f), alpha / 255.0f);
}

/// A translucent dark plate behind overlay text, so it reads on sky, water and floor alike.
void plate(QPainter& p, const QRectF& r) {
    p.setPen(Qt::NoPen);
    p.setBrush(QColor(15, 18, 24, 170));
    p.drawRoundedRect(r, 5, 5);
}

/// Screen position of a world point, none when it is behind the eye.
std::optional<QPointF> toScreen(const render::OrbitCamera& cam, const glm::vec3& world) {
    const glm::vec4 v = cam.view() * glm::vec4(world, 1.0f);
    if (v.z > -1e-4f)
        return std::nullopt;
    const glm::vec2 p = cam.project(world);
    return QPointF(p.x, p.y);
}
} // namespace

void ViewportWidget::paintOverlay(QPainter& painter, const render::OrbitCamera& cam, QSize size) const {
    painter.setRenderHint(QPainter::Antialiasing);
    QFont font = painter.font();
    font.setPixelSize(12);
    painter.setFont(font);
    const FrameSnapshot* f = frame_ ? frame_->snapshot.get() : nullptr;
    paintStatus(painter, size);
    if (f && settings_.showBodies && settings_.showBodyLabels)
        paintBodyLabels(painter, cam, size, *f);
    paintToolMarks(painter, cam, size, f);
    if (settings_.showLegend)
        paintLegend(painter, size, f, renderer_);
}

void ViewportWidget::paintStatus(QPainter& painter, QSize size) const {
    const QFont font = painter.font();
    const QFontMetrics fm(font);
    const bool playing = frame_ && frame_->playing;
    // Play state and tool, top left.
    static const char* toolNames[] = {"Orbit", "Drag body", "Stir"};
    const QString state =
        QString("%1   Tool: %2")
            .arg(playing ? QString::fromUtf8("\u25B6 Playing") : QString::fromUtf8("\u275A\u275A Paused"))
            .arg(toolNames[int(tool_)]);
    QRectF badge(8, 8, fm.horizontalAdvance(state) + 16, fm.height() + 8);
    plate(painter, badge);
    painter.setPen(playing ? QColor(170, 240, 170) : QColor(255, 210, 120));
    painter.drawText(badge, Qt::AlignCenter, state);
    // The simulation's speed against the wall clock, large, top right: "slow motion x0.31".
    if (const QString speed = speedText(); !speed.isEmpty()) {
        QFont big = font;
        big.setPixelSize(18);
        big.setBold(true);
        const QFontMetrics bm(big);
        const QRectF r(size.width() - bm.horizontalAdvance(speed) - 28, 8, bm.horizontalAdvance(speed) + 20,
                       bm.height() + 8);
        plate(painter, r);
        painter.setFont(big);
        painter.setPen(frame_->realTimeFactor < 0.95 ? QColor(255, 200, 110) : QColor(170, 240, 170));
        painter.drawText(r, Qt::AlignCenter, speed);
        painter.setFont(font);
    }
    // Tool notes go under the badge (never over it), wrapped to the view's width.
    if (const QString note = overlayNote(); !note.isEmpty()) {
        const qreal w = std::min<qreal>(fm.horizontalAdvance(note) + 20, size.width() - 16);
        const QRectF bounds = fm.boundingRect(QRect(0, 0, int(w) - 20, 1000), Qt::TextWordWrap, note);
        const QRectF r(8, badge.bottom() + 6, w, bounds.height() + 10);
        plate(painter, r);
        painter.setPen(QColor(255, 200, 110));
        painter.drawText(r.adjusted(10, 0, -10, 0), Qt::AlignVCenter | Qt::AlignLeft | Qt::TextWordWrap,
                         note);
    }
}

void ViewportWidget::paintBodyLabels(QPainter& painter, const render::OrbitCamera& cam, QSize size,
                                     const FrameSnapshot& f) const {
    // Name and density, so 0.5 rho0 and 2 rho0 can be told apart.
    const QFontMetrics fm(painter.font());
    // Each body's disc on screen: labels are kept off every body, not only their own.
    std::vector<std::optional<QPointF>> anchors(f.bodies.size());
    std::vector<qreal> clearances(f.bodies.size(), 0.0);
    std::vector<QRectF> placed; // body discs and the labels already drawn
    const glm::mat4 v = cam.view();
    const glm::vec3 right(v[0][0], v[1][0], v[2][0]);
    for (size_t i = 0; i < f.bodies.size(); ++i) {
        const BodySnapshot& b = f.bodies[i];
        anchors[i] = toScreen(cam, render::toGlm(b.translation));
        if (!anchors[i])
            continue;
        float bodyRadius = 0.0f;
        if (b.mesh)
            for (const Vec3f& p : b.mesh->vertices)
                bodyRadius = std::max(bodyRadius, p.norm());
        const auto rim = toScreen(cam, render::toGlm(b.translation) + bodyRadius * right);
        clearances[i] = std::min<qreal>(
            rim ? std::hypot(rim->x() - anchors[i]->x(), rim->y() - anchors[i]->y()) : 0.0, 200.0);
        const qreal c = 0.7 * clearances[i];
        placed.push_back(QRectF(anchors[i]->x() - c, anchors[i]->y() - c, 2 * c, 2 * c));
    }
    for (size_t i = 0; i < f.bodies.size(); ++i) {
        const BodySnapshot& b = f.bodies[i];
        const auto at = anchors[i];
        if (!at)
            continue;
        const QString text = QString("#%1 %2  %3 kg/m\u00B3 (%4 \u03C10)%5")
                                 .arg(b.id)
                                 .arg(QString::fromStdString(b.name))
                                 .arg(b.density, 0, 'f', 0)
                                 .arg(b.density / std::max(settings_.restDensity, 1e-6f), 0, 'f', 2)
                                 .arg(b.kinematic ? ", kinematic" : "");
        const qreal clearance = clearances[i];
        const PlacedLabel label = placeLabel(*at, QSizeF(fm.horizontalAdvance(text) + 24, fm.height() + 6),
                                             size, placed, std::min<qreal>(clearance, 200.0));
        const QRectF r = label.rect;
        placed.push_back(r);
        plate(painter, r);
        painter.setBrush(b.kinematic ? QColor(150, 150, 160) : qcolor(render::bodyColor(b.id)));
        painter.drawEllipse(QRectF(r.left() + 6, r.center().y() - 5, 10, 10));
        painter.setPen(b.id == draggedBody() ? QColor(255, 240, 150) : QColor(235, 238, 245));
        painter.drawText(r.adjusted(20, 0, 0, 0), Qt::AlignVCenter | Qt::AlignLeft, text);
        painter.setPen(QPen(QColor(235, 238, 245, 160), 1));
        painter.drawLine(*at, label.leaderEnd);
    }
}

void ViewportWidget::paintToolMarks(QPainter& painter, const render::OrbitCamera& cam, QSize size,
                                    const FrameSnapshot* f) const {
    // Drag: rubber band from the grabbed point to the cursor target.
    if (f && dragger_.active()) {
        for (const BodySnapshot& b : f->bodies) {
            if (b.id != dragger_.bodyId())
                continue;
            const Vec3f grab = b.rotation * render::toEigen(dragBodyPoint_) + b.translation;
            const auto from = toScreen(cam, render::toGlm(grab)), to = toScreen(cam, dragTarget_);
            if (from && to) {
                painter.setPen(QPen(QColor(255, 225, 90), 2, Qt::DashLine));
                painter.drawLine(*from, *to);
                painter.setPen(QPen(QColor(255, 225, 90), 2));
                painter.setBrush(Qt::NoBrush);
                painter.drawEllipse(*to, 7, 7);
                painter.setBrush(QColor(255, 225, 90));
                painter.drawEllipse(*from, 3.5, 3.5);
            }
        }
    }
    // Stir: the ring of fluid the cursor pushes, sized at the camera target's depth (live view only).
    const bool onScreen = size == this->size();
    if (onScreen && tool_ == Tool::Stir && (stirring_ || hover_)) {
        const QPointF c = stirring_ ? stirPos_ : *hover_;
        const float pixels =
            stirRadius_ / (cam.distance * std::tan(0.5f * cam.fovYRad)) * 0.5f * float(size.height());
        painter.setPen(QPen(QColor(255, 255, 255, 220), 1.5));
        painter.setBrush(stirring_ ? QColor(120, 200, 255, 60) : QColor(0, 0, 0, 0));
        painter.drawEllipse(c, pixels, pixels);
        painter.drawEllipse(c, 2, 2);
    }
}

QString ViewportWidget::overlayNote() const {
    if (dragger_.active() && !(frame_ && frame_->playing))
        return "Paused: the body follows the cursor once the simulation runs (Space)";
    if (tool_ == Tool::DragBody && missClock_.isValid() && missClock_.elapsed() < 2500)
        return "No body here: press on a body to drag it (tool 1 orbits)";
    return {};
}

QString ViewportWidget::speedText() const {
    if (!frame_ || !frame_->playing || frame_->realTimeFactor <= 0.0)
        return {};
    const double f = frame_->realTimeFactor;
    const QString factor = QString::fromUtf8("\u00D7") + QString::number(f, 'f',
                                                                         f < 0.095 ? 3
                                                                         : f < 10  ? 2
                                                                                   : 0);
    if (f < 0.95)
        return "slow motion " + factor;
    if (f <= 1.05)
        return "real time " + factor;
    return "fast motion " + factor;
}

namespace {
/// One block of the legend: a title and either a gradient (from, to labels) or labelled swatches.
struct LegendBlock {
    QString title;
    std::function<glm::vec3(float)> ramp;
    QString from, to;
    std::vector<std::pair<QColor, QString>> swatches;
};

/// What the particle colours mean (colour mode, surface highlight).
std::vector<LegendBlock> particleLegend(const render::RenderSettings& settings) {
    std::vector<LegendBlock> blocks;
    const bool surfaceOnly = !settings.showParticles && settings.highlightSurface;
    if (settings.showParticles) {
        switch (settings.colorMode) {
        case render::ColorMode::Uniform:
            break;
        case render::ColorMode::Velocity:
            blocks.push_back({"Particle speed |v|",
                              render::waterRamp,
                              "0",
                              QString("%1 m/s").arg(settings.velocityMax, 0, 'g', 3),
                              {}});
            break;
        case render::ColorMode::Density:
            blocks.push_back(
                {QString::fromUtf8("Density \u03C1 / \u03C10"), render::colorRamp, "0.95", "1.05", {}});
            break;
        case render::ColorMode::Lambda:
            blocks.push_back({QString::fromUtf8("\u03BBmin of Marrone's L (surface < \u03BBmin)"),
                              render::colorRamp,
                              "0",
                              "1",
                              {}});
            break;
        case render::ColorMode::SurfaceFlag:
            blocks.push_back({"Surface flag",
                              {},
                              {},
                              {},
                              {{QColor::fromRgbF(0.95, 0.85, 0.3), "surface"},
                               {QColor::fromRgbF(0.2, 0.35, 0.75), "inside"}}});
            break;
        }
    }
    if (settings.highlightSurface)
        blocks.push_back({surfaceOnly ? "Surface particles alone" : "Highlight",
                          {},
                          {},
                          {},
                          {{qcolor(render::surfaceHighlightColor()), "surface particle"}}});
    return blocks;
}

/// The octree's depths with their leaf edges, and which node classes are drawn.
LegendBlock octreeLegend(const render::RenderSettings& settings, const FrameSnapshot& f,
                         const render::SceneRenderer& renderer) {
    const auto [lo, hi] = renderer.octreeDepthRange();
    LegendBlock b{"Octree depth (leaf edge)", {}, {}, {}, {}};
    std::vector<float> edges(size_t(hi - lo + 1), 0.0f);
    int known = -1;
    for (const OctreeNodeBox& n : f.octreeNodes)
        if (n.depth >= lo && n.depth <= hi && edges[n.depth - lo] == 0.0f) {
            edges[n.depth - lo] = n.edge;
            known = n.depth;
        }
    // A depth without a stored node in this frame (showed "0 mm") still has its edge: each level
    // halves the one above.
    for (int d = lo; d <= hi && known >= 0; ++d)
        if (edges[d - lo] == 0.0f)
            edges[d - lo] = std::ldexp(edges[known - lo], known - d);
    for (int d = lo; d <= hi; ++d) {
        const bool shown = d >= settings.octreeMinDepth && d <= settings.octreeMaxDepth;
        const float edge = edges[d - lo];
        const QString length = edge >= 1.0f ? QString("%1 m").arg(edge, 0, 'g', 3)
                                            : QString("%1 mm").arg(edge * 1000.0f, 0, 'g', 3);
        b.swatches.push_back({qcolor(render::octreeDepthColor(d, lo, hi), shown ? 255 : 70),
                              QString("%1  (%2)%3").arg(d).arg(length).arg(shown ? "" : "  hidden")});
    }
    QStringList classes;
    if (settings.octreeSurface)
        classes << "surface (bright)";
    if (settings.octreeInterior)
        classes << "interior";
    if (settings.octreeExterior)
        classes << "exterior (faint)";
    b.swatches.push_back({QColor(0, 0, 0, 0), classes.join(", ")});
    return b;
}
} // namespace

void ViewportWidget::paintLegend(QPainter& painter, QSize size, const FrameSnapshot* f,
                                 const render::SceneRenderer& renderer) const {
    if (!f)
        return;
    const QFontMetrics fm(painter.font());
    std::vector<LegendBlock> blocks = particleLegend(settings_);
    if (settings_.showOctree() && !f->octreeNodes.empty())
        blocks.push_back(octreeLegend(settings_, *f, renderer));
    if (blocks.empty())
        return;
    const int line = fm.height() + 3, barW = 170;
    int height = 8, width = barW + 16;
    for (const LegendBlock& b : blocks) {
        height += line + (b.ramp ? 14 + line : int(b.swatches.size()) * line) + 6;
        width = std::max(width, fm.horizontalAdvance(b.title) + 16);
        for (const auto& [c, text] : b.swatches)
            width = std::max(width, fm.horizontalAdvance(text) + 40);
    }
    QRectF panel(8, size.height() - height - 8, width, height);
    plate(painter, panel);
    qreal y = panel.top() + 6;
    for (const LegendBlock& b : blocks) {
        painter.setPen(QColor(235, 238, 245));
        painter.drawText(QPointF(panel.left() + 8, y + fm.ascent()), b.title);
        y += line;
        if (b.ramp) {
            QLinearGradient g(panel.left() + 8, 0, panel.left() + 8 + barW, 0);
            for (int k = 0; k <= 8; ++k)
                g.setColorAt(k / 8.0, qcolor(b.ramp(k / 8.0f)));
            painter.setPen(Qt::NoPen);
            painter.setBrush(g);
            painter.drawRect(QRectF(panel.left() + 8, y, barW, 12));
            y += 14;
            painter.setPen(QColor(210, 214, 222));
            painter.drawText(QPointF(panel.left() + 8, y + fm.ascent()), b.from);
            painter.drawText(QPointF(panel.left() + 8 + barW - fm.horizontalAdvance(b.to), y + fm.ascent()),
                             b.to);
            y += line;
        }
        for (const auto& [color, text] : b.swatches) {
            painter.setPen(Qt::NoPen);
            painter.setBrush(color);
            painter.drawRect(QRectF(panel.left() + 8, y + 2, 22, fm.height() - 4));
            painter.setPen(QColor(220, 224, 232));
            painter.drawText(QPointF(panel.left() + 36, y + fm.ascent()), text);
            y += line;
        }
        y += 6;
    }
}

} // namespace octo::app
