#pragma once
// The application window: viewport in the centre, docks generated from the parameter table,
// overlays, statistics, scene choice with resolution presets, bodies (BodiesDock), recording
// (RecordingDock); menus, toolbar, status bar; the scripted capture runs in ScriptedCapture.
// Talks to the SimulationWorker only through commands and polls its published frames.
// One class, one file per job: MainWindow.cpp (wiring, frames, problems, session),
// MainWindowMenus.cpp (menus, toolbar, view toggles), MainWindowDocks.cpp (docks, status bar,
// layout), MainWindowScenes.cpp (scene loading, presets, saved parameters, scene errors).
#include "FrameRecorder.h"
#include "ScenePresets.h"
#include "SimulationWorker.h"
#include "ViewportWidget.h"

#include <QMainWindow>
#include <map>

class QAction;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QMenu;
class QPushButton;
class QTimer;

namespace octo::app {

class OverlayPanel;
class ParameterPanel;
class StatsPanel;

struct MainWindowOptions {
    ModelFactory factory;            ///< empty: defaultModelFactory()
    std::string scene = "dam-break"; ///< loaded at start (empty: none)
    bool restoreLastScene = false;   ///< with persistSettings: the last session's scene and preset
    ResolutionPreset preset = ResolutionPreset::Interactive;
    std::vector<std::string> overrides; ///< name=value on top of the scene's parameters (win over presets)
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
    StatsPanel* statsPanel() const { return statsPanel_; }
    void setRenderSettings(const render::RenderSettings& settings);
    /// Repaint on every poll tick even without a new frame (GUI frame-rate benchmark).
    void setContinuousRepaint(bool on) { continuousRepaint_ = on; }
    /// The banner above the viewport that shows a problem in full (word-wrapped).
    QLabel* problemLabel() const { return problemLabel_; }
    /// Last problem shown in the banner (blow-up, scene error, recording failure).
    QString lastProblem() const { return lastProblem_; }
    /// The line above the view while a scene builds with its start settling ("" when none shows).
    QString settlingText() const;
    /// The Scene dock's line about the running scene (name, size, its description).
    QString sceneInfoText() const;
    /// The status bar's rates ("12.3 steps/s | 0.31x real time").
    QString rateText() const;
    /// Last notice (a value clamped or refused, saved settings applied ...).
    QString lastNotice() const { return lastNotice_; }
    /// True when the status bar offers "Reset" (only after a blow-up, never for other problems).
    bool resetOffered() const;
    /// Loads a built-in scene name or a .json path with the current resolution preset; a scene
    /// that cannot be read keeps the running one and shows why.
    void loadScene(const std::string& scene);
    /// Scene file chosen by the user (File > Open): its own resolution wins.
    void openSceneFile(const QString& path);
    void setPreset(ResolutionPreset preset);
    ResolutionPreset preset() const { return preset_; }
    /// Forgets saved parameters and reloads the scene with its own values.
    void restoreDefaults();
    class RecordingDock* recordingDock() const {
        return recordingDock_;
    }
    class BodiesDock* bodiesDock() const {
        return bodiesDock_;
    }
    /// The whole window as the user sees it: QWidget::grab() does not see the viewport's native GL
    /// window, so its image is painted in at the viewport's place.
    QImage grabWindow();
    /// Folder the open dialog starts in (the built-in scenes).
    static QString sceneFolder();

    /// Scripted capture: run until `frames` frames of frameSeconds each have been simulated,
    /// save the viewport to `file` (at `size` if valid, else the viewport's size), then emit
    /// captureFinished. frames = 0 captures the first frame.
    /// Fails (exit code 1) when the target time is not reached within timeoutSeconds (0: never).
    void startCapture(const QString& file, int frames, double frameSeconds = 1.0 / 60.0, QSize size = {},
                      double timeoutSeconds = 0.0);

