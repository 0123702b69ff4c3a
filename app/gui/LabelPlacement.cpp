#include "LabelPlacement.h"

#include <algorithm>

namespace octo::app {

PlacedLabel placeLabel(QPointF anchor, QSizeF label, QSize view, const std::vector<QRectF>& placed) {
    constexpr qreal kMargin = 4.0, kGap = 10.0;
    QRectF r(QPointF(anchor.x() + kGap, anchor.y() - label.height()), label);
    const bool leftOfAnchor = r.right() > view.width() - kMargin && anchor.x() - kGap - r.width() >= kMargin;
    if (leftOfAnchor)
        r.moveRight(anchor.x() - kGap);
    if (r.top() < kMargin)
        r.moveTop(anchor.y() + 6.0);
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
