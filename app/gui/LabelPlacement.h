#pragma once
// Where a label tied to a point of the view goes: beside the point, inside the view, off the labels
// already placed. The viewport's body labels use it (name and density next to each body).
#include <QRectF>
#include <QSize>

#include <vector>

namespace octo::app {

struct PlacedLabel {
    QRectF rect;
    QPointF leaderEnd; ///< the label's corner the leader line from the anchor goes to
};

/// A label of `label` size for the point `anchor`: up and to the right of it; to its left near the
/// view's right edge, below it near the top edge; moved up or down off the rectangles in `placed`.
/// `clearance`: the object's radius on screen; the label starts beyond it.
PlacedLabel placeLabel(QPointF anchor, QSizeF label, QSize view, const std::vector<QRectF>& placed,
                       qreal clearance = 0.0);

} // namespace octo::app
