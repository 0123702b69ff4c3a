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
    /// Drag response in wall-clock seconds the drag tool asks for (the worker scales it by the
    /// real-time factor into the spring's simulated response time).
    double dragResponseTime() const;
    /// Adds a built-in shape ("box", "sphere", "cylinder", "armadillo") like its button does.
    void addBody(const std::string& shape);
    /// Stir defaults scaled to the scene: radius 1/8 of the container's smallest extent.
    void adaptToScene(const Aabb& domain);

signals:
    void problem(const QString& message);
    void notice(const QString& message);

private:
    void deleteSelected();

    SimulationWorker* worker_;
    ViewportWidget* viewport_;
    QListWidget* list_ = nullptr;
    QString shownIds_;
    QDoubleSpinBox *size_ = nullptr, *density_ = nullptr;
    QDoubleSpinBox *dragResponse_ = nullptr, *stirRadius_ = nullptr, *stirStrength_ = nullptr;
    std::vector<QPushButton*> addButtons_;
    QPushButton* deleteButton_ = nullptr;
    struct Pending {
        Vec3f centre;
        float size;
        qint64 askedMs;
    };
    std::vector<Pending> pending_; ///< bodies asked for that no frame shows yet (kept apart)
};

} // namespace octo::app
