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

/// Lengths are shown in millimetres (r = 12.6 mm, L = 14.5 mm): metres with two decimals turned
/// 0.015 into 0.01 and 14.5 mm into "0.00 m".
double displayScale(const ParameterInfo& p) {
    return p.unit == "m" ? 1000.0 : 1.0;
}

int decimalsFor(const ParameterInfo& p) {
    if (displayScale(p) != 1.0) {
        // In mm: at least 0.01 mm, and as fine as the metre display was (r: 1 um).
        ParameterInfo metres = p;
        metres.unit = "";
        return std::max(2, decimalsFor(metres) - 3);
    }
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
            const double scale = displayScale(p);
            auto* spin = new RangeDoubleSpin(p.minValue * scale, p.maxValue * scale, this);
            spin->setDecimals(decimalsFor(p));
            spin->setSingleStep(scale != 1.0 ? 0.5 : (p.maxValue - p.minValue) / 100.0);
            spin->setKeyboardTracking(false); // emit on Enter / focus-out, not per keystroke
            if (scale != 1.0)
                spin->setSuffix(" mm");
            else if (!p.unit.empty() && p.unit != "1")
                spin->setSuffix(" " + QString::fromStdString(p.unit));
            connect(spin, &QDoubleSpinBox::valueChanged, this, [this, name, p, spin, scale](double v) {
                emit parameterEdited(name, checked(p, v / scale, spin));
            });
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
        d->setValue(value * displayScale(p));
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
        dspin->setValue(value * displayScale(p));
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
    // L = 0 is automatic (2r/sqrt(3)): say which edge that is, in the field itself.
    if (auto* leaf = qobject_cast<QDoubleSpinBox*>(editorFor("leafSize"))) {
        const double automatic = 2.0 * values.get(Param::particleRadius) / std::sqrt(3.0) * 1000.0;
        leaf->setSuffix(values.get(Param::leafSize) == 0.0
                            ? QString(" mm (auto: %1 mm)").arg(automatic, 0, 'f', 2)
                            : QString(" mm"));
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
        dspin->setValue(value * displayScale(*p));
    else if (auto* spin = qobject_cast<QSpinBox*>(w))
        spin->setValue(int(value));
    else if (auto* check = qobject_cast<QCheckBox*>(w))
        check->setChecked(value != 0.0);
    else if (auto* combo = qobject_cast<QComboBox*>(w))
        combo->setCurrentIndex(int(value));
}

} // namespace octo::app
