#include "render/OctreeOutlineBuilder.h"

#include <chrono>

namespace octo::render {

OctreeOutlineBuilder::~OctreeOutlineBuilder() {
    if (task_.valid())
        task_.wait(); // the task writes into this object
}

bool OctreeOutlineBuilder::same(const Key& a, const Key& b) {
    if (!a.frame || !b.frame || a.filter != b.filter)
        return false;
    if (a.frame == b.frame)
        return true;
    const FrameSnapshot &fa = *a.frame, &fb = *b.frame;
    // Snapshots between two surface rebuilds carry the rebuild's serial and the same nodes.
    if (fa.surfaceSerial != 0 && fa.surfaceSerial == fb.surfaceSerial)
        return true;
    const std::vector<OctreeNodeBox>&na = fa.octreeNodes, &nb = fb.octreeNodes;
    if (na.size() != nb.size())
        return false;
    for (size_t i = 0; i < na.size(); ++i)
        if (na[i].min != nb[i].min || na[i].edge != nb[i].edge || na[i].depth != nb[i].depth ||
            na[i].cls != nb[i].cls)
            return false;
    return true;
}

void OctreeOutlineBuilder::request(FrameSnapshotPtr frame, const OctreeFilter& filter) {
    wanted_ = {std::move(frame), filter};
    startIfNeeded();
}

void OctreeOutlineBuilder::startIfNeeded() {
    if (task_.valid() || !wanted_.frame || same(wanted_, shown_))
        return;
    running_ = wanted_;
    // The snapshot is immutable and kept alive by running_; scratch_ and built_ belong to the
    // task until take() collects it.
    task_ = std::async(std::launch::async, [this, frame = running_.frame, filter = running_.filter] {
        octreeEdges(frame->octreeNodes, filter, scratch_, built_, builtRange_);
    });
}

bool OctreeOutlineBuilder::take(std::vector<OctreeEdgeVertex>& edges, std::pair<int, int>& depthRange,
                                bool wait) {
    bool got = false;
    for (;;) {
        if (task_.valid()) {
            if (!wait && task_.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
                break;
            task_.get();
            edges.swap(built_); // the old vector's capacity is reused by the next build
            depthRange = builtRange_;
            shown_ = std::move(running_);
            running_ = {};
            got = true;
        }
        startIfNeeded();
        if (!wait || !task_.valid())
            break;
    }
    return got;
}

bool OctreeOutlineBuilder::busy() const {
    return task_.valid() || (wanted_.frame && !same(wanted_, shown_));
}

void OctreeOutlineBuilder::reset() {
    if (task_.valid())
        task_.wait();
    task_ = {};
    wanted_ = running_ = shown_ = {};
}

} // namespace octo::render
