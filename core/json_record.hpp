// Typed records read and written through one table of their fields: the order they are written
// in, each key, the member it holds, and whether a reader may find it absent. A record type names
// its table once (a Fields<R> specialisation); write_record and read_record walk it, so adding a
// field is one line in the struct and one in its table. Reading is strict: a field missing or not
// of the type and range sonata writes there is a BadField naming it. Keys a table does not list are
// ignored on purpose: a newer sonata may add a field within the same schema.
// Include it only from the .cpp files that serialise a record: it carries nlohmann/json.hpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace sonata::record {

using json = nlohmann::ordered_json;

/// A field that is missing or not of the type (and range) sonata writes there.
struct BadField : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// Whether a reader may find a field absent.
enum class Presence {
    always, ///< Written since the schema began: absent is an error.
    added,  ///< Added within the schema: absent from the first documents, it keeps its default.
};

/// One field of record `Owner`: its key, its member, its presence.
template <class Owner, class T> struct Field {
    const char* key;
    T Owner::*member;
    Presence presence = Presence::always;
};

template <class Owner, class T>
constexpr Field<Owner, T> field(const char* key, T Owner::*member,
                                Presence presence = Presence::always) {
    return {key, member, presence};
}

/// A record's table: `static constexpr auto list = std::make_tuple(field(...), ...);`, in the
/// order the fields are written.
template <class Owner> struct Fields;

template <class T, class = void> struct is_record : std::false_type {};
template <class T> struct is_record<T, std::void_t<decltype(Fields<T>::list)>> : std::true_type {};

/// How a value of type T is written and read. Specialise it for a type the generic one does not
/// know (an enum with its own spellings, a value checked as a whole).
template <class T, class = void> struct Codec {
    static json write(const T& value) { return json(value); }
    static T read(const json& j, const std::string& key) {
        if (!holds(j)) throw BadField("'" + key + "' " + expected());
        return j.get<T>();
    }

private:
    static bool holds(const json& j) {
        if constexpr (std::is_same_v<T, bool>) {
            return j.is_boolean();
        } else if constexpr (std::is_integral_v<T>) {
            if (j.is_number_unsigned()) return std::in_range<T>(j.get<std::uint64_t>());
            return j.is_number_integer() && std::in_range<T>(j.get<std::int64_t>());
        } else if constexpr (std::is_floating_point_v<T>) {
            return j.is_number();
        } else if constexpr (std::is_same_v<T, std::string>) {
            return j.is_string();
        } else {
            static_assert(std::is_same_v<T, std::vector<std::string>>,
                          "a field of a new type: give it a Codec");
            return j.is_array() &&
                   std::all_of(j.begin(), j.end(), [](const json& e) { return e.is_string(); });
        }
    }
    static std::string expected() {
        if constexpr (std::is_same_v<T, bool>) return "is not true or false";
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
            return "is not an integer in its range";
        if constexpr (std::is_floating_point_v<T>) return "is not a number";
        if constexpr (std::is_same_v<T, std::string>) return "is not a string";
        return "is not an array of strings";
    }
};

/// Names to strings: an object whose every value is a string.
template <> struct Codec<std::map<std::string, std::string>> {
    static json write(const std::map<std::string, std::string>& values) { return json(values); }
    static std::map<std::string, std::string> read(const json& j, const std::string& key) {
        if (!j.is_object() ||
            !std::all_of(j.begin(), j.end(), [](const json& e) { return e.is_string(); }))
            throw BadField("'" + key + "' is not an object of strings");
        return j.get<std::map<std::string, std::string>>();
    }
};

template <class Owner> json write_record(const Owner& owner);
template <class Owner> Owner read_record(const json& j, const std::string& key);

/// A record inside a record: an object.
template <class T> struct Codec<T, std::enable_if_t<is_record<T>::value>> {
    static json write(const T& value) { return write_record(value); }
    static T read(const json& j, const std::string& key) { return read_record<T>(j, key); }
};

/// Absent as null.
template <class T> struct Codec<std::optional<T>> {
    static json write(const std::optional<T>& value) {
        return value ? Codec<T>::write(*value) : json(nullptr);
    }
    static std::optional<T> read(const json& j, const std::string& key) {
        if (j.is_null()) return std::nullopt;
        return Codec<T>::read(j, key);
    }
};

/// A list of records: an array of objects.
template <class T> struct Codec<std::vector<T>, std::enable_if_t<is_record<T>::value>> {
    static json write(const std::vector<T>& values) {
        json out = json::array();
        for (const auto& v : values)
            out.push_back(write_record(v));
        return out;
    }
    static std::vector<T> read(const json& j, const std::string& key) {
        if (!j.is_array() ||
            !std::all_of(j.begin(), j.end(), [](const json& e) { return e.is_object(); }))
            throw BadField("'" + key + "' is not an array of objects");
        std::vector<T> out;
        for (const auto& e : j)
            out.push_back(read_record<T>(e, key));
        return out;
    }
};

/// j[key], present and read as T.
template <class T> T read_field(const json& j, const std::string& key) {
    const auto found = j.find(key);
    if (found == j.end()) throw BadField("'" + key + "' is missing");
    return Codec<T>::read(*found, key);
}

template <class Owner> json write_record(const Owner& owner) {
    json j = json::object();
    std::apply(
        [&](const auto&... f) {
            ((j[f.key] =
                  Codec<std::decay_t<decltype(owner.*(f.member))>>::write(owner.*(f.member))),
             ...);
        },
        Fields<Owner>::list);
    return j;
}

/// Reads `j`, the object at `key`, field by field into a default Owner.
template <class Owner> Owner read_record(const json& j, const std::string& key) {
    if (!j.is_object()) throw BadField("'" + key + "' is not an object");
    Owner owner;
    const auto read_one = [&](const auto& f) {
        using T = std::decay_t<decltype(owner.*(f.member))>;
        if (f.presence == Presence::added && !j.contains(f.key)) return;
        owner.*(f.member) = read_field<T>(j, f.key);
    };
    std::apply([&](const auto&... f) { (read_one(f), ...); }, Fields<Owner>::list);
    return owner;
}

} // namespace sonata::record
