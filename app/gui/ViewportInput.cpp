// ViewportWidget's input: camera orbit, pan and zoom, the drag and stir tools, and where the
// Bodies dock spawns a body (under the last cursor position).
#include "ViewportWidget.h"

#include "ViewportSurface.h"

#include <QMouseEvent>
#include <QTimer>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

namespace octo::app {

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

} // namespace octo::app
