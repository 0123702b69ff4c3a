// ViewportWidget's 2D marks over the 3D image: play state and tool badge, speed, tool notes,
// body labels, drag rubber band, stir ring and the colour legend (also drawn into recordings).
#include "ViewportWidget.h"

#include "LabelPlacement.h"

#include "render/Geometry.h"

#include <QPainter>
#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

namespace octo::app {

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
