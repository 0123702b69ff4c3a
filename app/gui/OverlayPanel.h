#pragma once
// Overlay toggles and colour mode, bound to a RenderSettings value. Widgets are named
// "overlay_<field>" so tests and the scripted capture can find them.
#include "render/RenderSettings.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QSpinBox;
class QDoubleSpinBox;
class QFormLayout;
class QLayout;
class QVBoxLayout;

namespace octo::app {

class OverlayPanel : public QWidget {
    Q_OBJECT
public:
    explicit OverlayPanel(QWidget* parent = nullptr);
    void setSettings(const render::RenderSettings& settings); ///< no signal
    const render::RenderSettings& settings() const { return settings_; }

signals:
    void settingsChanged(const octo::render::RenderSettings& settings);

private:
    QCheckBox* addCheck(const QString& name, const QString& label, bool render::RenderSettings::*field,
                        QLayout* target = nullptr);
    void refresh();
    void buildLookRows(QFormLayout* form); ///< shading, colour mode, velocity scale, particle size
    void buildOctreeGroup(QVBoxLayout* layout);

    render::RenderSettings settings_;
    std::vector<std::pair<QCheckBox*, bool render::RenderSettings::*>> checks_;
    QComboBox* colorMode_ = nullptr;
    QComboBox* shading_ = nullptr;
    QSpinBox* minDepth_ = nullptr;
    QSpinBox* maxDepth_ = nullptr;
    QDoubleSpinBox* particleScale_ = nullptr;
    QDoubleSpinBox* velocityMax_ = nullptr;
};

} // namespace octo::app
