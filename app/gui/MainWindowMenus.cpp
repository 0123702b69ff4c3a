// MainWindow's menus, toolbar and the view toggles they share with the Overlays dock.
#include "MainWindow.h"

#include "OverlayPanel.h"

#include <QAction>
#include <QActionGroup>
#include <QFileDialog>
#include <QMenuBar>
#include <QMessageBox>
#include <QToolBar>

namespace octo::app {

void MainWindow::buildActions() {
    buildFileMenu();
    QMenu* sim = buildSimulationMenu();
    buildViewMenu();
    buildToolBar(sim);
}

void MainWindow::buildFileMenu() {
    QMenu* file = menuBar()->addMenu("&File");
    file->addAction("&Open scene JSON...", QKeySequence::Open, this, &MainWindow::openSceneDialog);
    file->addAction("Export &particles (PLY)...", this, [this] { exportCurrent(false); });
    file->addAction("Export &mesh (OBJ)...", this, [this] { exportCurrent(true); });
    file->addSeparator();
    file->addAction("Restore &defaults", this, &MainWindow::restoreDefaults);
    file->addSeparator();
    file->addAction("&Quit", QKeySequence::Quit, this, &QWidget::close);
}

QMenu* MainWindow::buildSimulationMenu() {
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
        const PublishedFramePtr f = worker_->latestFrame(); // a reset settles the start again
        showSettling(f ? f->parameters.get(Param::startSettling) : 0.0);
        worker_->reset();
    });
    actReset_->setObjectName("actReset");
    return sim;
}

void MainWindow::buildViewMenu() {
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
}

void MainWindow::buildToolBar(QMenu* simulationMenu) {
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
        simulationMenu->addAction(a);
        connect(a, &QAction::triggered, this, [this, t = tool] { viewport_->setTool(t); });
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

} // namespace octo::app
