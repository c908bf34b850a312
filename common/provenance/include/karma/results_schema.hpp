// The results document's version (docs/results-format.md). Its schema is the file
// python/src/karma_tools/schemas/results.schema.json, which karma-validate-results and the Python
// tools check documents against.
#pragma once

namespace karma {

// Version 2 added kernels[].implementation and kernels[].variant; the
// schema reads version 1 documents too (without them).
inline constexpr int results_schema_version = 2;

}  // namespace karma