    /// Starts / stops recording with the Recording dock's settings (tests drive these too).
    bool startRecording(const QString& folder, const QSize& size, int frames, QString* error = nullptr,
                        FrameRecorder::ExistingFolder existing = FrameRecorder::ExistingFolder::NewTake);
    void stopRecording();
    /// Text of the Recording dock's status line.
    QString recordingStatus() const;

signals:
    void captureFinished(int exitCode, const QString& message);
    void noticeShown(const QString& message);
    void framePresented(qulonglong serial);

protected:
    void closeEvent(QCloseEvent* e) override;
    void resizeEvent(QResizeEvent* e) override;
    void showEvent(QShowEvent* e) override;

private:
    // MainWindow.cpp
    void buildCentralWidget();
    void connectWorker();
    void connectViewport();
    void restoreSession();
    void saveSession();
    void poll();
    void present(const PublishedFramePtr& frame);
    void presentScene(const PublishedFrame& frame);
    void presentCounts(const PublishedFrame& frame);
    void showProblem(const QString& message, bool offerReset = false);
    void showNotice(const QString& message, int ms = 10000);
    void clearProblem();
    // MainWindowMenus.cpp
    void buildActions();
    void buildFileMenu();
    QMenu* buildSimulationMenu();
    void buildViewMenu();
    void buildToolBar(QMenu* simulationMenu);
    void buildHelpMenu();
    void syncViewActions();
    void exportCurrent(bool mesh);
    // MainWindowDocks.cpp
    void buildDocks();
    QWidget* buildSceneDock();
    void buildStatusBar();
    // MainWindowScenes.cpp
    void openSceneDialog();
    void onWorkerError(const QString& message);
    void selectSceneInCombo(const std::string& scene);
    void onParameterEdited(const QString& name, double value);
    void warnAboutLeafSize(double leafSize);
    void postLoad(const std::string& scene, const std::vector<std::string>& overrides);
    /// The start settling a load runs before t = 0: the scene file's value, then the overrides'.
    static double startSettlingOf(const std::string& scene, const std::vector<std::string>& overrides);
    /// Says that the scene builds for a while (seconds > 0) until its first frame shows.
    void showSettling(double seconds);
    void applySavedParameters(double radius);
    void syncParameterWidgets(const PublishedFrame& frame);

    MainWindowOptions options_;
    SimulationWorker* worker_ = nullptr;
    bool diagnosticsPosted_ = false; ///< octree overlay state last sent to the worker
    ViewportWidget* viewport_ = nullptr;
    FrameRecorder* recorder_ = nullptr;
    class RecordingDock* recordingDock_ = nullptr;
    class BodiesDock* bodiesDock_ = nullptr;
    std::map<QString, ParameterPanel*> panels_;
    OverlayPanel* overlayPanel_ = nullptr;
    StatsPanel* statsPanel_ = nullptr;
    QTimer* pollTimer_ = nullptr;
    uint64_t shownSerial_ = 0;
    std::map<std::string, double> shownParameters_; ///< what the docks show
    std::string currentScene_;                      ///< scene of the frames on screen
    std::string requestedScene_;                    ///< last scene asked for (may still be loading)
    double requestedRadius_ = 0.0;                  ///< radius it was asked with (0: the file's)
    ResolutionPreset preset_ = ResolutionPreset::Interactive;
    qint64 lastStatsMs_ = 0;
    QString lastProblem_, lastNotice_;
    bool continuousRepaint_ = false;

    QAction *actPlay_ = nullptr, *actStep_ = nullptr, *actReset_ = nullptr;
    QAction *actSurfaceOverlay_ = nullptr, *actOctreeOverlay_ = nullptr, *actMeshOverlay_ = nullptr;
    QAction *actParticlesOverlay_ = nullptr, *actBoundaryOverlay_ = nullptr, *actDiagnostic_ = nullptr;
    QLabel *fpsLabel_ = nullptr, *stepsLabel_ = nullptr, *countsLabel_ = nullptr, *timeLabel_ = nullptr;
    class QDockWidget *leftDock_ = nullptr, *rightDock_ = nullptr, *parameterDock_ = nullptr;
    QLabel* problemLabel_ = nullptr;
    QWidget* problemBanner_ = nullptr;
    QLabel* settlingBanner_ = nullptr; ///< "Settling the start ..." while the worker builds the scene
    bool settlingBuilt_ = false;       ///< the worker has built the scene the banner waits for
    QPushButton* problemReset_ = nullptr;
    QComboBox* sceneCombo_ = nullptr;
    QComboBox* presetCombo_ = nullptr;
    QDoubleSpinBox* sceneRadius_ = nullptr;
    QLabel* sceneInfo_ = nullptr;
    std::string sceneDescribed_; ///< scene whose description sceneDescription_ holds
    QString sceneDescription_;

    class ScriptedCapture* capture_ = nullptr;
};

} // namespace octo::app
