// TBB before Qt: its headers use the identifier `emit`, which Qt defines as a macro.
#include <tbb/task_arena.h>
#include <tbb/task_scheduler_observer.h>

#include "SimulationWorker.h"

#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>

namespace octo::app {

namespace {
/// The simulation yields to the GUI: its threads run at a lower scheduling priority (nice), so
/// on a 2-core machine a busy solver cannot starve the event loop and the rasteriser.
void lowerCurrentThreadPriority() {
#ifdef __linux__
    setpriority(PRIO_PROCESS, pid_t(syscall(SYS_gettid)), 10); // per-thread on Linux; best effort
#endif
}

class LowPriorityObserver : public tbb::task_scheduler_observer {
public:
    explicit LowPriorityObserver(tbb::task_arena& arena) : tbb::task_scheduler_observer(arena) {
        observe(true);
    }
    ~LowPriorityObserver() override { observe(false); }
    void on_scheduler_entry(bool) override { lowerCurrentThreadPriority(); }
};

int64_t nowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}
} // namespace

// ---- CommandQueue ----

void CommandQueue::push(WorkerCommand command) {
    {
        std::lock_guard lock(mutex_);
        commands_.push_back(std::move(command));
    }
    cv_.notify_one();
}

std::deque<WorkerCommand> CommandQueue::takeAll() {
    std::deque<WorkerCommand> out;
    std::lock_guard lock(mutex_);
    out.swap(commands_);
    return out;
}

std::deque<WorkerCommand> CommandQueue::pending() const {
    std::lock_guard lock(mutex_);
    return commands_;
}

void CommandQueue::waitFor(int milliseconds) {
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, std::chrono::milliseconds(milliseconds), [&] { return !commands_.empty() || woken_; });
    woken_ = false;
}

void CommandQueue::wake() {
    {
        std::lock_guard lock(mutex_);
        woken_ = true;
    }
    cv_.notify_one();
}

// ---- SimulationWorker ----

SimulationWorker::SimulationWorker(ModelFactory factory, QObject* parent)
    : QThread(parent), factory_(std::move(factory)) {
    setObjectName("SimulationWorker");
}

SimulationWorker::~SimulationWorker() {
    shutdown();
}

void SimulationWorker::shutdown() {
    stop_ = true;
    queue_.wake();
    wait();
    // QThread::wait() synchronises through Qt's futex-based primitives, invisible to
    // ThreadSanitizer; taking the mutex run() held makes the join a visible happens-before.
    std::lock_guard joined(runMutex_);
}

void SimulationWorker::post(WorkerCommand command) {
    queue_.push(std::move(command));
}

void SimulationWorker::loadScene(const std::string& scene, const std::vector<std::string>& overrides) {
    WorkerCommand c;
    c.type = WorkerCommand::Type::LoadScene;
    c.text = scene;
    c.overrides = overrides;
    post(std::move(c));
}

void SimulationWorker::setParameter(const std::string& name, double value) {
    WorkerCommand c;
    c.type = WorkerCommand::Type::SetParameter;
    c.text = name;
    c.value = value;
    post(std::move(c));
}

void SimulationWorker::play() {
    post(WorkerCommand::of(WorkerCommand::Type::Play));
}
void SimulationWorker::pause() {
    post(WorkerCommand::of(WorkerCommand::Type::Pause));
}
void SimulationWorker::togglePlay() {
    isPlaying() ? pause() : play();
}
void SimulationWorker::stepOnce() {
    post(WorkerCommand::of(WorkerCommand::Type::Step));
}
void SimulationWorker::reset() {
    post(WorkerCommand::of(WorkerCommand::Type::Reset));
}

void SimulationWorker::runUntilTime(double seconds) {
    WorkerCommand c;
    c.type = WorkerCommand::Type::RunUntilTime;
    c.value = seconds;
    post(std::move(c));
}

PublishedFramePtr SimulationWorker::latestFrame() const {
    std::lock_guard lock(frameMutex_);
    return latest_;
}

void SimulationWorker::run() {
    std::lock_guard running(runMutex_); // see shutdown()
    lowerCurrentThreadPriority();
    tbb::task_arena arena;
    LowPriorityObserver observer(arena);
    arena.execute([this] { loop(); });
    model_.reset();
}

