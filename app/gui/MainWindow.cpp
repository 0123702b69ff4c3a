#include "MainWindow.h"

#include "BodiesDock.h"
#include "InputPolicy.h"
#include "OverlayPanel.h"
#include "ParameterPanel.h"
#include "RecordingDock.h"
#include "ScriptedCapture.h"
#include "StatsPanel.h"
#include "scene/SceneLibrary.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPainter>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QStatusBar>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <filesystem>

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
            {"octreeDepthCue", &R::octreeDepthCue},
            {"grid", &R::showGrid},
            {"box", &R::showBox},
            {"cutaway", &R::cutawayWalls},
            {"exactDepth", &R::exactSphereDepth},
            {"legend", &R::showLegend},
            {"bodyLabels", &R::showBodyLabels}};
}

const char* presetLabels[] = {"Interactive (\u2264 9 k particles)", "Paper (scene file's r)",
                              "High (2\u00D7 paper)", "Custom r"};

bool isSceneFile(const std::string& scene) {
    return scene.size() > 5 && scene.substr(scene.size() - 5) == ".json";
}

/// The scene's description (built-in name or file); throws SceneError naming the problem.
SceneDescription describeScene(const std::string& scene) {
    return isSceneFile(scene) ? loadSceneFile(scene) : SceneLibrary::load(scene);
}

/// Particle radius of a preset for a scene (0: no opinion).
double presetRadius(ResolutionPreset preset, const SceneDescription& d) {
    switch (preset) {
    case ResolutionPreset::Interactive:
        try {
            // Never finer than the file: a small scene keeps its own resolution.
            return std::max(double(d.radiusForParticleCount(kInteractiveParticleCount)),
                            double(d.particleRadius));
        } catch (const SceneError&) {
            return 0.0; // no box/sphere volume (a mesh-only fluid): keep the file's radius
        }
    case ResolutionPreset::High:
        return d.particleRadius / std::cbrt(2.0);
    case ResolutionPreset::Paper:
        return d.particleRadius;
    case ResolutionPreset::Custom:
        return 0.0;
    }
    return 0.0;
}

/// Saved values of resolution-dependent parameters (lengths) are kept per particle radius.
bool dependsOnResolution(const ParameterInfo& p) {
    return p.unit == "m";
}
QString radiusKey(double r) {
    return QString("r%1").arg(r, 0, 'g', 6);
}
} // namespace

