#pragma once
// The Bodies dock: the bodies of the running scene (colour swatch as in the viewport, name,
// density), adding built-in shapes above the fluid and deleting the selected body, and the
// mouse tools' settings (drag stiffness, stir radius and strength).
#include "SimulationWorker.h"
#include "ViewportWidget.h"

#include <QWidget>

class QDoubleSpinBox;
class QListWidget;
class QPushButton;

namespace octo::app {

class BodiesDock : public QWidget {
    Q_OBJECT
public:
    BodiesDock(SimulationWorker* worker, ViewportWidget* viewport, QWidget* parent = nullptr);

    /// Refreshes the list (only when the set of bodies changed, so the selection stays).
    void showFrame(const PublishedFrame& frame);
    /// Drag spring response time (s) the drag tool asks for.
    double dragResponseTime() const;
    /// Stir defaults scaled to the scene: radius 1/8 of the container's smallest extent.
    void adaptToScene(const Aabb& domain);

signals:
    void problem(const QString& message);
    void notice(const QString& message);

private:
    void addBody(const std::string& shape);
    void deleteSelected();

    SimulationWorker* worker_;
    ViewportWidget* viewport_;
    QListWidget* list_ = nullptr;
    QString shownIds_;
    QDoubleSpinBox *size_ = nullptr, *density_ = nullptr;
    QDoubleSpinBox *dragResponse_ = nullptr, *stirRadius_ = nullptr, *stirStrength_ = nullptr;
    std::vector<QPushButton*> addButtons_;
    QPushButton* deleteButton_ = nullptr;
};

} // namespace octo::app
