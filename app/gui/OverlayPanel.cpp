#include "OverlayPanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>

namespace octo::app {

using render::RenderSettings;

OverlayPanel::OverlayPanel(QWidget* parent) : QWidget(parent) {
    setObjectName("panel_Overlays");
    auto* layout = new QVBoxLayout(this);
    auto* form = new QFormLayout;
    layout->addLayout(form);
    buildLookRows(form);
    addCheck("showParticles", "Fluid particles", &RenderSettings::showParticles);
    addCheck("highlightSurface", "Surface particles (alone when fluid particles are off)",
             &RenderSettings::highlightSurface);
    addCheck("showMesh", "Surface mesh", &RenderSettings::showMesh);
    addCheck("showBodies", "Rigid bodies", &RenderSettings::showBodies);
    addCheck("showBoundary", "Boundary particles", &RenderSettings::showBoundary);
    addCheck("exactSphereDepth", "Exact sphere depth (slower)", &RenderSettings::exactSphereDepth);
    addCheck("cutawayWalls", "Cut away front walls", &RenderSettings::cutawayWalls);
    addCheck("showGrid", "Floor grid", &RenderSettings::showGrid);
    addCheck("showBox", "Container box", &RenderSettings::showBox);
    addCheck("showLegend", "Legend", &RenderSettings::showLegend);
    addCheck("showBodyLabels", "Body labels", &RenderSettings::showBodyLabels);
    buildOctreeGroup(layout);
    layout->addStretch(1);
    refresh();
}

void OverlayPanel::buildLookRows(QFormLayout* form) {
    shading_ = new QComboBox(this);
    shading_->setObjectName("overlay_shading");
    shading_->addItems({"Water", "Diagnostic (flat)"});
    shading_->setToolTip(
        "Water: sky reflection, tinted transmission, floor. Diagnostic: flat-lit translucent mesh (D)");
    form->addRow("Shading", shading_);
    connect(shading_, &QComboBox::currentIndexChanged, this, [this](int i) {
        settings_.shading = render::Shading(i);
        emit settingsChanged(settings_);
    });
    colorMode_ = new QComboBox(this);
    colorMode_->setObjectName("overlay_colorMode");
    for (const auto& n : render::colorModeNames())
        colorMode_->addItem(QString::fromStdString(n));
    form->addRow("Colour by", colorMode_);
    connect(colorMode_, &QComboBox::currentIndexChanged, this, [this](int i) {
        settings_.colorMode = render::ColorMode(i);
        emit settingsChanged(settings_);
    });
    velocityMax_ = new QDoubleSpinBox(this);
    velocityMax_->setObjectName("overlay_velocityMax");
    velocityMax_->setRange(0.01, 100.0);
    velocityMax_->setSuffix(" m/s");
    form->addRow("Velocity scale", velocityMax_);
    connect(velocityMax_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        settings_.velocityMax = float(v);
        emit settingsChanged(settings_);
    });
    particleScale_ = new QDoubleSpinBox(this);
    particleScale_->setObjectName("overlay_particleScale");
    particleScale_->setRange(0.1, 3.0);
    particleScale_->setSingleStep(0.1);
    form->addRow("Particle size", particleScale_);
    connect(particleScale_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        settings_.particleScale = float(v);
        emit settingsChanged(settings_);
    });
}

void OverlayPanel::buildOctreeGroup(QVBoxLayout* layout) {
    auto* octree = new QGroupBox("Octree nodes", this);
    auto* octreeLayout = new QFormLayout(octree);
    layout->addWidget(octree);
    for (auto [name, label, field] :
         {std::tuple{"octreeSurface", "Surface", &RenderSettings::octreeSurface},
          std::tuple{"octreeInterior", "Interior", &RenderSettings::octreeInterior},
          std::tuple{"octreeExterior", "Exterior", &RenderSettings::octreeExterior}}) {
        addCheck(name, label, field, octreeLayout);
    }
    minDepth_ = new QSpinBox(octree);
    maxDepth_ = new QSpinBox(octree);
    minDepth_->setObjectName("overlay_octreeMinDepth");
    maxDepth_->setObjectName("overlay_octreeMaxDepth");
    minDepth_->setRange(0, 31);
    maxDepth_->setRange(0, 31);
    octreeLayout->addRow("Min depth", minDepth_);
    octreeLayout->addRow("Max depth", maxDepth_);
    addCheck("octreeDepthCue", "Depth cueing (far outlines fade)", &RenderSettings::octreeDepthCue,
             octreeLayout);
    connect(minDepth_, &QSpinBox::valueChanged, this, [this](int v) {
        settings_.octreeMinDepth = v;
        emit settingsChanged(settings_);
    });
    connect(maxDepth_, &QSpinBox::valueChanged, this, [this](int v) {
        settings_.octreeMaxDepth = v;
        emit settingsChanged(settings_);
    });
}

QCheckBox* OverlayPanel::addCheck(const QString& name, const QString& label, bool RenderSettings::*field,
                                  QLayout* target) {
    auto* check = new QCheckBox(label, this);
    check->setObjectName("overlay_" + name);
    (target ? target : layout())->addWidget(check);
    checks_.emplace_back(check, field);
    connect(check, &QCheckBox::toggled, this, [this, field](bool on) {
        settings_.*field = on;
        emit settingsChanged(settings_);
    });
    return check;
}

void OverlayPanel::refresh() {
    for (auto& [check, field] : checks_) {
        const QSignalBlocker b(check);
        check->setChecked(settings_.*field);
    }
    const QSignalBlocker b1(colorMode_), b2(minDepth_), b3(maxDepth_), b4(particleScale_), b5(velocityMax_),
        b6(shading_);
    shading_->setCurrentIndex(int(settings_.shading));
    colorMode_->setCurrentIndex(int(settings_.colorMode));
    minDepth_->setValue(settings_.octreeMinDepth);
    maxDepth_->setValue(settings_.octreeMaxDepth);
    particleScale_->setValue(settings_.particleScale);
    velocityMax_->setValue(settings_.velocityMax);
}

void OverlayPanel::setSettings(const RenderSettings& settings) {
    settings_ = settings;
    refresh();
}

} // namespace octo::app