QString MainWindow::sceneFolder() {
    return QString::fromStdString(sceneDirectory());
}

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
    column->addWidget(viewport_, 1);
    problemBanner_->setVisible(false);
    setCentralWidget(central);

    buildActions();
    buildDocks();
    buildHelpMenu();
    buildStatusBar();
    InputPolicy::applyFocusPolicy(this);
    qApp->installEventFilter(new InputPolicy(viewport_, this));

    connect(worker_, &SimulationWorker::errorOccurred, this, [this](const QString& m) {
        if (!requestedScene_.empty() && requestedScene_ != currentScene_ && !currentScene_.empty()) {
            // The worker could not build the requested scene and kept the running one.
            showProblem(
                QString("Could not load %1: %2 (still running %3)")
                    .arg(QString::fromStdString(requestedScene_), m, QString::fromStdString(currentScene_)));
            requestedScene_ = currentScene_;
            const int index = sceneCombo_->findData(QString::fromStdString(currentScene_));
            const QSignalBlocker b(sceneCombo_);
            sceneCombo_->setCurrentIndex(index);
        } else {
            showProblem(m);
        }
        capture_->fail(m);
    });
    connect(worker_, &SimulationWorker::blowUp, this, [this](const QString& m, qulonglong lastGood) {
        showProblem(
            QString("Simulation stopped: %1 (last good step %2). Press R to reset.").arg(m).arg(lastGood),
            true);
        capture_->fail("simulation blew up: " + m);
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
    connect(worker_, &SimulationWorker::exportFinished, this,
            [this](const QString& path) { statusBar()->showMessage("Wrote " + path, 4000); });
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

    if (options_.persistSettings) {
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

ParameterPanel* MainWindow::parameterPanel(const QString& group) const {
    auto it = panels_.find(group);
    return it == panels_.end() ? nullptr : it->second;
}

void MainWindow::buildActions() {
    QMenu* file = menuBar()->addMenu("&File");
    file->addAction("&Open scene JSON...", QKeySequence::Open, this, [this] {
        const QString path =
            QFileDialog::getOpenFileName(this, "Open scene", sceneFolder(), "Scene (*.json)");
        if (!path.isEmpty())
            openSceneFile(path);
    });
    file->addAction("Export &particles (PLY)...", this, [this] { exportCurrent(false); });
    file->addAction("Export &mesh (OBJ)...", this, [this] { exportCurrent(true); });
    file->addSeparator();
    file->addAction("Restore &defaults", this, &MainWindow::restoreDefaults);
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
    actSurfaceOverlay_ = overlayAction("&Surface particles (alone when fluid particles are off)",
                                       &render::RenderSettings::highlightSurface, Qt::Key_F);
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
        s.octreeSurface = on; // surface leaves: what the octree is built for (Fig. 5c)
        s.octreeInterior = s.octreeExterior = false;
        setRenderSettings(s);
    });
    actDiagnostic_ = view->addAction("&Diagnostic shading (flat mesh, dark background)");
    actDiagnostic_->setCheckable(true);
    actDiagnostic_->setShortcut(Qt::Key_D);
    connect(actDiagnostic_, &QAction::toggled, this, [this](bool on) {
        render::RenderSettings s = viewport_->settings();
        s.shading = on ? render::Shading::Diagnostic : render::Shading::Water;
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
    const std::tuple<const char*, ViewportWidget::Tool, const char*, Qt::Key> toolDefs[] = {
        {"Orbit", ViewportWidget::Tool::Orbit, "Left: orbit, right/shift: pan, wheel: zoom (1)", Qt::Key_1},
        {"Drag body", ViewportWidget::Tool::DragBody, "Left-drag a rigid body toward the cursor (2)",
         Qt::Key_2},
        {"Stir", ViewportWidget::Tool::Stir,
         "Hold the left button to push fluid around the cursor, move to drag it along (3)", Qt::Key_3}};
    for (const auto& [name, tool, tip, key] : toolDefs) {
        QAction* a = bar->addAction(name);
        a->setObjectName(QString("tool_%1").arg(int(tool)));
        a->setCheckable(true);
        a->setToolTip(tip);
        a->setShortcut(key);
        a->setChecked(tool == ViewportWidget::Tool::Orbit);
        tools->addAction(a);
        sim->addAction(a);
        connect(a, &QAction::triggered, this, [this, t = tool] { viewport_->setTool(t); });
        toolActions_.push_back(a);
    }
    bar->addSeparator();
    bar->addAction(actSurfaceOverlay_);
    bar->addAction(actOctreeOverlay_);
    bar->addAction(actMeshOverlay_);
    bar->addAction(actDiagnostic_);
    // Short words on the toolbar (the menus keep the full names, the tooltips say the rest).
    const std::pair<QAction*, const char*> shortNames[] = {{actPlay_, "Play"},
                                                           {actStep_, "Step"},
                                                           {actReset_, "Reset"},
                                                           {actSurfaceOverlay_, "Surface pts"},
                                                           {actOctreeOverlay_, "Octree"},
                                                           {actMeshOverlay_, "Mesh"},
                                                           {actDiagnostic_, "Diagnostic"}};
    for (auto [a, name] : shortNames) {
        a->setToolTip(QString(a->text()).remove('&') + " (" + a->shortcut().toString() + ")");
        a->setIconText(name);
    }
}

void MainWindow::buildHelpMenu() {
    QMenu* help = menuBar()->addMenu("&Help");
    QAction* keys = help->addAction("&Keys and mouse", QKeySequence::HelpContents, this, [this] {
        QMessageBox box(this);
        box.setWindowTitle("Keys and mouse");
        box.setTextFormat(Qt::RichText);
        box.setText(
            "<table cellspacing=4>"
            "<tr><td><b>Space</b></td><td>play / pause</td></tr>"
            "<tr><td><b>S</b> / <b>R</b></td><td>single step / reset the scene</td></tr>"
            "<tr><td><b>1</b> / <b>2</b> / <b>3</b></td><td>tool: orbit / drag body / stir</td></tr>"
            "<tr><td><b>P</b> <b>F</b> <b>M</b> <b>B</b> <b>O</b></td><td>fluid particles, surface particles "
            "(alone when P is off), mesh, boundary, octree</td></tr>"
            "<tr><td><b>D</b></td><td>diagnostic shading (flat mesh) / water</td></tr>"
            "<tr><td><b>C</b></td><td>reset the camera</td></tr>"
            "<tr><td><b>Esc</b></td><td>leave a number field (discarding what was typed)</td></tr>"
            "<tr><td colspan=2><hr></td></tr>"
            "<tr><td><b>Left drag</b></td><td>orbit; with the drag tool: pull a body (rubber band; it "
            "follows in about a second of wall time; a press beside every body says \"No body here\"), "
            "with the stir tool: push the fluid inside the ring (still) or drag it along (moving)</td></tr>"
            "<tr><td><b>Right drag</b> / <b>Shift+left</b></td><td>pan</td></tr>"
            "<tr><td><b>Wheel</b></td><td>zoom (in the docks: scrolls; edits only a focused field)</td></tr>"
            "</table>");
        box.exec();
    });
    keys->setObjectName("actKeys");
    help->addAction("&About octofluid", this, [this] {
        QMessageBox::about(
            this, "About octofluid",
            "<h3>octofluid</h3>"
            "<p>Interactive PCISPH fluids with two-way coupled rigid bodies and an adaptive-octree "
            "surface.</p>"
            "<p><b>Methods</b><br>"
            "B. Solenthaler, R. Pajarola: Predictive-corrective incompressible SPH. SIGGRAPH 2009.<br>"
            "N. Akinci et al.: Versatile rigid-fluid coupling for incompressible SPH. SIGGRAPH 2012.<br>"
            "X. Shao et al.: An adaptive octree for SPH surface reconstruction. 2016.<br>"
            "S. Marrone et al.: Fast free-surface detection and level-set function definition in SPH "
            "solvers. J. Comput. Phys. 2010.<br>"
            "B. Solenthaler, J. Schl\u00E4fli, R. Pajarola: A unified particle model for fluid-solid "
            "interactions. 2007.<br>"
            "J. C. Martin, W. J. Moyce: dam-break experiment, 1952 (validation).</p>"
            "<p><b>Data</b><br>Armadillo: Stanford 3D Scanning Repository (Stanford University Computer "
            "Graphics Laboratory), low-poly version.</p>"
            "<p>Built with Qt, Eigen, oneTBB, GLM and nlohmann/json.</p>");
    });
}

void MainWindow::buildDocks() {
    // Left: the Scene dock on top, the parameter groups (from the table) as tabs below it.
    QDockWidget* sceneDock = makeDock(this, "Scene", buildSceneDock(), Qt::LeftDockWidgetArea);
    std::vector<QDockWidget*> tabs;
    std::vector<std::string> groups;
    for (const ParameterInfo& p : parameterTable())
        if (std::find(groups.begin(), groups.end(), p.group) == groups.end())
            groups.push_back(p.group);
    for (const std::string& g : groups) {
        const QString group = QString::fromStdString(g);
        auto* panel = new ParameterPanel(group, this);
        panels_[group] = panel;
        connect(panel, &ParameterPanel::parameterEdited, this, &MainWindow::onParameterEdited);
        connect(panel, &ParameterPanel::valueAdjusted, this,
                [this](const QString&, const QString& m) { showNotice(m); });
        tabs.push_back(makeDock(this, group, panel, Qt::LeftDockWidgetArea));
    }
    bodiesDock_ = new BodiesDock(worker_, viewport_, this);
    connect(bodiesDock_, &BodiesDock::problem, this, [this](const QString& m) { showProblem(m); });
    connect(bodiesDock_, &BodiesDock::notice, this, [this](const QString& m) { showNotice(m, 3000); });
    tabs.push_back(makeDock(this, "Bodies", bodiesDock_, Qt::LeftDockWidgetArea));
    splitDockWidget(sceneDock, tabs.front(), Qt::Vertical);
    for (size_t i = 1; i < tabs.size(); ++i)
        tabifyDockWidget(tabs.front(), tabs[i]);
    tabs.front()->raise();
    // The Scene dock tall enough for all of its rows (Restore defaults was half hidden).
    const int sceneHeight = sceneDock->widget()->findChild<QWidget*>("panel_Scene")->sizeHint().height() + 40;
    resizeDocks({sceneDock, tabs.front()}, {sceneHeight, 760 - sceneHeight}, Qt::Vertical);

    overlayPanel_ = new OverlayPanel(this);
    overlayPanel_->setSettings(viewport_->settings());
    connect(overlayPanel_, &OverlayPanel::settingsChanged, this, &MainWindow::setRenderSettings);
    QDockWidget* overlays = makeDock(this, "Overlays", overlayPanel_, Qt::RightDockWidgetArea);
    statsPanel_ = new StatsPanel(this);
    QDockWidget* stats = makeDock(this, "Statistics", statsPanel_, Qt::RightDockWidgetArea);
    recordingDock_ = new RecordingDock(recorder_, viewport_, worker_, this);
    connect(recordingDock_, &RecordingDock::problem, this, [this](const QString& m) { showProblem(m); });
    connect(recordingDock_, &RecordingDock::started, this, [this](const QString& folder) {
        if (options_.persistSettings)
            QSettings().setValue("record/folder", folder);
    });
    QDockWidget* record = makeDock(this, "Recording", recordingDock_, Qt::RightDockWidgetArea);
    tabifyDockWidget(stats, record);
    stats->raise();
    resizeDocks({overlays, stats}, {360, 390}, Qt::Vertical);
    resizeDocks({sceneDock, overlays}, {300, 280}, Qt::Horizontal);
    leftDock_ = sceneDock;
    rightDock_ = overlays;
    parameterDock_ = tabs.front();
    syncViewActions();
}

QWidget* MainWindow::buildSceneDock() {
    auto* w = new QWidget(this);
    w->setObjectName("panel_Scene");
    auto* form = new QFormLayout(w);
    sceneCombo_ = new QComboBox(w);
    sceneCombo_->setObjectName("sceneCombo");
    for (const auto& s : SceneLibrary::names()) // the core's scene library: no test-only models
        sceneCombo_->addItem(QString::fromStdString(s), QString::fromStdString(s));
    sceneCombo_->setToolTip("Built-in scenes (" + sceneFolder() + "); choosing one loads it");
    form->addRow("Scene", sceneCombo_);
    connect(sceneCombo_, &QComboBox::activated, this,
            [this](int i) { loadScene(sceneCombo_->itemData(i).toString().toStdString()); });
    // Combos sized by a few characters, not their longest entry: the dock stays narrow at 900 px.
    sceneCombo_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    sceneCombo_->setMinimumContentsLength(10);
    presetCombo_ = new QComboBox(w);
    presetCombo_->setObjectName("presetCombo");
    presetCombo_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    presetCombo_->setMinimumContentsLength(10);
    for (const char* label : presetLabels)
        presetCombo_->addItem(QString::fromUtf8(label));
    presetCombo_->setToolTip("Resolution: Interactive runs live on 2 cores; Paper uses the scene file's "
                             "particle radius (as the CLI does); High doubles its particle count");
    form->addRow("Resolution", presetCombo_);
    connect(presetCombo_, &QComboBox::activated, this, [this](int i) { setPreset(ResolutionPreset(i)); });
    sceneRadius_ = new QDoubleSpinBox(w);
    sceneRadius_->setObjectName("sceneParticleRadius");
    const ParameterInfo* r = findParameter("particleRadius");
    sceneRadius_->setDecimals(4);
    sceneRadius_->setRange(r->minValue, r->maxValue);
    sceneRadius_->setSingleStep(0.001);
    sceneRadius_->setValue(r->defaultValue);
    sceneRadius_->setSuffix(" m");
    sceneRadius_->setKeyboardTracking(false);
    sceneRadius_->setToolTip("Particle radius r (resolution): halving r gives 8x the particles. "
                             "Editing it reloads the scene at that r.");
    form->addRow("Particle radius", sceneRadius_);
    connect(sceneRadius_, &QDoubleSpinBox::valueChanged, this, [this](double) {
        preset_ = ResolutionPreset::Custom;
        const QSignalBlocker b(presetCombo_);
        presetCombo_->setCurrentIndex(int(ResolutionPreset::Custom));
        if (!currentScene_.empty())
            loadScene(currentScene_);
    });
    sceneInfo_ = new QLabel(w);
    sceneInfo_->setObjectName("sceneInfo");
    sceneInfo_->setWordWrap(true);
    auto* reset = new QPushButton("Reset", w);
    reset->setToolTip("Restart the scene from its initial state (R)");
    connect(reset, &QPushButton::clicked, actReset_, &QAction::trigger);
    auto* open = new QPushButton("Open JSON...", w);
    connect(open, &QPushButton::clicked, this, [this] {
        const QString path =
            QFileDialog::getOpenFileName(this, "Open scene", sceneFolder(), "Scene (*.json)");
        if (!path.isEmpty())
            openSceneFile(path);
    });
    auto* defaults = new QPushButton("Restore defaults", w);
    defaults->setObjectName("restoreDefaults");
    defaults->setToolTip("Forget saved parameter values and reload the scene with its own");
    connect(defaults, &QPushButton::clicked, this, &MainWindow::restoreDefaults);
    auto* row = new QHBoxLayout;
    row->addWidget(reset);
    row->addWidget(open);
    form->addRow(row);
    form->addRow(defaults);
    // Last: the scene's size and description may be long; the buttons above stay in view.
    form->addRow(sceneInfo_);
    return w;
}

void MainWindow::buildStatusBar() {
    problemLabel_ = new QLabel(problemBanner_);
    problemLabel_->setObjectName("problemLabel");
    problemLabel_->setStyleSheet("color: #ff8080; font-weight: bold;");
    problemLabel_->setWordWrap(true); // the whole message, however long
    problemLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    problemReset_ = new QPushButton("Reset", problemBanner_);
    problemReset_->setObjectName("problemReset");
    problemReset_->setVisible(false);
    connect(problemReset_, &QPushButton::clicked, actReset_, &QAction::trigger);
    auto* dismiss = new QPushButton("Dismiss", problemBanner_);
    connect(dismiss, &QPushButton::clicked, this, [this] { problemBanner_->setVisible(false); });
    auto* row = static_cast<QHBoxLayout*>(problemBanner_->layout());
    row->addWidget(problemLabel_, 1);
    row->addWidget(problemReset_);
    row->addWidget(dismiss);
    for (QLabel** l : {&timeLabel_, &countsLabel_, &stepsLabel_, &fpsLabel_}) {
        *l = new QLabel(this);
        statusBar()->addPermanentWidget(*l);
    }
    fpsLabel_->setObjectName("fpsLabel");
    countsLabel_->setObjectName("countsLabel");
}

void MainWindow::setRenderSettings(const render::RenderSettings& settings) {
    // The core keeps the octree's leaves (and counts the baseline cells) only while they are drawn.
    if (worker_ && settings.showOctree() != diagnosticsPosted_) {
        diagnosticsPosted_ = settings.showOctree();
        WorkerCommand c = WorkerCommand::of(WorkerCommand::Type::SurfaceDiagnostics);
        c.value = diagnosticsPosted_ ? 1.0 : 0.0;
        worker_->post(c);
    }
    viewport_->setSettings(settings);
    if (overlayPanel_)
        overlayPanel_->setSettings(settings);
    syncViewActions();
}

void MainWindow::syncViewActions() {
    const render::RenderSettings& s = viewport_->settings();
    const std::pair<QAction*, bool> states[] = {
        {actParticlesOverlay_, s.showParticles}, {actSurfaceOverlay_, s.highlightSurface},
        {actMeshOverlay_, s.showMesh},           {actBoundaryOverlay_, s.showBoundary},
        {actOctreeOverlay_, s.showOctree()},     {actDiagnostic_, s.shading == render::Shading::Diagnostic}};
    for (auto [a, on] : states) {
        const QSignalBlocker b(a);
        a->setChecked(on);
    }
}

void MainWindow::setPreset(ResolutionPreset preset) {
    preset_ = preset;
    {
        const QSignalBlocker b(presetCombo_);
        presetCombo_->setCurrentIndex(int(preset));
    }
    if (options_.persistSettings && preset != ResolutionPreset::Custom)
        QSettings().setValue("scene/preset", int(preset));
    if (preset != ResolutionPreset::Custom && !currentScene_.empty())
        loadScene(currentScene_);
}

void MainWindow::loadScene(const std::string& scene) {
    // Read the description here first: a missing or malformed scene keeps the running one.
    double radius = 0.0;
    bool known = true;
    try {
        const SceneDescription d = describeScene(scene);
        radius = preset_ == ResolutionPreset::Custom && scene == currentScene_ ? sceneRadius_->value()
                                                                               : presetRadius(preset_, d);
    } catch (const std::exception& e) {
        // Not a library scene nor a file: a name only the factory knows (tests), or an error.
        known = false;
        if (isSceneFile(scene) || options_.factory == nullptr || scene.find('/') != std::string::npos) {
            showProblem(QString("Could not load %1: %2%3")
                            .arg(QString::fromStdString(scene), e.what(),
                                 currentScene_.empty()
                                     ? QString()
                                     : " (still running " + QString::fromStdString(currentScene_) + ")"));
            return;
        }
    }
    if (preset_ == ResolutionPreset::Custom && scene != currentScene_) {
        // A typed radius belongs to the scene it was typed for; another scene uses its file's.
        preset_ = ResolutionPreset::Paper;
        const QSignalBlocker b(presetCombo_);
        presetCombo_->setCurrentIndex(int(preset_));
    }
    std::vector<std::string> overrides;
    if (known && radius > 0.0)
        overrides.push_back("particleRadius=" + std::to_string(radius));
    // Every preset runs the scene's pressure solver (PCISPH unless the file says otherwise): with its
    // density solve cold-started (stable at rest at every radius), DFSPH is within 10 % of PCISPH's
    // speed at the same eta and leaves resting water at 0.1-0.2 m/s, PCISPH at 0.04 (docs/SCENES.md,
    // "Pressure solvers").
    for (const auto& o : options_.overrides) // the command line / the caller wins over presets
        overrides.push_back(o);
    requestedRadius_ = radius;
    postLoad(scene, overrides);
    if (options_.persistSettings && known) {
        QSettings().setValue("scene/last", QString::fromStdString(scene));
        if (preset_ != ResolutionPreset::Custom)
            QSettings().setValue("scene/preset", int(preset_));
    }
    const QString key = QString::fromStdString(scene);
    int index = sceneCombo_->findData(key);
    if (index < 0 && isSceneFile(scene)) {
        sceneCombo_->addItem(QFileInfo(key).completeBaseName() + " (file)", key);
        index = sceneCombo_->count() - 1;
    }
    if (index >= 0) {
        const QSignalBlocker b(sceneCombo_);
        sceneCombo_->setCurrentIndex(index);
    }
}

void MainWindow::postLoad(const std::string& scene, const std::vector<std::string>& overrides) {
    requestedScene_ = scene;
    // A scene switch keeps the play state: playing goes on playing, paused stays paused.
    const bool playing = worker_->isPlaying();
    worker_->loadScene(scene, overrides);
    if (playing)
        worker_->play();
    for (const auto& o : overrides)
        if (o.rfind("particleRadius=", 0) == 0)
            requestedRadius_ = std::stod(o.substr(15));
    if (options_.persistSettings)
        applySavedParameters(requestedRadius_);
}

void MainWindow::applySavedParameters(double radius) {
    // Values the user edited in earlier sessions. Lengths (leaf edge L ...) only make sense at
    // the resolution they were chosen for, so they are kept per radius and applied only there.
    QSettings s;
    QStringList applied;
    for (const ParameterInfo& p : parameterTable()) {
        if (p.name == "particleRadius")
            continue; // the resolution comes from the preset
        const QString key = dependsOnResolution(p)
                                ? "parameters/" + radiusKey(radius) + "/" + QString::fromStdString(p.name)
                                : "parameters/" + QString::fromStdString(p.name);
        if (!s.contains(key))
            continue;
        worker_->setParameter(p.name, s.value(key).toDouble());
        applied << QString::fromStdString(p.label);
    }
    if (!applied.isEmpty())
        showNotice(QString("Applied saved values of %1 (Scene \u25B8 Restore defaults forgets them)")
                       .arg(applied.join(", ")),
                   8000);
}

void MainWindow::openSceneFile(const QString& path) {
    // A file the user picked: its own resolution wins (as in the CLI) until they change r.
    preset_ = ResolutionPreset::Paper;
    {
        const QSignalBlocker b(presetCombo_);
        presetCombo_->setCurrentIndex(int(preset_));
    }
    loadScene(path.toStdString());
}

void MainWindow::restoreDefaults() {
    if (options_.persistSettings) {
        QSettings s;
        s.remove("parameters");
    }
    showNotice("Restored default parameters: the scene reloads with its own values", 5000);
    if (!currentScene_.empty())
        loadScene(currentScene_);
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
    const ParameterInfo* info = findParameter(name.toStdString());
    if (name == "particleRadius") {
        // The resolution: same as the Scene dock's radius field (reloads the scene at that r).
        sceneRadius_->setValue(value);
        return;
    }
    worker_->setParameter(name.toStdString(), value);
    shownParameters_[name.toStdString()] = value;
    if (options_.persistSettings && info) // lengths under the radius the scene was loaded with
        QSettings().setValue(dependsOnResolution(*info)
                                 ? "parameters/" + radiusKey(requestedRadius_) + "/" + name
                                 : "parameters/" + name,
                             value);
    if (info && info->needsReset)
        statusBar()->showMessage(QString::fromStdString(info->label) + ": applies after reset", 4000);
    if (name == "leafSize" && value > 0.0) {
        // docs/ALGORITHMS.md §5: a leaf edge above 2r/sqrt(3) can open holes in one-particle sheets.
        const auto frame = worker_->latestFrame();
        const double r =
            frame ? frame->parameters.get("particleRadius") : findParameter("particleRadius")->defaultValue;
        if (value > 2.0 * r / std::sqrt(3.0))
            showNotice(QString("Leaf edge L = %1 mm > 2r/sqrt(3) = %2 mm: thin sheets may show holes")
                           .arg(value * 1000.0, 0, 'f', 2)
                           .arg(2.0 * r / std::sqrt(3.0) * 1000.0, 0, 'f', 2),
                       8000);
        else if (statusBar()->currentMessage().startsWith("Leaf edge L"))
            statusBar()->clearMessage(); // the warning no longer holds: do not leave it standing
    } else if (name == "leafSize" && statusBar()->currentMessage().startsWith("Leaf edge L")) {
        statusBar()->clearMessage(); // back to automatic: nothing to warn about
    }
}

void MainWindow::syncParameterWidgets(const PublishedFrame& frame) {
    // Whatever the model runs with is what the docks show (scene values, presets, clamps).
    if (frame.parameters.values() == shownParameters_)
        return;
    shownParameters_ = frame.parameters.values();
    for (auto& [group, panel] : panels_)
        panel->setValues(frame.parameters);
    const double r = frame.parameters.get("particleRadius");
    if (std::abs(sceneRadius_->value() - r) > 1e-9 && !sceneRadius_->hasFocus()) {
        const QSignalBlocker b(sceneRadius_);
        sceneRadius_->setValue(r);
    }
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
    viewport_->setFrame(frame);
    if (!frame->snapshot)
        return;
    const FrameSnapshot& f = *frame->snapshot;
    if (currentScene_ != frame->scene) {
        currentScene_ = frame->scene;
        bodiesDock_->adaptToScene(f.domain);
        const QString key = QString::fromStdString(frame->scene);
        const int index = sceneCombo_->findData(key);
        if (index >= 0) {
            const QSignalBlocker b(sceneCombo_);
            sceneCombo_->setCurrentIndex(index);
        }
    }
    syncParameterWidgets(*frame);
    if (sceneDescribed_ != frame->scene) {
        // The scene's own description (its file's "description"), once per scene.
        sceneDescribed_ = frame->scene;
        sceneDescription_.clear();
        try {
            sceneDescription_ = QString::fromStdString(describeScene(frame->scene).description);
        } catch (const std::exception&) {
        }
    }
    sceneInfo_->setText(QString("%1: %2 fluid particles at r = %3 mm%4")
                            .arg(QString::fromStdString(std::filesystem::path(frame->scene).stem().string()))
                            .arg(f.positions.size())
                            .arg(frame->parameters.get("particleRadius") * 1000.0, 0, 'g', 4)
                            .arg(sceneDescription_.isEmpty() ? QString() : "\n" + sceneDescription_));
    {
        const QSignalBlocker b(actPlay_);
        actPlay_->setChecked(frame->playing);
    }
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
        // The status bar shows the very numbers the Statistics dock shows, refreshed together.
        stepsLabel_->setText(QString("%1 steps/s | %2\u00d7 real time")
                                 .arg(frame->stepsPerSecond, 0, 'f', 1)
                                 .arg(frame->realTimeFactor, 0, 'g', 2));
        lastStatsMs_ = now;
    }
    bodiesDock_->showFrame(*frame);
    if (!f.status.empty() && lastProblem_.isEmpty())
        showProblem(QString::fromStdString(f.status), true);
    emit framePresented(frame->serial);
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

QString MainWindow::sceneInfoText() const {
    return sceneInfo_->text();
}

QString MainWindow::rateText() const {
    return stepsLabel_->text();
}

bool MainWindow::resetOffered() const {
    return !problemReset_->isHidden();
}

void MainWindow::clearProblem() {
    lastProblem_.clear();
    problemLabel_->clear();
    problemReset_->setVisible(false);
    problemBanner_->setVisible(false);
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

void MainWindow::resizeEvent(QResizeEvent* e) {
    QMainWindow::resizeEvent(e);
    // A small window gives the view at least about half its width: the docks shrink with it
    // (their contents scroll) instead of leaving a 320 px view at 900 x 600.
    if (!leftDock_ || !rightDock_ || !isVisible())
        return;
    const int w = width();
    if (viewport_->width() < w / 2 && leftDock_->isVisible() && !leftDock_->isFloating() &&
        rightDock_->isVisible() && !rightDock_->isFloating())
        resizeDocks({leftDock_, rightDock_}, {w * 27 / 100, w * 18 / 100}, Qt::Horizontal);
    // The Scene dock keeps room for all of its rows (Restore defaults included), up to 55 %.
    auto* scene = leftDock_->findChild<QWidget*>("panel_Scene");
    if (scene && parameterDock_ && !leftDock_->isFloating() && !parameterDock_->isFloating()) {
        const int wanted = std::min(scene->sizeHint().height() + 36, height() * 55 / 100);
        if (leftDock_->height() < wanted)
            resizeDocks({leftDock_, parameterDock_}, {wanted, std::max(height() - wanted - 120, 100)},
                        Qt::Vertical);
    }
}

void MainWindow::showEvent(QShowEvent* e) {
    QMainWindow::showEvent(e);
    QResizeEvent resize(size(), size());
    resizeEvent(&resize);
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
        s.setValue("shading", int(r.shading));
        s.endGroup();
    }
    recorder_->stop();
    QMainWindow::closeEvent(e);
}

} // namespace octo::app
