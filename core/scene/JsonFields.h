#pragma once
// Reads the fields of one JSON object of a scene file; every error names the file and the full
// field path ("bodies[0].kinematic.speed") and throws SceneError. Shared by the scene and body
// parsers so both report problems in the same words.
#include "common/Types.h"
#include "scene/Scene.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <initializer_list>
#include <set>
#include <string>

namespace octo {

/// Deepest nesting of arrays and objects a scene file may have (the built-in scenes use 4).
constexpr int kMaxJsonDepth = 64;
/// Most entries of one array of a scene ("fluidBoxes", "bodies", a kinematic path ...).
constexpr size_t kMaxSceneArrayEntries = 1000;

/// Parses scene JSON text, refusing (SceneError naming `source` and `field`) what nlohmann would
/// accept silently or with recursion: nesting deeper than kMaxJsonDepth (checked while parsing,
/// before any recursive code sees the tree: `bodies` nested 100 000 deep overflowed the stack),
/// and a key given twice in one object ("last wins" hid the first value).
nlohmann::json parseJsonChecked(const std::string& text, const std::string& source,
                                const std::string& field = "");

class JsonFields {
public:
    using json = nlohmann::json;
    /// Numbers are stored as float: larger magnitudes are refused rather than turned into inf.
    static constexpr double kMaxMagnitude = 1e30;

    JsonFields(const json& object, std::string path, const std::string& source)
        : obj_(object), path_(std::move(path)), source_(source) {
        if (!obj_.is_object())
            fail(path_.empty() ? "the scene must be a JSON object" : "expected an object");
    }
    [[noreturn]] void fail(const std::string& what, const std::string& field = "") const {
        const std::string f = field.empty() ? path_ : join(field);
        throw SceneError(source_ + ": " + (f.empty() ? "" : "field '" + f + "': ") + what);
    }
    /// Full path of a field of this object.
    std::string join(const std::string& field) const { return path_.empty() ? field : path_ + "." + field; }
    bool has(const std::string& field) const { return obj_.contains(field); }
    const json& at(const std::string& field) const {
        if (!obj_.contains(field))
            fail("missing required field '" + join(field) + "'", "");
        return obj_.at(field);
    }
    double number(const std::string& field, bool positive = false) const {
        const json& v = at(field);
        if (!v.is_number())
            fail("expected a number, got " + std::string(v.type_name()), field);
        const double d = v.get<double>();
        if (!std::isfinite(d) || (positive && !(d > 0.0)))
            fail("expected a positive number", field);
        if (std::abs(d) > kMaxMagnitude)
            fail("number out of range (|x| <= 1e30)", field);
        return d;
    }
    double number(const std::string& field, double fallback, bool positive) const {
        return has(field) ? number(field, positive) : fallback;
    }
    bool boolean(const std::string& field, bool fallback) const {
        if (!has(field))
            return fallback;
        if (!obj_.at(field).is_boolean())
            fail("expected true or false", field);
        return obj_.at(field).get<bool>();
    }
    std::string string(const std::string& field) const {
        const json& v = at(field);
        if (!v.is_string())
            fail("expected a string, got " + std::string(v.type_name()), field);
        return v.get<std::string>();
    }
    std::string string(const std::string& field, const std::string& fallback) const {
        return has(field) ? string(field) : fallback;
    }
    static bool isVec3(const json& v) {
        if (!v.is_array() || v.size() != 3)
            return false;
        for (const auto& c : v)
            if (!c.is_number() || !std::isfinite(c.get<double>()) ||
                std::abs(c.get<double>()) > kMaxMagnitude)
                return false;
        return true;
    }
    static Vec3f toVec3(const json& v) { return {v[0].get<float>(), v[1].get<float>(), v[2].get<float>()}; }
    Vec3f vec3(const std::string& field) const {
        const json& v = at(field);
        if (!isVec3(v))
            fail("expected an array of 3 numbers, all finite (|x| <= 1e30)", field);
        return toVec3(v);
    }
    Vec3f vec3(const std::string& field, const Vec3f& fallback) const {
        return has(field) ? vec3(field) : fallback;
    }
    /// A box from "min" and "max"; max must exceed min in every coordinate.
    Aabb box() const {
        const Aabb b(vec3("min"), vec3("max"));
        if (!((b.max.array() > b.min.array()).all()))
            fail("'max' must exceed 'min' in every coordinate");
        return b;
    }
    void onlyKnown(std::initializer_list<const char*> known) const {
        const std::set<std::string> k(known.begin(), known.end());
        for (const auto& [key, value] : obj_.items())
            if (!k.count(key)) {
                std::string list;
                for (const char* s : known)
                    list += (list.empty() ? "" : ", ") + std::string(s);
                fail("unknown field (known: " + list + ")", key);
            }
    }
    const json& obj() const { return obj_; }
    const std::string& path() const { return path_; }

private:
    const json& obj_;
    std::string path_;
    const std::string& source_;
};

} // namespace octo
