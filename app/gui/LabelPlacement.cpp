#include "LabelPlacement.h"

#include <algorithm>

namespace octo::app {

PlacedLabel placeLabel(QPointF anchor, QSizeF label, QSize view, const std::vector<QRectF>& placed,
                       qreal clearance) {
    constexpr qreal kMargin = 4.0;
    // Diagonally off the object's disc (clearance = its radius on screen), so the label never
    // covers the thing it names.
    const qreal gap = 10.0 + 0.75 * std::max<qreal>(clearance, 0.0),
                lift = 0.75 * std::max<qreal>(clearance, 0.0);
    QRectF r(QPointF(anchor.x() + gap, anchor.y() - lift - label.height()), label);
    const bool leftOfAnchor = r.right() > view.width() - kMargin && anchor.x() - gap - r.width() >= kMargin;
    if (leftOfAnchor)
        r.moveRight(anchor.x() - gap);
    if (r.top() < kMargin)
        r.moveTop(anchor.y() + lift + 6.0);
    r.moveLeft(std::clamp(r.left(), kMargin, std::max(kMargin, view.width() - kMargin - r.width())));
    auto overlaps = [&](const QRectF& q) {
        return std::any_of(placed.begin(), placed.end(), [&](const QRectF& p) { return p.intersects(q); });
    };
    const QRectF wanted = r;
    for (int k = 1; k <= 6 && overlaps(r); ++k) { // one up, one down, two up, two down, ...
        const qreal shift = ((k + 1) / 2) * (r.height() + 2.0) * (k % 2 ? -1.0 : 1.0);
        r = wanted.translated(0.0, shift);
    }
    const qreal y = r.top() > anchor.y() ? r.top() : r.bottom();
    return {r, QPointF(leftOfAnchor ? r.right() : r.left(), y)};
}

} // namespace octo::app
