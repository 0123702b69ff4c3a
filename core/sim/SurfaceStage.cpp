#include "sim/SurfaceStage.h"

#include <atomic>
#include <chrono>

#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace octo {

namespace {
// Surface serials are unique in the process, so a renderer that outlives a simulation (scene
// reload) never mistakes a new scene's first surface for the one it uploaded.
std::atomic<uint64_t> lastSerial{0};

/// Scheduling priority (nice) of the calling thread; per thread on Linux, 0 elsewhere.
int threadNice() {
#ifdef __linux__
    return getpriority(PRIO_PROCESS, id_t(syscall(SYS_gettid)));
#else
    return 0;
#endif
}
void setThreadNice(int nice) {
#ifdef __linux__
    setpriority(PRIO_PROCESS, id_t(syscall(SYS_gettid)), nice); // best effort
#else
    (void)nice;
#endif
}
} // namespace

SurfaceStage::SurfaceStage() = default;

SurfaceStage::~SurfaceStage() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
        queued_.reset();
    }
    cv_.notify_all();
    if (thread_.joinable())
        thread_.join();
}

FrameSurfacePtr SurfaceStage::run(SurfaceJob& job) {
    std::lock_guard build(buildMutex_);
    auto out = std::make_shared<FrameSurface>();
    out->time = job.time;
    out->step = job.step;
    out->generation = job.generation;
    out->copyMs = job.copyMs;
    out->baselinesCounted = job.settings.countBaselines;
    const auto t0 = std::chrono::steady_clock::now();
    try {
        reconstructor_.reconstruct(job.positions, job.densities, job.settings, job.velocities);
        out->result = reconstructor_.result();
    } catch (const std::exception& e) {
        // A surface that cannot be built (e.g. a baseline grid too large) must not stop the fluid.
        out->error = std::string("surface reconstruction failed: ") + e.what();
    }
    out->buildMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const SurfaceResult& r = out->result;
    if (!r.surfaceFlag.empty() && r.surfaceFlag.size() == job.ids.size()) {
        uint32_t maxId = 0;
        for (uint32_t id : job.ids)
            maxId = std::max(maxId, id);
        out->flagById.assign(size_t(maxId) + 1, 0);
        out->lambdaById.assign(size_t(maxId) + 1, 1.0f);
        for (size_t k = 0; k < job.ids.size(); ++k) {
            out->flagById[job.ids[k]] = r.surfaceFlag[k];
            out->lambdaById[job.ids[k]] = r.lambda[k];
        }
    }
    {
        std::lock_guard lock(mutex_);
        ++finished_;
        out->serial = ++lastSerial; // not yet visible to other threads
        latest_ = out;
    }
    cv_.notify_all();
    return out;
}

FrameSurfacePtr SurfaceStage::build(SurfaceJob job) {
    return run(job);
}

void SurfaceStage::submit(SurfaceJob job) {
    {
        std::lock_guard lock(mutex_);
        queued_ = std::move(job);
        if (!thread_.joinable()) {
            // The stage runs at the priority of the physics thread that feeds it (the GUI worker
            // lowers its own), so it never competes with the event loop harder than the physics.
            const int nice = threadNice();
            thread_ = std::thread([this, nice] {
                setThreadNice(nice);
                loop();
            });
        }
    }
    cv_.notify_all();
}

void SurfaceStage::loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
        cv_.wait(lock, [&] { return stop_ || queued_.has_value(); });
        if (stop_)
            return;
        SurfaceJob job = std::move(*queued_);
        queued_.reset();
        running_ = true;
        lock.unlock();
        run(job);
        lock.lock();
        running_ = false;
        cv_.notify_all();
    }
}

void SurfaceStage::cancelQueued() {
    std::lock_guard lock(mutex_);
    queued_.reset();
    cv_.notify_all();
}

void SurfaceStage::wait() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return !running_ && !queued_.has_value(); });
}

bool SurfaceStage::busy() const {
    std::lock_guard lock(mutex_);
    return running_ || queued_.has_value();
}

FrameSurfacePtr SurfaceStage::latest() const {
    std::lock_guard lock(mutex_);
    return latest_;
}

uint64_t SurfaceStage::finished() const {
    std::lock_guard lock(mutex_);
    return finished_;
}

} // namespace octo