void SimulationWorker::loop() {
    windowStartNs_ = nowNs();
    while (!stop_) {
        for (const WorkerCommand& c : queue_.takeAll()) {
            try {
                apply(c);
            } catch (const std::exception& e) {
                emit errorOccurred(QString::fromStdString(e.what()));
            }
        }
        if (stop_)
            break;
        if (model_ && (playing_ || pendingSteps_ > 0) && tapFull()) {
            // The recorder has not taken the frames waiting yet: wait for it without stepping
            // (commands still run), so no simulated frame is skipped.
            if (dirty_)
                publish();
            queue_.waitFor(3);
        } else if (model_ && (playing_ || pendingSteps_ > 0)) {
            stepModel();
        } else {
            if (model_ && dirty_)
                publish();
            queue_.waitFor(30);
        }
    }
}

void SimulationWorker::apply(const WorkerCommand& c) {
    using T = WorkerCommand::Type;
    if (c.type == T::LoadScene) {
        loadModel(c);
        return;
    }
    if (c.type == T::SurfaceDiagnostics) {
        surfaceDiagnostics_ = c.value != 0.0;
        if (model_) {
            model_->setSurfaceDiagnostics(surfaceDiagnostics_);
            if (surfaceDiagnostics_ && !playing_)
                model_->reconstructNow(); // paused: the overlay shows this frame's octree at once
            dirty_ = true;
        }
        return;
    }
    if (!model_) {
        if (c.type == T::Play || c.type == T::Pause || c.type == T::Step || c.type == T::RunUntilTime)
            playing_ = false;
        throw std::runtime_error(lastLoadError_.empty() ? "no scene is loaded"
                                                        : "no scene is loaded: " + lastLoadError_);
    }
    applyToModel(c);
}

void SimulationWorker::loadModel(const WorkerCommand& c) {
    // Build the new scene before dropping the old one: a failed load keeps the current scene.
    std::unique_ptr<SimulationModel> next;
    try {
        next = factory_(c.text, c.overrides); // throws with the scene's name on failure
    } catch (const std::exception& e) {
        if (!model_)
            lastLoadError_ = e.what();
        throw;
    }
    playing_ = false;
    model_ = std::move(next);
    model_->setSurfaceDiagnostics(surfaceDiagnostics_);
    scene_ = c.text;
    brokenReported_ = false;
    lastLoadError_.clear();
    lastGoodStep_ = 0;
    lastStepNs_ = 0; // new rate window
    dragging_ = false;
    dragSimResponse_ = 0.0;
    dirty_ = true;
    emit sceneLoaded(QString::fromStdString(c.text));
}

/// Every command that needs a model (one case per command type: the switch is the command table).
void SimulationWorker::applyToModel(const WorkerCommand& c) {
    using T = WorkerCommand::Type;
    switch (c.type) {
    case T::LoadScene:
    case T::SurfaceDiagnostics:
        break; // apply(): they need no model
    case T::Reset:
        model_->reset();
        lastStepNs_ = 0; // new rate window
        brokenReported_ = false;
        lastGoodStep_ = 0;
        dirty_ = true;
        emit resetDone();
        break;
    case T::SetParameter:
        model_->setParameter(c.text, c.value); // ParameterError names the range
        // λmin, L, ... act on the current frame right away even when paused (issue 5, item 4).
        if (const ParameterInfo* info = findParameter(c.text); info && info->shapesSurface() && !playing_)
            model_->reconstructNow();
        dirty_ = true;
        break;
    case T::Play:
        playing_ = true;
        break;
    case T::Pause:
        playing_ = false;
        runUntil_ = false;
        dirty_ = true;
        break;
    case T::Step:
        playing_ = false;
        ++pendingSteps_;
        break;
    case T::RunUntilTime:
        runUntil_ = true;
        runUntilTime_ = c.value;
        playing_ = true;
        break;
    case T::BeginDrag:
    case T::DragTarget:
    case T::EndDrag:
        applyDrag(c);
        break;
    case T::Stir:
        applyStir(c);
        break;
    case T::Reconstruct:
        model_->reconstructNow();
        dirty_ = true;
        break;
    case T::ExportParticles:
        model_->exportParticles(c.text);
        emit exportFinished(QString::fromStdString(c.text));
        break;
    case T::ExportMesh:
        model_->exportMesh(c.text);
        emit exportFinished(QString::fromStdString(c.text));
        break;
    case T::AddBody: {
        if (!model_->supportsBodies())
            throw std::runtime_error("this model cannot add bodies");
        const int id = model_->addBody(c.text, c.a, float(c.value), float(c.value2));
        dirty_ = true;
        emit bodyAdded(id, QString::fromStdString(c.text));
        break;
    }
    case T::RemoveBody:
        if (!model_->supportsBodies())
            throw std::runtime_error("this model cannot remove bodies");
        model_->removeBody(c.id);
        dirty_ = true;
        emit bodyRemoved(c.id);
        break;
    }
}

