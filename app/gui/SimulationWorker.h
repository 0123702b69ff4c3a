#pragma once
// The simulation thread: owns the SimulationModel, steps it while playing, applies commands
// from the GUI between steps (never mid-step) and publishes immutable frames by pointer swap.
// The GUI polls latestFrame() on a timer and never waits for a step.
#include "SimulationModel.h"

#include <QThread>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

namespace octo::app {

struct WorkerCommand {
    enum class Type {
        LoadScene, ///< text = scene name or .json path, overrides
        Reset,
        SetParameter, ///< text = name, value
        Play,
        Pause,
        Step,         ///< one step, then pause
        RunUntilTime, ///< play until simulated time >= value, then pause and signal
        BeginDrag,    ///< id = body, a = body-space grab point, value = spring response time (s, 0: keep)
        DragTarget,   ///< a = world target
        EndDrag,
        Stir, ///< a = ray origin, b = ray direction, value = radius, value2 = strength, c = cursor velocity
        Reconstruct,
        ExportParticles,    ///< text = path
        ExportMesh,         ///< text = path
        AddBody,            ///< text = shape, a = centre, value = size (m), value2 = density (kg/m^3)
        RemoveBody,         ///< id = body
        SurfaceDiagnostics, ///< value = 1: octree leaves and baseline cell counts (octree overlay on)
    };
    Type type = Type::Play;
    std::string text;
    double value = 0.0;
    double value2 = 0.0;
    int id = -1;
    Vec3f a = Vec3f::Zero(), b = Vec3f::Zero(), c = Vec3f::Zero();
    std::vector<std::string> overrides;

    static WorkerCommand of(Type type) {
        WorkerCommand c;
        c.type = type;
        return c;
    }
};

/// Multi-producer, single-consumer command queue (mutex held only to push/swap).
class CommandQueue {
public:
    void push(WorkerCommand command);
    std::deque<WorkerCommand> takeAll();
    /// Copy of the pending commands (tests, diagnostics).
    std::deque<WorkerCommand> pending() const;
    /// Sleeps until a command arrives, wake() is called or the timeout passes.
    void waitFor(int milliseconds);
    void wake();

private:
    mutable std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<WorkerCommand> commands_;
    bool woken_ = false;
};

/// What the worker publishes: the snapshot plus the parameters it was made with.
struct PublishedFrame {
    FrameSnapshotPtr snapshot;
    ParameterSet parameters;
    uint64_t serial = 0; ///< increases with every publish
    std::string scene;
    bool playing = false;
    double stepsPerSecond = 0.0; ///< measured over ~0.5 s whenever the worker steps (any mode)
    double realTimeFactor = 0.0; ///< simulated seconds per wall-clock second, same window
    double lastStepMs = 0.0;
    double frameSeconds = 1.0 / 60.0; ///< simulated seconds per scene frame (recording's 1 / fps)
    bool dragSupported = false;
    bool bodiesSupported = false; ///< add / remove bodies
};
using PublishedFramePtr = std::shared_ptr<const PublishedFrame>;

/// The recorder's tap on the worker: every frame of the scene (1 / fps of simulated time) the
/// model ends while the tap is open, exactly once and in order.
struct RecordTapOptions {
    int maxFrames = 0;      ///< frames to tap (0: until closed)
    size_t capacity = 3;    ///< frames that may wait: the worker does not step while this many wait
    std::string folder;     ///< for the per-frame exports below
    bool particles = false; ///< particles_000005.ply of every tapped frame, written by the worker
    bool mesh = false;      ///< mesh_000005.obj of every tapped frame
};
struct RecordedFrame {
    int index = 0; ///< 0, 1, ... within the take
    PublishedFramePtr frame;
};

class SimulationWorker : public QThread {
    Q_OBJECT
public:
    explicit SimulationWorker(ModelFactory factory, QObject* parent = nullptr);
    ~SimulationWorker() override;

    void post(WorkerCommand command);
    void loadScene(const std::string& scene, const std::vector<std::string>& overrides = {});
    void setParameter(const std::string& name, double value);
    void play();
    void pause();
    void togglePlay();
    void stepOnce();
    void reset();
    void runUntilTime(double seconds);

