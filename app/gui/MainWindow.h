#pragma once
// The application window: viewport in the centre, docks generated from the parameter table,
// overlays, statistics, scene choice, bodies, recording; menus, toolbar and status bar.
// Talks to the SimulationWorker only through commands and polls its published frames.
#include "FrameRecorder.h"
#include "SimulationWorker.h"
#include "ViewportWidget.h"

#include <QMainWindow>
#include <map>

class QAction;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QCheckBox;
class QTimer;

namespace octo::app {

class OverlayPanel;
class ParameterPanel;
class StatsPanel;

struct MainWindowOptions {
    ModelFactory factory;               ///< empty: defaultModelFactory()
    std::string scene = "dam-break";    ///< loaded at start (empty: none)
    std::vector<std::string> overrides; ///< name=value on top of the scene's parameters
    bool autoPlay = true;
    bool persistSettings = true; ///< read/write QSettings (off for tests and captures)
    int pollIntervalMs = 16;
};

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(MainWindowOptions options, QWidget* parent = nullptr);
    ~MainWindow() override;

    ViewportWidget* viewport() const { return viewport_; }
    SimulationWorker* worker() const { return worker_; }
    FrameRecorder* recorder() const { return recorder_; }
    ParameterPanel* parameterPanel(const QString& group) const;
    OverlayPanel* overlayPanel() const { return overlayPanel_; }
    StatsPanel* statsPanel() const { return statsPanel_; }
    void setRenderSettings(const render::RenderSettings& settings);
    /// Repaint on every poll tick even without a new frame (GUI frame-rate benchmark).
    void setContinuousRepaint(bool on) { continuousRepaint_ = on; }
    /// Last problem shown in the status bar (blow-up, scene error, recording failure).
    QString lastProblem() const { return lastProblem_; }

    /// Scripted capture: run until `frames` frames of frameSeconds each have been simulated,
    /// save the viewport to `file` (at `size` if valid, else the viewport's size), then emit
    /// captureFinished. frames = 0 captures the first frame.
    /// Fails (exit code 1) when the target time is not reached within timeoutSeconds (0: never).
    void startCapture(const QString& file, int frames, double frameSeconds = 1.0 / 60.0, QSize size = {},
                      double timeoutSeconds = 0.0);

    /// Starts / stops recording with the Recording dock's settings (tests drive these too).
    bool startRecording(const QString& folder, const QSize& size, int frames, QString* error = nullptr);
    void stopRecording();

signals:
    void captureFinished(int exitCode, const QString& message);
    void framePresented(qulonglong serial);

protected:
    void closeEvent(QCloseEvent* e) override;

private:
    void buildActions();
    void buildDocks();
    QWidget* buildSceneDock();
    QWidget* buildBodiesDock();
    QWidget* buildRecordDock();
    void buildStatusBar();
    void poll();
    void present(const PublishedFramePtr& frame);
    void showProblem(const QString& message);
    void clearProblem();
    void onParameterEdited(const QString& name, double value);
    void loadScene(const std::string& scene);
    void addBody(const std::string& shape);
    void deleteSelectedBody();
    void openSceneFile();
    void exportCurrent(bool mesh);
    void recordFrame();
    void finishRecording(int frames);
    void failCapture(const QString& message);
    void syncViewActions();

    MainWindowOptions options_;
    SimulationWorker* worker_ = nullptr;
    ViewportWidget* viewport_ = nullptr;
    FrameRecorder* recorder_ = nullptr;
    std::map<QString, ParameterPanel*> panels_;
    OverlayPanel* overlayPanel_ = nullptr;
    StatsPanel* statsPanel_ = nullptr;
    QTimer* pollTimer_ = nullptr;
    uint64_t shownSerial_ = 0;
    std::string panelsScene_; ///< scene whose parameters the panels show
    qint64 lastStatsMs_ = 0;
    QString lastProblem_;
    bool continuousRepaint_ = false;

    QAction *actPlay_ = nullptr, *actStep_ = nullptr, *actReset_ = nullptr;
    QAction *actSurfaceOverlay_ = nullptr, *actOctreeOverlay_ = nullptr, *actMeshOverlay_ = nullptr;
    QAction *actParticlesOverlay_ = nullptr, *actBoundaryOverlay_ = nullptr;
    QLabel *fpsLabel_ = nullptr, *stepsLabel_ = nullptr, *countsLabel_ = nullptr, *timeLabel_ = nullptr;
    QLabel* problemLabel_ = nullptr;
    QPushButton* problemReset_ = nullptr;
    QComboBox* sceneCombo_ = nullptr;
    QDoubleSpinBox* sceneRadius_ = nullptr;
    QListWidget* bodiesList_ = nullptr;
    QString shownBodyIds_;
    QDoubleSpinBox *bodySize_ = nullptr, *bodyDensity_ = nullptr;
    std::vector<QPushButton*> addBodyButtons_;
    QPushButton* deleteBodyButton_ = nullptr;
    QLineEdit* recordFolder_ = nullptr;
    QSpinBox *recordWidth_ = nullptr, *recordHeight_ = nullptr, *recordFrames_ = nullptr;
    QCheckBox *recordParticles_ = nullptr, *recordMesh_ = nullptr;
    QPushButton* recordButton_ = nullptr;
    QProgressBar* recordProgress_ = nullptr;
    QLabel* recordStatus_ = nullptr;

    // Scripted capture state.
    bool capturing_ = false;
    QString captureFile_;
    double captureTime_ = 0.0;
    QSize captureSize_;
    bool captureTargetReached_ = false;
};

} // namespace octo::app