void SimulationWorker::applyDrag(const WorkerCommand& c) {
    using T = WorkerCommand::Type;
    if (!model_->supportsDrag()) {
        if (!dragWarned_)
            emit errorOccurred("dragging bodies needs Simulation::beginDrag/setDragTarget/endDrag (not "
                               "in the core yet)");
        dragWarned_ = true;
        return;
    }
    if (c.type == T::BeginDrag) {
        if (c.value > 0.0)
            model_->setDragResponseTime(c.value); // the Bodies dock's drag stiffness
        model_->beginDrag(c.id, c.a);
        dragging_ = true;
    } else if (c.type == T::DragTarget) {
        model_->setDragTarget(c.a);
    } else {
        model_->endDrag();
        dragging_ = false;
    }
    dirty_ = true;
}

void SimulationWorker::applyStir(const WorkerCommand& c) {
    if (!model_->supportsStir()) {
        if (!dragWarned_)
            emit errorOccurred("this model has no fluid to stir");
        dragWarned_ = true;
        return;
    }
    model_->stir(c.a, c.b, float(c.value), c.value2 > 0.0 ? float(c.value2) : 1.0f, c.c);
    lastStirNs_ = nowNs();
}

void SimulationWorker::updateDragResponse() {
    if (!(dragging_ && dragWallResponse_.load() > 0.0 && model_->supportsDrag()))
        return;
    // Drag in wall time: the drag's simulated response (RigidBodySystem::applyDrag: the time to
    // stop from full speed) is the wall response scaled by the real-time factor, so at 0.1x real
    // time a 0.2 s (wall) response is 0.02 s simulated.
    const double factor = realTimeFactor_ > 0.0 ? std::min(realTimeFactor_, 1.0) : 0.05;
    const double simulated = std::clamp(dragWallResponse_.load() * factor, 0.005, 1.0);
    if (simulated != dragSimResponse_.load()) {
        model_->setDragResponseTime(simulated);
        dragSimResponse_ = simulated;
    }
}

void SimulationWorker::updateRates(int64_t now) {
    // Rates in every mode (play, single steps, run-until / scripted capture), over ~0.5 s windows.
    if (now - windowStartNs_ <= 500'000'000 && stepsPerSecond_ != 0.0)
        return;
    const double seconds = double(now - windowStartNs_) * 1e-9;
    stepsPerSecond_ = double(stepsInWindow_) / seconds;
    realTimeFactor_ = std::max(0.0, model_->time() - windowStartTime_) / seconds;
    if (now - windowStartNs_ > 500'000'000) {
        stepsInWindow_ = 0;
        windowStartNs_ = now;
        windowStartTime_ = model_->time();
    }
}

void SimulationWorker::stepModel() {
    const int64_t t0 = nowNs();
    if (t0 - lastStepNs_ > 1'000'000'000) {
        // Stepping (re)starts after an idle second: a fresh rate window, not one spanning the pause.
        stepsInWindow_ = 0;
        windowStartNs_ = t0;
        windowStartTime_ = model_->time();
    }
    std::string problem;
    updateDragResponse();
    try {
        model_->step();
        problem = model_->healthProblem();
    } catch (const std::exception& e) {
        problem = std::string("step failed: ") + e.what();
    }
    const int64_t t1 = nowNs();
    lastStepMs_ = double(t1 - t0) * 1e-6;
    if (pendingSteps_ > 0)
        --pendingSteps_;
    ++stepsInWindow_;
    lastStepNs_ = t1;
    updateRates(t1);
    if (!problem.empty()) {
        // Blow-up guard: stop, keep the last state visible, tell the GUI once.
        playing_ = false;
        runUntil_ = false;
        pendingSteps_ = 0;
        lastProblem_ = problem;
        if (!brokenReported_) {
            brokenReported_ = true;
            emit blowUp(QString::fromStdString(problem), qulonglong(lastGoodStep_));
        }
        publish();
        return;
    }
    lastGoodStep_ = model_->stepCount();
    if (model_->frameEnded()) {
        bool tap = false;
        {
            std::lock_guard lock(tapMutex_);
            tap = tapOpen_ && (tap_.maxFrames <= 0 || tapped_ < tap_.maxFrames);
        }
        if (tap)
            tapFrame();
    }
    bool force = !playing_;
    if (runUntil_ && model_->time() >= runUntilTime_) {
        runUntil_ = false;
        playing_ = false;
        publish();
        emit targetReached(model_->time());
        return;
    }
    // A frame's end brings the new surface; between frame ends only particles and bodies move. The
    // viewport repaints on every snapshot, and under software OpenGL a paint costs 10-20 ms of the
    // cores the physics needs (the dam break at the Interactive size: 31 paints/s of 19 ms, 0.6
    // of a core, for ~4 frame ends/s). So between frame ends a snapshot goes out every
    // publishIntervalMs while the user drags or stirs (the response must be seen), else every
    // kIdlePublishMs.
    const bool interacting = dragging_ || t1 - lastStirNs_ < 500'000'000;
    const int64_t interval = int64_t(interacting ? publishIntervalMs_.load()
                                                 : std::max(publishIntervalMs_.load(), kIdlePublishMs));
    if (force || model_->frameEnded() || t1 - lastPublishNs_ >= interval * 1'000'000)
        publish();
}