    /// Latest published frame (nullptr before the first one). Lock held for a pointer copy.
    PublishedFramePtr latestFrame() const;
    bool isPlaying() const { return playing_.load(); }
    CommandQueue& commands() { return queue_; }
    /// Minimum time between two publishes while playing (ms); every step when 0.
    void setPublishIntervalMs(int ms) { publishIntervalMs_ = ms; }
    /// Stops the loop and joins the thread (also done by the destructor).
    void shutdown();

    /// Opens the record tap. While `capacity` tapped frames wait, the worker keeps taking
    /// commands but does not step: no frame is skipped and neither thread blocks on the other.
    void openRecordTap(const RecordTapOptions& options);
    void closeRecordTap();
    bool recordTapOpen() const;
    /// Takes the oldest waiting frame (none when nothing waits). Lock held for a pointer move.
    std::optional<RecordedFrame> takeRecordedFrame();
    /// Frames tapped since the tap was opened.
    int framesTapped() const;
    /// Drag response in wall-clock seconds (0: off): while a body is dragged the worker sets the
    /// model's (simulated) response time to this times the measured real-time factor, so a body
    /// follows the cursor in about the same wall time however slow the simulation runs.
    void setDragWallResponse(double seconds) { dragWallResponse_ = seconds; }
    /// The simulated response time the drag spring got last (tests, the Bodies dock).
    double dragSimResponse() const { return dragSimResponse_.load(); }

signals:
    void sceneLoaded(const QString& scene);
    /// A Reset command rebuilt the scene (with its start settling); its first frame follows.
    void resetDone();
    void errorOccurred(const QString& message);
    void blowUp(const QString& message, qulonglong lastGoodStep);
    void targetReached(double time);
    void exportFinished(const QString& path);
    void bodyAdded(int bodyId, const QString& shape);
    void bodyRemoved(int bodyId);

protected:
    void run() override;

private:
    void loop();
    void apply(const WorkerCommand& command);
    void loadModel(const WorkerCommand& command);
    void applyToModel(const WorkerCommand& command);
    void applyDrag(const WorkerCommand& command);
    void applyStir(const WorkerCommand& command);
    void stepModel();
    /// Drag in wall time: the spring's simulated response follows the real-time factor.
    void updateDragResponse();
    /// Steps/s and the real-time factor over ~0.5 s windows; `now` is the step's end (ns).
    void updateRates(int64_t now);
    void publish();
    bool tapFull() const;
    void tapFrame();

    ModelFactory factory_;
    CommandQueue queue_;
    std::atomic<bool> stop_{false};
    std::atomic<bool> playing_{false};
    std::atomic<int> publishIntervalMs_{15};
    static constexpr int kIdlePublishMs = 100; // between frame ends, nobody dragging or stirring
    int64_t lastStirNs_ = 0;                   // worker thread only

    std::mutex runMutex_; ///< held by run(); shutdown() takes it after wait() (a join TSan can see)
    mutable std::mutex frameMutex_;
    PublishedFramePtr latest_;

    // Worker-thread state.
    std::unique_ptr<SimulationModel> model_;
    std::string scene_;
    int pendingSteps_ = 0;
    bool runUntil_ = false;
    double runUntilTime_ = 0.0;
    bool dirty_ = false;
    bool surfaceDiagnostics_ = false; ///< kept across scene loads (the overlay outlives a scene)
    bool brokenReported_ = false;
    std::string lastProblem_;
    std::string lastLoadError_;
    bool dragWarned_ = false;
    uint64_t lastGoodStep_ = 0;
    uint64_t serial_ = 0;
    double stepsPerSecond_ = 0.0;
    double realTimeFactor_ = 0.0;
    double lastStepMs_ = 0.0;
    int stepsInWindow_ = 0;
    int64_t windowStartNs_ = 0;
    double windowStartTime_ = 0.0; // simulated time at the window start
    int64_t lastStepNs_ = 0;
    int64_t lastPublishNs_ = 0;

    mutable std::mutex tapMutex_;
    bool tapOpen_ = false;
    RecordTapOptions tap_;
    int tapped_ = 0;
    std::deque<RecordedFrame> tapQueue_;

    std::atomic<double> dragWallResponse_{0.0};
    std::atomic<double> dragSimResponse_{0.0};
    bool dragging_ = false;
};

} // namespace octo::app
