#include "ParameterPanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <algorithm>
#include <cmath>

namespace octo::app {

namespace {
constexpr int kSliderSteps = 1000;
using K = ParameterInfo::Kind;

bool usesSlider(const ParameterInfo& p) {
    return p.kind == K::Real && p.name == "lambdaMin";
}

/// Spin boxes that take any number (the range check is ParameterPanel::checked, which reports
/// it) but step only inside the parameter's range.
constexpr double kWide = 1e9;
template <class Spin, class T> class RangeSpinBox : public Spin {
public:
    RangeSpinBox(T lo, T hi, QWidget* parent) : Spin(parent), lo_(lo), hi_(hi) {
        Spin::setRange(T(-kWide), T(kWide));
    }
    void stepBy(int steps) override {
        Spin::setValue(std::clamp(T(Spin::value() + steps * Spin::singleStep()), lo_, hi_));
    }

protected:
    typename Spin::StepEnabled stepEnabled() const override {
        return typename Spin::StepEnabled((Spin::value() > lo_ ? Spin::StepDownEnabled : Spin::StepNone) |
                                          (Spin::value() < hi_ ? Spin::StepUpEnabled : Spin::StepNone));
    }

private:
    T lo_, hi_;
};
using RangeDoubleSpin = RangeSpinBox<QDoubleSpinBox, double>;
using RangeSpin = RangeSpinBox<QSpinBox, int>;

int decimalsFor(const ParameterInfo& p) {
    // Enough digits to show the smallest non-zero bound or default, e.g. dt min = 1e-7 s.
    double smallest = 1.0;
    for (double v : {p.minValue, p.maxValue, p.defaultValue})
        if (v != 0.0)
            smallest = std::min(smallest, std::abs(v));
    return std::clamp(int(std::ceil(-std::log10(smallest))) + 2, 2, 8);
}
} // namespace

ParameterPanel::ParameterPanel(const QString& group, QWidget* parent) : QWidget(parent) {
    setObjectName("panel_" + group);
    auto* form = new QFormLayout(this);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    for (const ParameterInfo& p : parameterTable()) {
        if (QString::fromStdString(p.group) != group)
            continue;
        const QString name = QString::fromStdString(p.name);
        QWidget* editor = nullptr;
        if (usesSlider(p)) {
            auto* box = new QWidget(this);
            auto* row = new QHBoxLayout(box);
            row->setContentsMargins(0, 0, 0, 0);
            auto* slider = new QSlider(Qt::Horizontal, box);
            slider->setRange(0, kSliderSteps);
            auto* label = new QLabel(box);
            label->setMinimumWidth(40);
            row->addWidget(slider);
            row->addWidget(label);
            slider->setObjectName("param_" + name);
            connect(slider, &QSlider::valueChanged, this, [this, name, label, p](int v) {
                const double value = p.minValue + (p.maxValue - p.minValue) * v / kSliderSteps;
                label->setText(QString::number(value, 'f', 3));
                emit parameterEdited(name, value);
            });
            editors_[p.name] = slider;
            editor = box;
        } else if (p.kind == K::Real) {
            auto* spin = new RangeDoubleSpin(p.minValue, p.maxValue, this);
            spin->setDecimals(decimalsFor(p));
            spin->setSingleStep((p.maxValue - p.minValue) / 100.0);
            spin->setKeyboardTracking(false); // emit on Enter / focus-out, not per keystroke
            if (!p.unit.empty() && p.unit != "1")
                spin->setSuffix(" " + QString::fromStdString(p.unit));
            connect(spin, &QDoubleSpinBox::valueChanged, this,
                    [this, name, p, spin](double v) { emit parameterEdited(name, checked(p, v, spin)); });
            editor = spin;
        } else if (p.kind == K::Integer) {
            auto* spin = new RangeSpin(int(p.minValue), int(p.maxValue), this);
            spin->setKeyboardTracking(false);
            connect(spin, &QSpinBox::valueChanged, this,
                    [this, name, p, spin](int v) { emit parameterEdited(name, checked(p, v, spin)); });
            editor = spin;
        } else if (p.kind == K::Boolean) {
            auto* check = new QCheckBox(this);
            connect(check, &QCheckBox::toggled, this,
                    [this, name](bool v) { emit parameterEdited(name, v ? 1.0 : 0.0); });
            editor = check;
        } else {
            auto* combo = new QComboBox(this);
            for (const auto& c : p.choices)
                combo->addItem(QString::fromStdString(c));
            connect(combo, &QComboBox::currentIndexChanged, this,
                    [this, name](int i) { emit parameterEdited(name, i); });
            editor = combo;
        }
        if (!editors_.count(p.name)) {
            editor->setObjectName("param_" + name);
            editors_[p.name] = editor;
        }
        QString tip = QString::fromStdString(p.description + (p.needsReset ? " (applies after reset)" : ""));
        editor->setToolTip(tip);
        auto* label = new QLabel(QString::fromStdString(p.label), this);
        label->setToolTip(tip);
        form->addRow(label, editor);
        showValue(p, p.defaultValue);
    }
}

double ParameterPanel::checked(const ParameterInfo& p, double typed, QWidget* editor) {
    const double value = std::clamp(typed, p.minValue, p.maxValue);
    if (value == typed)
        return value;
    // Show the value the solver gets, and say why it is not what was typed.
    const QSignalBlocker block(editor);
    if (auto* d = qobject_cast<QDoubleSpinBox*>(editor))
        d->setValue(value);
    else if (auto* i = qobject_cast<QSpinBox*>(editor))
        i->setValue(int(value));
    emit valueAdjusted(QString::fromStdString(p.name),
                       QString("%1: %2 is outside %3; set to %4")
                           .arg(QString::fromStdString(p.label))
                           .arg(typed)
                           .arg(QString::fromStdString(ParameterSet::rangeText(p)))
                           .arg(value));
    return value;
}

QWidget* ParameterPanel::editorFor(const std::string& name) const {
    auto it = editors_.find(name);
    return it == editors_.end() ? nullptr : it->second;
}

QStringList ParameterPanel::parameterNames() const {
    QStringList names;
    for (const auto& [name, w] : editors_)
        names << QString::fromStdString(name);
    return names;
}

void ParameterPanel::showValue(const ParameterInfo& p, double value) {
    QWidget* w = editorFor(p.name);
    if (!w)
        return;
    const QSignalBlocker block(w);
    if (auto* slider = qobject_cast<QSlider*>(w)) {
        slider->setValue(int(std::lround((value - p.minValue) / (p.maxValue - p.minValue) * kSliderSteps)));
        if (auto* label = slider->parentWidget()->findChild<QLabel*>())
            label->setText(QString::number(value, 'f', 3));
    } else if (auto* dspin = qobject_cast<QDoubleSpinBox*>(w)) {
        dspin->setValue(value);
    } else if (auto* spin = qobject_cast<QSpinBox*>(w)) {
        spin->setValue(int(value));
    } else if (auto* check = qobject_cast<QCheckBox*>(w)) {
        check->setChecked(value != 0.0);
    } else if (auto* combo = qobject_cast<QComboBox*>(w)) {
        combo->setCurrentIndex(int(value));
    }
}

void ParameterPanel::setValues(const ParameterSet& values) {
    for (const ParameterInfo& p : parameterTable()) {
        auto it = editors_.find(p.name);
        // A field being typed into keeps what the user typed.
        if (it != editors_.end() && !it->second->hasFocus())
            showValue(p, values.get(p.name));
    }
}

void ParameterPanel::editValue(const std::string& name, double value) {
    const ParameterInfo* p = findParameter(name);
    QWidget* w = editorFor(name);
    if (!p || !w)
        return;
    if (auto* slider = qobject_cast<QSlider*>(w))
        slider->setValue(
            int(std::lround((value - p->minValue) / (p->maxValue - p->minValue) * kSliderSteps)));
    else if (auto* dspin = qobject_cast<QDoubleSpinBox*>(w))
        dspin->setValue(value);
    else if (auto* spin = qobject_cast<QSpinBox*>(w))
        spin->setValue(int(value));
    else if (auto* check = qobject_cast<QCheckBox*>(w))
        check->setChecked(value != 0.0);
    else if (auto* combo = qobject_cast<QComboBox*>(w))
        combo->setCurrentIndex(int(value));
}

} // namespace octo::app
