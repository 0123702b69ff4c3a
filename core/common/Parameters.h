#pragma once
// Every user-tunable parameter is described once here (name, group, unit, range, default,
// whether a change needs a reset). The CLI's --set, the scene JSON "parameters" object and the
// GUI's dock panels all read this one table. Out-of-range values are refused, never clamped, and
// so are pairs that contradict each other (parameterOrders: minIterations > maxIterations ...).
#include "common/ParameterId.h"

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace octo {

struct ParameterInfo {
    enum class Kind { Real, Integer, Boolean, Choice };
    std::string name;        ///< key used by --set, scene JSON and QSettings, e.g. "lambdaMin"
    std::string group;       ///< dock / section: "Solver", "Boundary", "Surface", "Bodies"
    std::string label;       ///< short human label
    std::string unit;        ///< SI unit or "" / "1" for dimensionless
    std::string description; ///< one sentence
    Kind kind = Kind::Real;
    double minValue = 0.0, maxValue = 1.0, defaultValue = 0.0;
    bool needsReset = false;          ///< true: the scene must be rebuilt for the change to act
    std::vector<std::string> choices; ///< Kind::Choice: value is the index into choices

    /// A setting of the surface (not of the fluid): an edit rebuilds the surface of the current
    /// particles, also while paused; the solver never reads it.
    bool shapesSurface() const { return group == "Surface"; }
};

class ParameterError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Two parameters of the table that bound each other: lower <= upper (e.g. minIterations and
/// maxIterations). ParameterSet::validate refuses a set that breaks one, naming both.
struct ParameterOrder {
    std::string lower, upper;
    bool strict = false; ///< lower must be below upper (tLow = tHigh divides by zero later)
};
const std::vector<ParameterOrder>& parameterOrders();

/// The table of all parameters, in display order.
const std::vector<ParameterInfo>& parameterTable();
/// nullptr when unknown.
const ParameterInfo* findParameter(const std::string& name);

/// Current values of all parameters; starts at the defaults.
class ParameterSet {
public:
    ParameterSet();
    /// Sets a value; throws ParameterError naming the parameter and its range when refused.
    /// Checks the range only: call validate() after a batch of assignments.
    void set(const std::string& name, double value);
    /// Throws ParameterError naming both parameters when a parameterOrders() pair is violated
    /// (the CLI and scene files call it after all their assignments).
    void validate() const;
    /// set() + validate(); on a conflict the old value is kept (one edit at a time: the GUI).
    void setConsistent(const std::string& name, double value);
    /// Parses "name=value" or a value string (numbers, true/false, choice names).
    void setFromString(const std::string& name, const std::string& text);
    void parseAssignment(const std::string& nameEqualsValue);
    double get(const std::string& name) const;
    float getf(const std::string& name) const { return float(get(name)); }
    int geti(const std::string& name) const { return int(get(name)); }
    bool getb(const std::string& name) const { return get(name) != 0.0; }
    std::string choice(const std::string& name) const;
    /// Typed access (ParameterId.h): an array read, for code that runs every step or frame.
    double get(Param p) const { return byId_[size_t(p)]; }
    float getf(Param p) const { return float(get(p)); }
    int geti(Param p) const { return int(get(p)); }
    bool getb(Param p) const { return get(p) != 0.0; }
    std::string choice(Param p) const;
    const std::map<std::string, double>& values() const { return values_; }
    /// Range text for messages, e.g. "[0, 1]" or "one of octree|uniform|narrow|sparse".
    static std::string rangeText(const ParameterInfo& info);

private:
    void store(const std::string& name, double value);
    std::map<std::string, double> values_;
    std::array<double, kParameterCount> byId_{}; // the same values, by Param
};

/// The Param of a table name; throws ParameterError when unknown.
Param parameterId(const std::string& name);

} // namespace octo
