// The smallest JSON value that satisfies a JSON Schema (or a Gemini OpenAPI-style schema): fills
// the required arguments of a tool call and answers a side request that asks for structured output.
// Private to the scripted model server.
#pragma once

#include <nlohmann/json.hpp>

namespace sonata::probes {

/// Which object properties a sample fills.
enum class SampleFields {
    required_only, ///< Only those listed in "required" (tool calls: never switch on an option).
    all,           ///< Every listed property (structured answers: the reader may want them all).
};

/// A value of the schema's type: the first enum value, a const, a default, the minimum of a
/// number, "sonata probe" for strings, objects filled per `fields`, arrays of minItems samples.
nlohmann::json schema_sample(const nlohmann::json& schema, SampleFields fields);

/// `args` with every required property of `schema` that it lacks filled from schema_sample.
nlohmann::json fill_required(nlohmann::json args, const nlohmann::json& schema);

} // namespace sonata::probes
