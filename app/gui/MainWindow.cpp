#include "MainWindow.h"

#include "OverlayPanel.h"
#include "ParameterPanel.h"
#include "StatsPanel.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>
#include <algorithm>

namespace octo::app {

namespace {
QDockWidget* makeDock(QMainWindow* window, const QString& title, QWidget* content, Qt::DockWidgetArea area) {
    auto* dock = new QDockWidget(title, window);
    dock->setObjectName("dock_" + title);
    auto* scroll = new QScrollArea(dock);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidget(content);
    dock->setWidget(scroll);
    window->addDockWidget(area, dock);
    return dock;
}

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
            {"grid", &R::showGrid},
            {"box", &R::showBox},
            {"cutaway", &R::cutawayWalls},
            {"exactDepth", &R::exactSphereDepth}};
}
} // namespace

MainWindow::MainWindow(MainWindowOptions options, QWidget* parent)
    : QMainWindow(parent), options_(std::move(options)) {
    setWindowTitle("octofluid");
    resize(1280, 800);
    if (!options_.factory)
        options_.factory = defaultModelFactory();
    worker_ = new SimulationWorker(options_.factory, this);
    recorder_ = new FrameRecorder(this);
    viewport_ = new ViewportWidget(this);
    viewport_->setObjectName("viewport");
    setCentralWidget(viewport_);

    buildActions();
    buildDocks();
    buildStatusBar();

    connect(worker_, &SimulationWorker::errorOccurred, this, [this](const QString& m) {
        showProblem(m);
        if (capturing_)
            failCapture(m);
    });
    connect(worker_, &SimulationWorker::blowUp, this, [this](const QString& m, qulonglong lastGood) {
        showProblem(
            QString("Simulation stopped: %1 (last good step %2). Press R to reset.").arg(m).arg(lastGood));
        if (capturing_)
            failCapture("simulation blew up: " + m);
    });
    connect(worker_, &SimulationWorker::sceneLoaded, this, [this](const QString& s) {
        clearProblem();
        statusBar()->showMessage("Loaded scene " + s, 4000);
        statsPanel_->clear();
    });
    connect(worker_, &SimulationWorker::bodyAdded, this, [this](int id, const QString& shape) {
        statusBar()->showMessage(QString("Added %1 #%2").arg(shape).arg(id), 4000);
    });
    connect(worker_, &SimulationWorker::bodyRemoved, this,
            [this](int id) { statusBar()->showMessage(QString("Removed body #%1").arg(id), 4000); });
    connect(worker_, &SimulationWorker::targetReached, this, [this] { captureTargetReached_ = true; });
    connect(worker_, &SimulationWorker::exportFinished, this,
            [this](const QString& path) { statusBar()->showMessage("Wrote " + path, 4000); });
    connect(viewport_, &ViewportWidget::glFailed, this, [this](const QString& m) {
        showProblem("OpenGL: " + m);
        if (capturing_)
            failCapture("OpenGL: " + m);
    });
    connect(viewport_, &ViewportWidget::dragStarted, this, [this](int id, const Vec3f& p) {
        WorkerCommand c;
        c.type = WorkerCommand::Type::BeginDrag;
        c.id = id;
        c.a = p;
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
    connect(viewport_, &ViewportWidget::stirRequested, this, [this](const Vec3f& o, const Vec3f& d) {
        WorkerCommand c;
        c.type = WorkerCommand::Type::Stir;
        c.a = o;
        c.b = d;
        c.value = 0.1; // m around the ray
        worker_->post(c);
    });
    connect(recorder_, &FrameRecorder::failed, this, [this](const QString& m) {
        showProblem(m);
        stopRecording();
    });
    connect(recorder_, &FrameRecorder::frameWritten, this, [this](int n) {
        recordStatus_->setText(QString("%1 frames written").arg(n));
        if (recorder_->maxFrames() > 0)
            recordProgress_->setValue(n);
    });

    if (options_.persistSettings) {
        QSettings s;
        restoreGeometry(s.value("window/geometry").toByteArray());
        restoreState(s.value("window/state").toByteArray());
        recordFolder_->setText(s.value("record/folder", recordFolder_->text()).toString());
        render::RenderSettings r = viewport_->settings();
        s.beginGroup("overlays");
        for (auto [key, field] : overlayFields())
            r.*field = s.value(key, r.*field).toBool();
        r.colorMode = render::ColorMode(std::clamp(s.value("colorMode", int(r.colorMode)).toInt(), 0, 4));
        s.endGroup();
        setRenderSettings(r);
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

ParameterPanel* MainWindow::parameterPanel(const QString& group) const {
    auto it = panels_.find(group);
    return it == panels_.end() ? nullptr : it->second;
}

void MainWindow::buildActions() {
    QMenu* file = menuBar()->addMenu("&File");
    file->addAction("&Open scene JSON...", QKeySequence::Open, this, &MainWindow::openSceneFile);
    file->addAction("Export &particles (PLY)...", this, [this] { exportCurrent(false); });
    file->addAction("Export &mesh (OBJ)...", this, [this] { exportCurrent(true); });
    file->addSeparator();
    file->addAction("&Quit", QKeySequence::Quit, this, &QWidget::close);

    QMenu* sim = menuBar()->addMenu("&Simulation");
    actPlay_ = sim->addAction("&Play / pause");
    actPlay_->setObjectName("actPlay");
    actPlay_->setCheckable(true);
    actPlay_->setShortcut(Qt::Key_Space);
    connect(actPlay_, &QAction::triggered, this,
            [this](bool on) { on ? worker_->play() : worker_->pause(); });
    actStep_ = sim->addAction("Single &step", QKeySequence(Qt::Key_S), this, [this] { worker_->stepOnce(); });
    actStep_->setObjectName("actStep");
    actReset_ = sim->addAction("&Reset", QKeySequence(Qt::Key_R), this, [this] {
        clearProblem();
        worker_->reset();
    });
    actReset_->setObjectName("actReset");

    QMenu* view = menuBar()->addMenu("&View");
    auto overlayAction = [&](const QString& text, bool render::RenderSettings::*field, QKeySequence key) {
        QAction* a = view->addAction(text);
        a->setCheckable(true);
        a->setShortcut(key);
        connect(a, &QAction::toggled, this, [this, field](bool on) {
            render::RenderSettings s = viewport_->settings();
            if (s.*field == on)
                return;
            s.*field = on;
            setRenderSettings(s);
        });
        return a;
    };
    actParticlesOverlay_ =
        overlayAction("Fluid &particles", &render::RenderSettings::showParticles, Qt::Key_P);
    actSurfaceOverlay_ =
        overlayAction("&Surface particles", &render::RenderSettings::highlightSurface, Qt::Key_F);
    actMeshOverlay_ = overlayAction("Surface &mesh", &render::RenderSettings::showMesh, Qt::Key_M);
    actBoundaryOverlay_ =
        overlayAction("&Boundary particles", &render::RenderSettings::showBoundary, Qt::Key_B);
    actOctreeOverlay_ = view->addAction("&Octree nodes");
    actOctreeOverlay_->setCheckable(true);
    actOctreeOverlay_->setShortcut(Qt::Key_O);
    connect(actOctreeOverlay_, &QAction::toggled, this, [this](bool on) {
        render::RenderSettings s = viewport_->settings();
        if (s.showOctree() == on)
            return;
        s.octreeSurface = s.octreeInterior = on;
        s.octreeExterior = false; // exterior boxes clutter the view; the dock turns them on
        setRenderSettings(s);
    });
    view->addSeparator();
    view->addAction("Reset &camera", QKeySequence(Qt::Key_C), viewport_, &ViewportWidget::resetCamera);
    QAction* continuous = view->addAction("Continuous repaint (benchmark)");
    continuous->setCheckable(true);
    connect(continuous, &QAction::toggled, this, [this](bool on) { continuousRepaint_ = on; });

    QToolBar* bar = addToolBar("Main");
    bar->setObjectName("toolbar_main");
    bar->addAction(actPlay_);
    bar->addAction(actStep_);
    bar->addAction(actReset_);
    bar->addSeparator();
    auto* tools = new QActionGroup(this);
    const std::tuple<const char*, ViewportWidget::Tool, const char*> toolDefs[] = {
        {"Orbit", ViewportWidget::Tool::Orbit, "Left: orbit, right/shift: pan, wheel: zoom"},
        {"Drag body", ViewportWidget::Tool::DragBody, "Left-drag a rigid body along a camera-facing plane"},
        {"Stir", ViewportWidget::Tool::Stir, "Left-drag to push fluid near the cursor ray"}};
    for (const auto& [name, tool, tip] : toolDefs) {
        QAction* a = bar->addAction(name);
        a->setCheckable(true);
        a->setToolTip(tip);
        a->setChecked(tool == ViewportWidget::Tool::Orbit);
        tools->addAction(a);
        connect(a, &QAction::triggered, this, [this, t = tool] { viewport_->setTool(t); });
    }
    bar->addSeparator();
    bar->addAction(actSurfaceOverlay_);
    bar->addAction(actOctreeOverlay_);
    bar->addAction(actMeshOverlay_);
}

void MainWindow::buildDocks() {
    // Left: the small Scene dock on top, the parameter groups as tabs below it.
    QDockWidget* sceneDock = makeDock(this, "Scene", buildSceneDock(), Qt::LeftDockWidgetArea);
    std::vector<QDockWidget*> tabs;
    for (const char* group : {"Solver", "Boundary", "Surface"}) {
        auto* panel = new ParameterPanel(group, this);
        panels_[group] = panel;
        connect(panel, &ParameterPanel::parameterEdited, this, &MainWindow::onParameterEdited);
        tabs.push_back(makeDock(this, group, panel, Qt::LeftDockWidgetArea));
    }
    tabs.push_back(makeDock(this, "Bodies", buildBodiesDock(), Qt::LeftDockWidgetArea));
    splitDockWidget(sceneDock, tabs.front(), Qt::Vertical);
    for (size_t i = 1; i < tabs.size(); ++i)
        tabifyDockWidget(tabs.front(), tabs[i]);
    tabs.front()->raise();
    resizeDocks({sceneDock, tabs.front()}, {170, 600}, Qt::Vertical);

    overlayPanel_ = new OverlayPanel(this);
    overlayPanel_->setSettings(viewport_->settings());
    connect(overlayPanel_, &OverlayPanel::settingsChanged, this, &MainWindow::setRenderSettings);
    QDockWidget* overlays = makeDock(this, "Overlays", overlayPanel_, Qt::RightDockWidgetArea);
    statsPanel_ = new StatsPanel(this);
    QDockWidget* stats = makeDock(this, "Statistics", statsPanel_, Qt::RightDockWidgetArea);
    QDockWidget* record = makeDock(this, "Recording", buildRecordDock(), Qt::RightDockWidgetArea);
    tabifyDockWidget(stats, record);
    stats->raise();
    resizeDocks({overlays, stats}, {330, 420}, Qt::Vertical);
    resizeDocks({sceneDock, overlays}, {320, 300}, Qt::Horizontal);
    syncViewActions();
}

QWidget* MainWindow::buildSceneDock() {
    auto* w = new QWidget(this);
    auto* form = new QFormLayout(w);
    sceneCombo_ = new QComboBox(w);
    sceneCombo_->setObjectName("sceneCombo");
    for (const auto& s : builtinSceneNames())
        sceneCombo_->addItem(QString::fromStdString(s));
    form->addRow("Scene", sceneCombo_);
    sceneRadius_ = new QDoubleSpinBox(w);
    sceneRadius_->setObjectName("sceneParticleRadius");
    const ParameterInfo* r = findParameter("particleRadius");
    sceneRadius_->setDecimals(4);
    sceneRadius_->setRange(r->minValue, r->maxValue);
    sceneRadius_->setSingleStep(0.001);
    sceneRadius_->setValue(r->defaultValue);
    sceneRadius_->setSuffix(" m");
    sceneRadius_->setToolTip("Particle radius r (resolution): halving r gives 8x the particles");
    form->addRow("Particle radius", sceneRadius_);
    auto* load = new QPushButton("Load scene", w);
    load->setObjectName("sceneLoad");
    connect(load, &QPushButton::clicked, this,
            [this] { loadScene(sceneCombo_->currentText().toStdString()); });
    auto* reset = new QPushButton("Reset", w);
    connect(reset, &QPushButton::clicked, actReset_, &QAction::trigger);
    auto* open = new QPushButton("Open JSON...", w);
    connect(open, &QPushButton::clicked, this, &MainWindow::openSceneFile);
    auto* row = new QHBoxLayout;
    row->addWidget(load);
    row->addWidget(reset);
    form->addRow(row);
    form->addRow(open);
    return w;
}

QWidget* MainWindow::buildBodiesDock() {
    auto* w = new QWidget(this);
    auto* layout = new QVBoxLayout(w);
    bodiesList_ = new QListWidget(w);
    bodiesList_->setObjectName("bodiesList");
    layout->addWidget(bodiesList_);
    const bool hasBodyParameters = std::any_of(parameterTable().begin(), parameterTable().end(),
                                               [](const auto& p) { return p.group == "Bodies"; });
    if (hasBodyParameters) { // the "Bodies" group of the parameter table, when the core adds one
        auto* panel = new ParameterPanel("Bodies", w);
        panels_["Bodies"] = panel;
        connect(panel, &ParameterPanel::parameterEdited, this, &MainWindow::onParameterEdited);
        layout->addWidget(panel);
    }
    // New bodies: built-in shapes of the core (Simulation::addBody), above the fluid under the
    // last cursor position in the viewport.
    auto* form = new QFormLayout;
    bodySize_ = new QDoubleSpinBox(w);
    bodySize_->setObjectName("bodySize");
    bodySize_->setRange(0.0, 2.0);
    bodySize_->setDecimals(3);
    bodySize_->setSingleStep(0.01);
    bodySize_->setSuffix(" m");
    bodySize_->setSpecialValueText("auto");
    bodySize_->setToolTip("Edge / diameter of new bodies (auto: 12 % of the container, at least 8 r)");
    form->addRow("Size", bodySize_);
    bodyDensity_ = new QDoubleSpinBox(w);
    bodyDensity_->setObjectName("bodyDensity");
    bodyDensity_->setRange(1.0, 20000.0);
    bodyDensity_->setValue(500.0);
    bodyDensity_->setSuffix(" kg/m3");
    bodyDensity_->setToolTip("Density of new bodies (water: 1000; lighter bodies float)");
    form->addRow("Density", bodyDensity_);
    layout->addLayout(form);
    auto* grid = new QGridLayout;
    const char* shapes[] = {"box", "sphere", "cylinder", "armadillo"};
    for (int i = 0; i < 4; ++i) {
        auto* b = new QPushButton(QString("Add %1").arg(shapes[i]), w);
        b->setObjectName(QString("add-%1").arg(shapes[i]));
        b->setToolTip("Adds the body above the fluid under the last cursor position in the viewport");
        const std::string shape = shapes[i];
        connect(b, &QPushButton::clicked, this, [this, shape] { addBody(shape); });
        addBodyButtons_.push_back(b);
        grid->addWidget(b, i / 2, i % 2);
    }
    deleteBodyButton_ = new QPushButton("Delete selected", w);
    deleteBodyButton_->setObjectName("deleteBody");
    connect(deleteBodyButton_, &QPushButton::clicked, this, &MainWindow::deleteSelectedBody);
    grid->addWidget(deleteBodyButton_, 2, 0, 1, 2);
    layout->addLayout(grid);
    layout->addWidget(new QLabel("Drag bodies with the \"Drag body\" tool.", w));
    return w;
}

void MainWindow::addBody(const std::string& shape) {
    const auto frame = worker_->latestFrame();
    if (!frame || !frame->snapshot)
        return;
    if (!frame->bodiesSupported) {
        showProblem("adding bodies needs the core Simulation (this model has none)");
        return;
    }
    const Aabb& d = frame->snapshot->domain;
    const float r = float(frame->parameters.get("particleRadius"));
    float size = float(bodySize_->value());
    if (size <= 0.0f) {
        const float extent = d.empty() ? 0.5f : (d.max - d.min).minCoeff();
        size = std::max(0.12f * extent, 8.0f * r); // the core needs bodies thicker than 4 r
    }
    WorkerCommand c;
    c.type = WorkerCommand::Type::AddBody;
    c.text = shape;
    c.a = viewport_->spawnPoint(size);
    c.value = size;
    c.value2 = bodyDensity_->value();
    worker_->post(c);
}

void MainWindow::deleteSelectedBody() {
    const QListWidgetItem* item = bodiesList_->currentItem();
    if (!item) {
        statusBar()->showMessage("Select a body in the list first", 3000);
        return;
    }
    WorkerCommand c;
    c.type = WorkerCommand::Type::RemoveBody;
    c.id = item->data(Qt::UserRole).toInt();
    worker_->post(c);
}

QWidget* MainWindow::buildRecordDock() {
    auto* w = new QWidget(this);
    auto* form = new QFormLayout(w);
    recordFolder_ = new QLineEdit(QDir::home().filePath("octofluid-frames"), w);
    recordFolder_->setObjectName("recordFolder");
    auto* browse = new QPushButton("...", w);
    browse->setMaximumWidth(32);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString dir =
            QFileDialog::getExistingDirectory(this, "Recording folder", recordFolder_->text());
        if (!dir.isEmpty())
            recordFolder_->setText(dir);
    });
    auto* folderRow = new QHBoxLayout;
    folderRow->addWidget(recordFolder_);
    folderRow->addWidget(browse);
    form->addRow("Folder", folderRow);
    recordWidth_ = new QSpinBox(w);
    recordHeight_ = new QSpinBox(w);
    recordWidth_->setRange(16, 8192);
    recordHeight_->setRange(16, 8192);
    recordWidth_->setValue(1280);
    recordHeight_->setValue(720);
    auto* sizeRow = new QHBoxLayout;
    sizeRow->addWidget(recordWidth_);
    sizeRow->addWidget(new QLabel("x", w));
    sizeRow->addWidget(recordHeight_);
    form->addRow("Size (px)", sizeRow);
    recordFrames_ = new QSpinBox(w);
    recordFrames_->setRange(0, 1000000);
    recordFrames_->setSpecialValueText("until stopped");
    form->addRow("Frames", recordFrames_);
    recordParticles_ = new QCheckBox("Particles (PLY) per frame", w);
    recordMesh_ = new QCheckBox("Surface mesh (OBJ) per frame", w);
    form->addRow(recordParticles_);
    form->addRow(recordMesh_);
    recordButton_ = new QPushButton("Start recording", w);
    recordButton_->setObjectName("recordButton");
    connect(recordButton_, &QPushButton::clicked, this, [this] {
        if (recorder_->isRecording()) {
            stopRecording();
            return;
        }
        QString error;
        if (!startRecording(recordFolder_->text(), QSize(recordWidth_->value(), recordHeight_->value()),
                            recordFrames_->value(), &error))
            showProblem(error);
    });
    form->addRow(recordButton_);
    recordProgress_ = new QProgressBar(w);
    recordProgress_->setVisible(false);
    form->addRow(recordProgress_);
    recordStatus_ = new QLabel("Not recording", w);
    form->addRow(recordStatus_);
    return w;
}

void MainWindow::buildStatusBar() {
    problemLabel_ = new QLabel(this);
    problemLabel_->setObjectName("problemLabel");
    problemLabel_->setStyleSheet("color: #ff6060; font-weight: bold;");
    problemReset_ = new QPushButton("Reset", this);
    problemReset_->setVisible(false);
    connect(problemReset_, &QPushButton::clicked, actReset_, &QAction::trigger);
    statusBar()->addWidget(problemLabel_, 1);
    statusBar()->addWidget(problemReset_);
    for (QLabel** l : {&timeLabel_, &countsLabel_, &stepsLabel_, &fpsLabel_}) {
        *l = new QLabel(this);
        statusBar()->addPermanentWidget(*l);
    }
    fpsLabel_->setObjectName("fpsLabel");
    countsLabel_->setObjectName("countsLabel");
}

void MainWindow::setRenderSettings(const render::RenderSettings& settings) {
    viewport_->setSettings(settings);
    if (overlayPanel_)
        overlayPanel_->setSettings(settings);
    syncViewActions();
}

void MainWindow::syncViewActions() {
    const render::RenderSettings& s = viewport_->settings();
    const std::pair<QAction*, bool> states[] = {{actParticlesOverlay_, s.showParticles},
                                                {actSurfaceOverlay_, s.highlightSurface},
                                                {actMeshOverlay_, s.showMesh},
                                                {actBoundaryOverlay_, s.showBoundary},
                                                {actOctreeOverlay_, s.showOctree()}};
    for (auto [a, on] : states) {
        const QSignalBlocker b(a);
        a->setChecked(on);
    }
}

void MainWindow::loadScene(const std::string& scene) {
    std::vector<std::string> overrides = options_.overrides;
    const ParameterInfo* r = findParameter("particleRadius");
    if (sceneRadius_ && sceneRadius_->value() != r->defaultValue)
        overrides.push_back("particleRadius=" + std::to_string(sceneRadius_->value()));
    panelsScene_.clear();
    worker_->loadScene(scene, overrides);
    if (options_.persistSettings) {
        // User-edited parameters of the last session, applied on top of the scene's own.
        QSettings s;
        s.beginGroup("parameters");
        for (const QString& key : s.childKeys())
            worker_->setParameter(key.toStdString(), s.value(key).toDouble());
    }
    const int index = sceneCombo_ ? sceneCombo_->findText(QString::fromStdString(scene)) : -1;
    if (index >= 0) {
        const QSignalBlocker b(sceneCombo_);
        sceneCombo_->setCurrentIndex(index);
    }
}

void MainWindow::openSceneFile() {
    const QString path = QFileDialog::getOpenFileName(this, "Open scene", QString(), "Scene (*.json)");
    if (!path.isEmpty())
        loadScene(path.toStdString());
}

void MainWindow::exportCurrent(bool mesh) {
    const QString path = QFileDialog::getSaveFileName(this, mesh ? "Export surface mesh" : "Export particles",
                                                      QString(), mesh ? "OBJ (*.obj)" : "PLY (*.ply)");
    if (path.isEmpty())
        return;
    WorkerCommand c;
    c.type = mesh ? WorkerCommand::Type::ExportMesh : WorkerCommand::Type::ExportParticles;
    c.text = path.toStdString();
    worker_->post(c);
}

void MainWindow::onParameterEdited(const QString& name, double value) {
    worker_->setParameter(name.toStdString(), value);
    if (options_.persistSettings)
        QSettings().setValue("parameters/" + name, value);
    const ParameterInfo* info = findParameter(name.toStdString());
    if (info && info->needsReset)
        statusBar()->showMessage(QString::fromStdString(info->label) + ": applies after reset", 4000);
    if (name == "leafSize" && value > 0.0) {
        // ALGORITHMS.md 5: a leaf edge above 2r/sqrt(3) can open holes in one-particle sheets.
        const auto frame = worker_->latestFrame();
        const double r =
            frame ? frame->parameters.get("particleRadius") : findParameter("particleRadius")->defaultValue;
        if (value > 2.0 * r / std::sqrt(3.0))
            statusBar()->showMessage(
                QString("Leaf edge L = %1 m > 2r/sqrt(3) = %2 m: thin sheets may show holes")
                    .arg(value)
                    .arg(2.0 * r / std::sqrt(3.0)),
                8000);
    }
}

void MainWindow::poll() {
    PublishedFramePtr frame = worker_->latestFrame();
    if (frame && frame->serial != shownSerial_)
        present(frame);
    else if (continuousRepaint_)
        viewport_->update();
    fpsLabel_->setText(QString("%1 fps (paint %2 ms)")
                           .arg(viewport_->framesPerSecond(), 0, 'f', 1)
                           .arg(viewport_->lastPaintMs(), 0, 'f', 1));
    if (capturing_ && captureTargetReached_ && frame && frame->snapshot &&
        frame->snapshot->time >= captureTime_ - 1e-9 && frame->serial == shownSerial_) {
        capturing_ = false;
        QImage image =
            captureSize_.isValid() ? viewport_->renderToImage(captureSize_) : viewport_->grabFramebuffer();
        if (image.isNull())
            return failCapture("the viewport could not be rendered");
        if (!image.save(captureFile_))
            return failCapture("cannot write screenshot '" + captureFile_ + "'");
        emit captureFinished(0, QString("saved %1 (t = %2 s, %3 steps)")
                                    .arg(captureFile_)
                                    .arg(frame->snapshot->time)
                                    .arg(qulonglong(frame->snapshot->step)));
    }
}

void MainWindow::present(const PublishedFramePtr& frame) {
    shownSerial_ = frame->serial;
    viewport_->setFrame(frame);
    if (!frame->snapshot)
        return;
    const FrameSnapshot& f = *frame->snapshot;
    if (panelsScene_ != frame->scene) {
        // First frame of a new scene: show its parameters in the docks.
        panelsScene_ = frame->scene;
        for (auto& [group, panel] : panels_)
            panel->setValues(frame->parameters);
        const QSignalBlocker b(sceneRadius_);
        sceneRadius_->setValue(frame->parameters.get("particleRadius"));
    }
    {
        const QSignalBlocker b(actPlay_);
        actPlay_->setChecked(frame->playing);
    }
    stepsLabel_->setText(QString("%1 steps/s | %2\u00d7 real time")
                             .arg(frame->stepsPerSecond, 0, 'f', 1)
                             .arg(frame->realTimeFactor, 0, 'g', 2));
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
        !frame->playing) { // a table refresh per frame would cost more than the paint
        statsPanel_->update(f, frame->stepsPerSecond, frame->lastStepMs, frame->realTimeFactor);
        lastStatsMs_ = now;
    }
    QString bodyIds; // rebuild the list only when the set of bodies changed (keeps the selection)
    for (const auto& b : f.bodies)
        bodyIds += QString::number(b.id) + ',';
    if (bodyIds != shownBodyIds_) {
        shownBodyIds_ = bodyIds;
        const int selected =
            bodiesList_->currentItem() ? bodiesList_->currentItem()->data(Qt::UserRole).toInt() : -1;
        bodiesList_->clear();
        for (const auto& b : f.bodies) {
            auto* item = new QListWidgetItem(QString("#%1 %2  (%3 kg/m3%4)")
                                                 .arg(b.id)
                                                 .arg(QString::fromStdString(b.name))
                                                 .arg(b.density)
                                                 .arg(b.kinematic ? ", kinematic" : ""),
                                             bodiesList_);
            item->setData(Qt::UserRole, b.id);
            if (b.id == selected)
                bodiesList_->setCurrentItem(item);
        }
    }
    for (QPushButton* b : addBodyButtons_)
        b->setEnabled(frame->bodiesSupported);
    deleteBodyButton_->setEnabled(frame->bodiesSupported && !f.bodies.empty());
    if (!f.status.empty() && lastProblem_.isEmpty())
        showProblem(QString::fromStdString(f.status));
    if (recorder_->isRecording())
        recordFrame();
    emit framePresented(frame->serial);
}

void MainWindow::showProblem(const QString& message) {
    lastProblem_ = message;
    problemLabel_->setText(message);
    problemLabel_->setToolTip(message);
    problemReset_->setVisible(true);
    qWarning("octofluid: %s", qPrintable(message));
}

void MainWindow::clearProblem() {
    lastProblem_.clear();
    problemLabel_->clear();
    problemReset_->setVisible(false);
}

bool MainWindow::startRecording(const QString& folder, const QSize& size, int frames, QString* error) {
    QString message;
    if (!recorder_->start(folder, size, frames, &message)) {
        if (error)
            *error = message;
        showProblem(message);
        return false;
    }
    if (options_.persistSettings)
        QSettings().setValue("record/folder", folder);
    recordFolder_->setText(folder);
    recordButton_->setText("Stop recording");
    recordProgress_->setVisible(frames > 0);
    recordProgress_->setRange(0, std::max(frames, 1));
    recordProgress_->setValue(0);
    recordStatus_->setText("Recording to " + folder);
    return true;
}

void MainWindow::stopRecording() {
    const int written = recorder_->framesWritten();
    const bool was = recorder_->isRecording() || written > 0;
    recorder_->stop();
    recordButton_->setText("Start recording");
    recordProgress_->setVisible(false);
    if (was)
        finishRecording(recorder_->framesWritten());
}

void MainWindow::recordFrame() {
    const int index = recorder_->framesSubmitted();
    const QImage image = viewport_->renderToImage(recorder_->frameSize());
    if (!recorder_->submit(image)) {
        if (recorder_->maxFrames() > 0 && recorder_->framesSubmitted() >= recorder_->maxFrames())
            stopRecording();
        return;
    }
    const QString base =
        QDir(recorder_->folder()).filePath(QString("%1_%2").arg("%1").arg(index, 6, 10, QChar('0')));
    if (recordParticles_->isChecked()) {
        WorkerCommand c;
        c.type = WorkerCommand::Type::ExportParticles;
        c.text = base.arg("particles").toStdString() + ".ply";
        worker_->post(c);
    }
    if (recordMesh_->isChecked()) {
        WorkerCommand c;
        c.type = WorkerCommand::Type::ExportMesh;
        c.text = base.arg("mesh").toStdString() + ".obj";
        worker_->post(c);
    }
}

void MainWindow::finishRecording(int frames) {
    recordStatus_->setText(QString("Recorded %1 frames to %2").arg(frames).arg(recorder_->folder()));
    const QString ffmpeg = QStandardPaths::findExecutable("ffmpeg");
    if (ffmpeg.isEmpty() || frames < 2 || capturing_ || !isVisible() ||
        qEnvironmentVariableIsSet("OCTO_NO_DIALOGS"))
        return;
    if (QMessageBox::question(this, "Encode video",
                              QString("Encode the %1 frames into an MP4 with ffmpeg?").arg(frames)) !=
        QMessageBox::Yes)
        return;
    const QString out = QDir(recorder_->folder()).filePath("octofluid.mp4");
    auto* process = new QProcess(this);
    connect(process, &QProcess::finished, this, [this, process, out](int code) {
        statusBar()->showMessage(
            code == 0 ? "Wrote " + out : "ffmpeg failed: " + process->readAllStandardError(), 8000);
        process->deleteLater();
    });
    process->start(ffmpeg,
                   {"-y", "-framerate", "30", "-i", QDir(recorder_->folder()).filePath("frame_%06d.png"),
                    "-pix_fmt", "yuv420p", "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", out});
}

void MainWindow::startCapture(const QString& file, int frames, double frameSeconds, QSize size,
                              double timeoutSeconds) {
    capturing_ = true;
    if (timeoutSeconds > 0.0) {
        QTimer::singleShot(int(timeoutSeconds * 1000.0), this, [this, timeoutSeconds] {
            const auto frame = worker_->latestFrame();
            failCapture(QString("capture timed out after %1 s at t = %2 s (step %3) of %4 s")
                            .arg(timeoutSeconds)
                            .arg(frame && frame->snapshot ? frame->snapshot->time : 0.0)
                            .arg(frame && frame->snapshot ? qulonglong(frame->snapshot->step) : 0)
                            .arg(captureTime_));
        });
    }
    captureFile_ = file;
    captureSize_ = size;
    captureTime_ = std::max(0, frames) * frameSeconds;
    captureTargetReached_ = false;
    if (frames <= 0) {
        captureTargetReached_ = true;
        worker_->pause();
    } else {
        worker_->runUntilTime(captureTime_);
    }
}

void MainWindow::failCapture(const QString& message) {
    if (!capturing_)
        return;
    capturing_ = false;
    emit captureFinished(1, message);
}

void MainWindow::closeEvent(QCloseEvent* e) {
    if (options_.persistSettings) {
        QSettings s;
        s.setValue("window/geometry", saveGeometry());
        s.setValue("window/state", saveState());
        const render::RenderSettings& r = viewport_->settings();
        s.beginGroup("overlays");
        for (auto [key, field] : overlayFields())
            s.setValue(key, r.*field);
        s.setValue("colorMode", int(r.colorMode));
        s.endGroup();
    }
    recorder_->stop();
    QMainWindow::closeEvent(e);
}

} // namespace octo::app
