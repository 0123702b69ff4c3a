// MainWindow's docks (Scene, the parameter groups, Bodies, Overlays, Statistics, Recording), the
// status bar and how the docks share the window with the view.
#include "MainWindow.h"

#include "BodiesDock.h"
#include "OverlayPanel.h"
#include "ParameterPanel.h"
#include "RecordingDock.h"
#include "StatsPanel.h"
#include "scene/SceneLibrary.h"

#include <QAction>
#include <QComboBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QResizeEvent>
#include <QScrollArea>
#include <QSettings>
#include <QStatusBar>
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

} // namespace

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
    for (const char* label : kPresetLabels)
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
    connect(open, &QPushButton::clicked, this, &MainWindow::openSceneDialog);
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

} // namespace octo::app
