#pragma once
// Builds the octree overlay's line vertices (render/Geometry.h octreeEdges) on a background
// thread. A surface rebuild brings 60–80 k nodes; their edge table took 50–190 ms on the GUI
// thread while the simulation's threads held both cores, and a paint waited for it. Now the view
// keeps drawing the last outlines until the new ones are ready (at most one rebuild late);
// off-screen renders (captures, recordings, tests) wait for the newest outlines instead.
#include "render/Geometry.h"
#include "sim/FrameSnapshot.h"

#include <future>
#include <utility>
#include <vector>

namespace octo::render {

class OctreeOutlineBuilder {
public:
    OctreeOutlineBuilder() = default;
    ~OctreeOutlineBuilder();
    OctreeOutlineBuilder(const OctreeOutlineBuilder&) = delete;
    OctreeOutlineBuilder& operator=(const OctreeOutlineBuilder&) = delete;

    /// The outlines wanted now: `frame`'s octree nodes under `filter`. Starts a build when none
    /// runs and the newest outlines are of other nodes or another filter.
    void request(FrameSnapshotPtr frame, const OctreeFilter& filter);
    /// Swaps the newest finished outlines into `edges` (and their depth range): true when there
    /// were new ones. wait = true blocks until the outlines of the last request are there.
    bool take(std::vector<OctreeEdgeVertex>& edges, std::pair<int, int>& depthRange, bool wait);
    /// A build runs, or the last request is not built yet (the view should paint again soon).
    bool busy() const;
    /// Forgets everything built (GL objects released; the next request builds again).
    void reset();

private:
    struct Key {
        FrameSnapshotPtr frame;
        OctreeFilter filter;
    };
    /// Same nodes and filter: the same snapshot, the same surface rebuild, or equal node lists.
    static bool same(const Key& a, const Key& b);
    void startIfNeeded();

    Key wanted_, running_, shown_;
    std::future<void> task_;
    // Written by the task only while it runs.
    OctreeEdgeScratch scratch_;
    std::vector<OctreeEdgeVertex> built_;
    std::pair<int, int> builtRange_{0, 0};
};

} // namespace octo::render
