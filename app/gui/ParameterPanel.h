#pragma once
// A dock page generated from octo::parameterTable() for one group ("Solver", "Surface", ...):
// Real → double spin box (λmin → slider 0–1), Integer → spin box, Boolean → check box,
// Choice → combo box. Every widget is named "param_<name>" (tests and QSettings use it).
// Number fields accept any typed number and say when it was clamped to the parameter's range
// (valueAdjusted) instead of silently refusing or clamping it.
#include "common/Parameters.h"

#include <QWidget>
#include <map>

namespace octo::app {

class ParameterPanel : public QWidget {
    Q_OBJECT
public:
    explicit ParameterPanel(const QString& group, QWidget* parent = nullptr);

    /// Shows these values without emitting parameterEdited.
    void setValues(const ParameterSet& values);
    /// Sets one widget as if the user edited it (emits parameterEdited).
    void editValue(const std::string& name, double value);
    QWidget* editorFor(const std::string& name) const;
    QStringList parameterNames() const;

signals:
    void parameterEdited(const QString& name, double value);
    /// A typed value was outside the table's range and was clamped: the message says both.
    void valueAdjusted(const QString& name, const QString& message);

private:
    void showValue(const ParameterInfo& info, double value);
    /// Clamps a typed value to the parameter's range, reporting the change; returns the value.
    double checked(const ParameterInfo& info, double typed, QWidget* editor);
    std::map<std::string, QWidget*> editors_;
};

} // namespace octo::app
