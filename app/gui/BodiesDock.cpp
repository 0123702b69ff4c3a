#include "BodiesDock.h"

#include "render/Geometry.h"

#include <QDateTime>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QLabel>
#include <QListWidget>
#include <QPixmap>
#include <QPushButton>
#include <QVBoxLayout>
#include <algorithm>

namespace octo::app {

namespace {
QDoubleSpinBox* spin(QWidget* parent, const char* name, double lo, double hi, double value, int decimals,
                     const QString& suffix, const QString& tip) {
    auto* s = new QDoubleSpinBox(parent);
    s->setObjectName(name);
    s->setRange(lo, hi);
    s->setDecimals(decimals);
    s->setSingleStep((hi - lo) / 50.0);
    s->setValue(value);
    s->setSuffix(suffix);
    s->setToolTip(tip);
    return s;
}
} // namespace

BodiesDock::BodiesDock(SimulationWorker* worker, ViewportWidget* viewport, QWidget* parent)
    : QWidget(parent), worker_(worker), viewport_(viewport) {
    setObjectName("panel_Bodies");
    auto* layout = new QVBoxLayout(this);
    list_ = new QListWidget(this);
    list_->setObjectName("bodiesList");
    list_->setMinimumHeight(80);
    layout->addWidget(list_);
    // New bodies: built-in shapes of the core (Simulation::addBody), above the fluid under the
    // last cursor position in the viewport.
    auto* form = new QFormLayout;
    size_ = spin(this, "bodySize", 0.0, 2.0, 0.0, 3, " m",
                 "Edge / diameter of new bodies (auto: 12 % of the container, at least 8 r)");
    size_->setSpecialValueText("auto");
    form->addRow("Size", size_);
    density_ = spin(this, "bodyDensity", 1.0, 20000.0, 500.0, 0, " kg/m\u00B3",
                    "Density of new bodies (water: 1000; lighter bodies float)");
    form->addRow("Density", density_);
    layout->addLayout(form);
    auto* grid = new QGridLayout;
    const char* shapes[] = {"box", "sphere", "cylinder", "armadillo"};
    for (int i = 0; i < 4; ++i) {
        auto* b = new QPushButton(QString("Add %1").arg(shapes[i]), this);
        b->setObjectName(QString("add-%1").arg(shapes[i]));
        b->setToolTip("Adds the body above the fluid under the last cursor position in the viewport");
        const std::string shape = shapes[i];
        connect(b, &QPushButton::clicked, this, [this, shape] { addBody(shape); });
        addButtons_.push_back(b);
        grid->addWidget(b, i / 2, i % 2);
    }
    deleteButton_ = new QPushButton("Delete selected", this);
    deleteButton_->setObjectName("deleteBody");
    connect(deleteButton_, &QPushButton::clicked, this, &BodiesDock::deleteSelected);
    grid->addWidget(deleteButton_, 2, 0, 1, 2);
    layout->addLayout(grid);

    auto* tools = new QGroupBox("Mouse tools", this);
    auto* toolForm = new QFormLayout(tools);
    dragResponse_ = spin(tools, "dragResponse", 0.05, 3.0, 0.2, 2, " s",
                         "Drag response in wall-clock time: a dragged body gets up to speed (at most 3 m/s "
                         "of simulated time) in half of this and stops at the cursor from full speed in "
                         "this, however slowly the simulation runs (its simulated response is this times "
                         "the real-time factor)");
    toolForm->addRow("Drag response (wall)", dragResponse_);
    stirRadius_ = spin(tools, "stirRadius", 0.005, 1.0, 0.1, 3, " m",
                       "Fluid within this distance of the cursor ray is pushed");
    toolForm->addRow("Stir radius", stirRadius_);
    stirStrength_ = spin(tools, "stirStrength", 0.5, 50.0, 15.0, 1, "",
                         "Push of the stir tool: 20 m/s\u00B2 per unit at the ray while the button is held");
    toolForm->addRow("Stir strength", stirStrength_);
    auto apply = [this] { viewport_->setStir(float(stirRadius_->value()), float(stirStrength_->value())); };
    connect(stirRadius_, &QDoubleSpinBox::valueChanged, this, apply);
    connect(stirStrength_, &QDoubleSpinBox::valueChanged, this, apply);
    apply();
    layout->addWidget(tools);
    layout->addWidget(new QLabel("Keys 1 / 2 / 3: orbit, drag body, stir.", this));
    layout->addStretch(1);
}

double BodiesDock::dragResponseTime() const {
    return dragResponse_->value();
}

void BodiesDock::adaptToScene(const Aabb& domain) {
    if (domain.empty())
        return;
    stirRadius_->setValue(std::clamp(double((domain.max - domain.min).minCoeff()) / 8.0, 0.005, 1.0));
}

void BodiesDock::showFrame(const PublishedFrame& frame) {
    const FrameSnapshot& f = *frame.snapshot;
    QString ids;
    for (const auto& b : f.bodies)
        ids += QString::number(b.id) + ',';
    if (ids != shownIds_) {
        shownIds_ = ids;
        const int selected = list_->currentItem() ? list_->currentItem()->data(Qt::UserRole).toInt() : -1;
        list_->clear();
        const double rho0 = frame.parameters.get(Param::restDensity);
        for (size_t i = 0; i < f.bodies.size(); ++i) {
            const BodySnapshot& b = f.bodies[i];
            auto* item = new QListWidgetItem(QString("#%1 %2  (%3 kg/m\u00B3 = %4 \u03C10%5)")
                                                 .arg(b.id)
                                                 .arg(QString::fromStdString(b.name))
                                                 .arg(b.density)
                                                 .arg(b.density / rho0, 0, 'f', 2)
                                                 .arg(b.kinematic ? ", kinematic" : ""),
                                             list_);
            QPixmap swatch(12, 12);
            const glm::vec3 c = b.kinematic ? glm::vec3(0.6f, 0.6f, 0.65f) : render::bodyColor(b.id);
            swatch.fill(QColor::fromRgbF(c.r, c.g, c.b));
            item->setIcon(QIcon(swatch));
            item->setData(Qt::UserRole, b.id);
            if (b.id == selected)
                list_->setCurrentItem(item);
        }
    }
    for (QPushButton* b : addButtons_)
        b->setEnabled(frame.bodiesSupported);
    deleteButton_->setEnabled(frame.bodiesSupported && !f.bodies.empty());
}

void BodiesDock::addBody(const std::string& shape) {
    const auto frame = worker_->latestFrame();
    if (!frame || !frame->snapshot)
        return;
    if (!frame->bodiesSupported) {
        emit problem("adding bodies needs the core Simulation (this model has none)");
        return;
    }
    const Aabb& d = frame->snapshot->domain;
    const float r = float(frame->parameters.get(Param::particleRadius));
    float size = float(size_->value());
    if (size <= 0.0f) {
        const float extent = d.empty() ? 0.5f : (d.max - d.min).minCoeff();
        size = std::max(0.12f * extent, 8.0f * r); // the core needs bodies thicker than 4 r
    }
    WorkerCommand c;
    c.type = WorkerCommand::Type::AddBody;
    c.text = shape;
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    std::erase_if(pending_, [&](const Pending& p) { return now - p.askedMs > 4000; });
    std::vector<std::pair<Vec3f, float>> pending;
    for (const Pending& p : pending_)
        pending.push_back({p.centre, p.size});
    c.a = viewport_->spawnPoint(size, pending); // clear of the bodies there and of those on their way
    pending_.push_back({c.a, size, now});
    c.value = size;
    c.value2 = density_->value();
    worker_->post(c);
}

void BodiesDock::deleteSelected() {
    const QListWidgetItem* item = list_->currentItem();
    if (!item) {
        emit notice("Select a body in the list first");
        return;
    }
    WorkerCommand c;
    c.type = WorkerCommand::Type::RemoveBody;
    c.id = item->data(Qt::UserRole).toInt();
    worker_->post(c);
}

} // namespace octo::app