void SimulationWorker::openRecordTap(const RecordTapOptions& options) {
    std::lock_guard lock(tapMutex_);
    tap_ = options;
    tap_.capacity = std::max<size_t>(options.capacity, 1);
    tapOpen_ = true;
    tapped_ = 0;
    tapQueue_.clear();
}

void SimulationWorker::closeRecordTap() {
    {
        std::lock_guard lock(tapMutex_);
        tapOpen_ = false;
        tapQueue_.clear();
    }
    queue_.wake();
}

bool SimulationWorker::recordTapOpen() const {
    std::lock_guard lock(tapMutex_);
    return tapOpen_;
}

int SimulationWorker::framesTapped() const {
    std::lock_guard lock(tapMutex_);
    return tapped_;
}

std::optional<RecordedFrame> SimulationWorker::takeRecordedFrame() {
    std::optional<RecordedFrame> out;
    {
        std::lock_guard lock(tapMutex_);
        if (tapQueue_.empty())
            return out;
        out = std::move(tapQueue_.front());
        tapQueue_.pop_front();
    }
    queue_.wake(); // room again: the worker may step
    return out;
}

bool SimulationWorker::tapFull() const {
    std::lock_guard lock(tapMutex_);
    return tapOpen_ && tapQueue_.size() >= tap_.capacity;
}

void SimulationWorker::tapFrame() {
    // The frame's snapshot (with its surface) is published and handed to the recorder alike.
    publish();
    RecordTapOptions options;
    int index = 0;
    {
        std::lock_guard lock(tapMutex_);
        options = tap_;
        index = tapped_++;
        tapQueue_.push_back({index, latestFrame()});
    }
    const std::pair<bool, const char*> exports[] = {{options.particles, "particles"}, {options.mesh, "mesh"}};
    for (const auto& [on, what] : exports) {
        if (!on)
            continue;
        char name[64];
        std::snprintf(name, sizeof name, "%s_%06d.%s", what, index, what[0] == 'p' ? "ply" : "obj");
        const std::string path = options.folder + "/" + name;
        try {
            if (what[0] == 'p')
                model_->exportParticles(path);
            else
                model_->exportMesh(path);
        } catch (const std::exception& e) {
            emit errorOccurred(QString("recording: cannot export %1: %2").arg(name, e.what()));
        }
    }
}

void SimulationWorker::publish() {
    auto frame = std::make_shared<PublishedFrame>();
    try {
        frame->snapshot = model_->snapshot();
    } catch (const std::exception& e) {
        auto empty = std::make_shared<FrameSnapshot>();
        empty->status = std::string("snapshot failed: ") + e.what();
        frame->snapshot = empty;
    }
    if (brokenReported_ && frame->snapshot && frame->snapshot->status.empty()) {
        auto copy = std::make_shared<FrameSnapshot>(*frame->snapshot);
        copy->status = lastProblem_;
        frame->snapshot = copy;
    }
    frame->parameters = model_->parameters();
    frame->serial = ++serial_;
    frame->scene = scene_;
    frame->playing = playing_;
    // The rates of the latest stepping; 0 once the worker has been idle for a second.
    const bool stepping = nowNs() - lastStepNs_ < 1'000'000'000;
    frame->stepsPerSecond = stepping ? stepsPerSecond_ : 0.0;
    frame->realTimeFactor = stepping ? realTimeFactor_ : 0.0;
    frame->lastStepMs = lastStepMs_;
    frame->frameSeconds = model_->frameDuration();
    frame->dragSupported = model_->supportsDrag();
    frame->bodiesSupported = model_->supportsBodies();
    {
        std::lock_guard lock(frameMutex_);
        latest_ = std::move(frame);
    }
    lastPublishNs_ = nowNs();
    dirty_ = false;
}

} // namespace octo::app
