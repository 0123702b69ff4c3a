#include "MainWindow.h"

#include "BodiesDock.h"
#include "InputPolicy.h"
#include "OverlayPanel.h"
#include "RecordingDock.h"
#include "ScriptedCapture.h"
#include "StatsPanel.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QSettings>
#include <QStatusBar>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <filesystem>

namespace octo::app {

namespace {
/// Overlay toggles persisted in QSettings under overlays/<key>.
std::vector<std::pair<QString, bool render::RenderSettings::*>> overlayFields() {
    using R = render::RenderSettings;
    return {{"particles", &R::showParticles},
            {"surfaceParticles", &R::highlightSurface},
            {"mesh", &R::showMesh},
            {"bodies", &R::showBodies},
            {"boundary", &R::showBoundary},
            {"octreeSurface", &R::octreeSurface},
            {"octreeInterior", &R::octreeInterior},
            {"octreeExterior", &R::octreeExterior},
            {"octreeDepthCue", &R::octreeDepthCue},
            {"grid", &R::showGrid},
            {"box", &R::showBox},
            {"cutaway", &R::cutawayWalls},
            {"exactDepth", &R::exactSphereDepth},
            {"legend", &R::showLegend},
            {"bodyLabels", &R::showBodyLabels}};
}
} // namespace

MainWindow::MainWindow(MainWindowOptions options, QWidget* parent)
    : QMainWindow(parent), options_(std::move(options)) {
    setWindowTitle("octofluid");
    resize(1280, 800);
    if (!options_.factory)
        options_.factory = defaultModelFactory();
    preset_ = options_.preset;
    worker_ = new SimulationWorker(options_.factory, this);
    recorder_ = new FrameRecorder(this);
    viewport_ = new ViewportWidget(this);
    capture_ = new ScriptedCapture(worker_, viewport_, this);
    connect(capture_, &ScriptedCapture::finished, this, &MainWindow::captureFinished);
    viewport_->setObjectName("viewport");
    buildCentralWidget();

    buildActions();
    buildDocks();
    buildHelpMenu();
    buildStatusBar();
    InputPolicy::applyFocusPolicy(this);
    qApp->installEventFilter(new InputPolicy(viewport_, this));
    connectWorker();
    connectViewport();

    if (options_.persistSettings)
        restoreSession();
    {
        const QSignalBlocker b(presetCombo_);
        presetCombo_->setCurrentIndex(int(preset_));
    }

    pollTimer_ = new QTimer(this);
    pollTimer_->setTimerType(Qt::PreciseTimer);
    connect(pollTimer_, &QTimer::timeout, this, &MainWindow::poll);
    pollTimer_->start(options_.pollIntervalMs);
    worker_->start();
    if (!options_.scene.empty()) {
        loadScene(options_.scene);
        if (options_.autoPlay)
            worker_->play();
    }
}

MainWindow::~MainWindow() {
    recorder_->stop();
    worker_->shutdown();
}

void MainWindow::buildCentralWidget() {
    // Problems (a scene file's line:column error, a blow-up) go in a wrapped banner above the view:
    // in the status bar, beside the rates, they were cut off ("JSON synta").
    auto* central = new QWidget(this);
    auto* column = new QVBoxLayout(central);
    column->setContentsMargins(0, 0, 0, 0);
    column->setSpacing(0);
    problemBanner_ = new QWidget(central);
    problemBanner_->setObjectName("problemBanner");
    problemBanner_->setStyleSheet("#problemBanner { background: #3a1e1e; }");
    auto* bannerRow = new QHBoxLayout(problemBanner_);
    bannerRow->setContentsMargins(8, 4, 8, 4);
    column->addWidget(problemBanner_);
    // The start settling runs while the worker builds the scene (seconds, with nothing to show):
    // a line says so until the scene's first frame.
    settlingBanner_ = new QLabel(central);
    settlingBanner_->setObjectName("settlingBanner");
    settlingBanner_->setStyleSheet(
        "#settlingBanner { background: #1e2a3a; color: #e8eef6; padding: 4px 8px; }");
    settlingBanner_->setVisible(false);
    column->addWidget(settlingBanner_);
    column->addWidget(viewport_, 1);
    problemBanner_->setVisible(false);
    setCentralWidget(central);
}

void MainWindow::connectWorker() {
    connect(worker_, &SimulationWorker::errorOccurred, this, &MainWindow::onWorkerError);
    connect(worker_, &SimulationWorker::blowUp, this, [this](const QString& m, qulonglong lastGood) {
        showProblem(
            QString("Simulation stopped: %1 (last good step %2). Press R to reset.").arg(m).arg(lastGood),
            true);
        capture_->fail("simulation blew up: " + m);
    });
    connect(worker_, &SimulationWorker::sceneLoaded, this, [this](const QString& s) {
        settlingBuilt_ = s.toStdString() == requestedScene_; // its first frame hides the banner
        clearProblem();
        statusBar()->showMessage("Loaded scene " + s, 4000);
        statsPanel_->clear();
    });
    connect(worker_, &SimulationWorker::resetDone, this, [this] { settlingBuilt_ = true; });
    connect(worker_, &SimulationWorker::bodyAdded, this, [this](int id, const QString& shape) {
        statusBar()->showMessage(QString("Added %1 #%2").arg(shape).arg(id), 4000);
    });
    connect(worker_, &SimulationWorker::bodyRemoved, this,
            [this](int id) { statusBar()->showMessage(QString("Removed body #%1").arg(id), 4000); });
    connect(worker_, &SimulationWorker::exportFinished, this,
            [this](const QString& path) { statusBar()->showMessage("Wrote " + path, 4000); });
}

void MainWindow::connectViewport() {
    connect(viewport_, &ViewportWidget::glFailed, this, [this](const QString& m) {
        showProblem("OpenGL: " + m);
        capture_->fail("OpenGL: " + m);
    });
    connect(viewport_, &ViewportWidget::dragStarted, this, [this](int id, const Vec3f& p) {
        WorkerCommand c;
        c.type = WorkerCommand::Type::BeginDrag;
        c.id = id;
        c.a = p;
        // The response is in wall time: the worker scales it by the real-time factor every step.
        worker_->setDragWallResponse(bodiesDock_->dragResponseTime());
        worker_->post(c);
    });
    connect(viewport_, &ViewportWidget::dragMoved, this, [this](const Vec3f& p) {
        WorkerCommand c;
        c.type = WorkerCommand::Type::DragTarget;
        c.a = p;
        worker_->post(c);
    });
    connect(viewport_, &ViewportWidget::dragEnded, this,
            [this] { worker_->post(WorkerCommand::of(WorkerCommand::Type::EndDrag)); });
    connect(viewport_, &ViewportWidget::stirRequested, this,
            [this](const Vec3f& o, const Vec3f& d, float radius, float strength, const Vec3f& velocity) {
                WorkerCommand c;
                c.type = WorkerCommand::Type::Stir;
                c.a = o;
                c.b = d;
                c.value = radius;
                c.value2 = strength;
                c.c = velocity;
                worker_->post(c);
            });
}

void MainWindow::restoreSession() {
    QSettings s;
    restoreGeometry(s.value("window/geometry").toByteArray());
    restoreState(s.value("window/state").toByteArray());
    recordingDock_->setFolder(s.value("record/folder", recordingDock_->folder()).toString());
    render::RenderSettings r = viewport_->settings();
    s.beginGroup("overlays");
    for (auto [key, field] : overlayFields())
        r.*field = s.value(key, r.*field).toBool();
    r.colorMode = render::ColorMode(std::clamp(s.value("colorMode", int(r.colorMode)).toInt(), 0, 4));
    r.shading = render::Shading(std::clamp(s.value("shading", int(r.shading)).toInt(), 0, 1));
    s.endGroup();
    setRenderSettings(r);
    // Started plainly (no --scene): the last session's scene at its resolution preset.
    const std::string last = s.value("scene/last").toString().toStdString();
    if (options_.restoreLastScene && !last.empty()) {
        options_.scene = last;
        preset_ = ResolutionPreset(std::clamp(s.value("scene/preset", int(preset_)).toInt(), 0, 2));
    }
}

void MainWindow::saveSession() {
    QSettings s;
    s.setValue("window/geometry", saveGeometry());
    s.setValue("window/state", saveState());
    const render::RenderSettings& r = viewport_->settings();
    s.beginGroup("overlays");
    for (auto [key, field] : overlayFields())
        s.setValue(key, r.*field);
    s.setValue("colorMode", int(r.colorMode));
    s.setValue("shading", int(r.shading));
    s.endGroup();
}

void MainWindow::closeEvent(QCloseEvent* e) {
    if (options_.persistSettings)
        saveSession();
    recorder_->stop();
    QMainWindow::closeEvent(e);
}

ParameterPanel* MainWindow::parameterPanel(const QString& group) const {
    auto it = panels_.find(group);
    return it == panels_.end() ? nullptr : it->second;
}

QImage MainWindow::grabWindow() {
    QImage image = grab().toImage();
    const QImage view = viewport_->grabFramebuffer();
    if (!view.isNull()) {
        QPainter painter(&image);
        painter.drawImage(QRect(viewport_->mapTo(this, QPoint(0, 0)), viewport_->size()), view);
    }
    return image;
}

void MainWindow::poll() {
    recordingDock_->pump(); // recorded frames first: the simulation waits for them
    PublishedFramePtr frame = worker_->latestFrame();
    if (frame && frame->serial != shownSerial_)
        present(frame);
    else if (continuousRepaint_)
        viewport_->requestPaint();
    fpsLabel_->setText(QString("%1 fps (paint %2 ms)")
                           .arg(viewport_->framesPerSecond(), 0, 'f', 1)
                           .arg(viewport_->lastPaintMs(), 0, 'f', 1));
    if (capture_->active() && frame && frame->serial == shownSerial_)
        capture_->poll(frame);
}

void MainWindow::present(const PublishedFramePtr& frame) {
    shownSerial_ = frame->serial;
    if (settlingBuilt_ && frame->scene == requestedScene_) {
        settlingBuilt_ = false;
        settlingBanner_->setVisible(false);
    }
    viewport_->setFrame(frame);
    if (!frame->snapshot)
        return;
    presentScene(*frame);
    syncParameterWidgets(*frame);
    {
        const QSignalBlocker b(actPlay_);
        actPlay_->setChecked(frame->playing);
    }
    presentCounts(*frame);
    bodiesDock_->showFrame(*frame);
    const FrameSnapshot& f = *frame->snapshot;
    if (!f.status.empty() && lastProblem_.isEmpty())
        showProblem(QString::fromStdString(f.status), true);
    emit framePresented(frame->serial);
}

void MainWindow::presentScene(const PublishedFrame& frame) {
    const FrameSnapshot& f = *frame.snapshot;
    if (currentScene_ != frame.scene) {
        currentScene_ = frame.scene;
        bodiesDock_->adaptToScene(f.domain);
        const QString key = QString::fromStdString(frame.scene);
        const int index = sceneCombo_->findData(key);
        if (index >= 0) {
            const QSignalBlocker b(sceneCombo_);
            sceneCombo_->setCurrentIndex(index);
        }
    }
    if (sceneDescribed_ != frame.scene) {
        // The scene's own description (its file's "description"), once per scene.
        sceneDescribed_ = frame.scene;
        sceneDescription_.clear();
        try {
            sceneDescription_ = QString::fromStdString(describeScene(frame.scene).description);
        } catch (const std::exception&) {
        }
    }
    sceneInfo_->setText(QString("%1: %2 fluid particles at r = %3 mm%4")
                            .arg(QString::fromStdString(std::filesystem::path(frame.scene).stem().string()))
                            .arg(f.positions.size())
                            .arg(frame.parameters.get(Param::particleRadius) * 1000.0, 0, 'g', 4)
                            .arg(sceneDescription_.isEmpty() ? QString() : "\n" + sceneDescription_));
}

void MainWindow::presentCounts(const PublishedFrame& frame) {
    const FrameSnapshot& f = *frame.snapshot;
    size_t surface = 0;
    for (uint8_t s : f.surfaceFlag)
        surface += s;
    countsLabel_->setText(QString("FP %1 | SP %2 | surface %3 | bodies %4")
                              .arg(f.positions.size())
                              .arg(f.boundaryPositions.size())
                              .arg(surface)
                              .arg(f.bodies.size()));
    timeLabel_->setText(QString("t = %1 s").arg(f.time, 0, 'f', 3));
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    if (now - lastStatsMs_ > 150 ||
        !frame.playing) { // a table refresh per frame would cost more than the paint
        statsPanel_->update(f, frame.stepsPerSecond, frame.lastStepMs, frame.realTimeFactor);
        // The status bar shows the very numbers the Statistics dock shows, refreshed together.
        stepsLabel_->setText(QString("%1 steps/s | %2\u00d7 real time")
                                 .arg(frame.stepsPerSecond, 0, 'f', 1)
                                 .arg(frame.realTimeFactor, 0, 'g', 2));
        lastStatsMs_ = now;
    }
}

void MainWindow::showProblem(const QString& message, bool offerReset) {
    lastProblem_ = message;
    problemLabel_->setText(message);
    problemLabel_->setToolTip(message);
    problemReset_->setVisible(offerReset); // only a broken simulation is fixed by a reset
    problemBanner_->setVisible(true);
    qWarning("octofluid: %s", qPrintable(message));
}

void MainWindow::showNotice(const QString& message, int ms) {
    lastNotice_ = message;
    statusBar()->showMessage(message, ms);
    emit noticeShown(message);
}

void MainWindow::clearProblem() {
    lastProblem_.clear();
    problemLabel_->clear();
    problemReset_->setVisible(false);
    problemBanner_->setVisible(false);
}

QString MainWindow::sceneInfoText() const {
    return sceneInfo_->text();
}

QString MainWindow::rateText() const {
    return stepsLabel_->text();
}

bool MainWindow::resetOffered() const {
    return !problemReset_->isHidden();
}

bool MainWindow::startRecording(const QString& folder, const QSize& size, int frames, QString* error,
                                FrameRecorder::ExistingFolder existing) {
    return recordingDock_->start(folder, size, frames, error, existing);
}

void MainWindow::stopRecording() {
    recordingDock_->stop();
}

QString MainWindow::recordingStatus() const {
    return recordingDock_->statusText();
}

void MainWindow::startCapture(const QString& file, int frames, double frameSeconds, QSize size,
                              double timeoutSeconds) {
    capture_->start(file, frames, frameSeconds, size, timeoutSeconds);
}

} // namespace octo::app
