#pragma once
// arc-replay export: a run's log as tables for analysis tools (columns in docs/export.md).
//   events:       one row per event
//   evaluations:  one row per (evaluated candidate, workload), joined with its proposal and
//                 its decision
#include <ostream>
#include <string>
#include <vector>

#include "base/status.h"
#include "events/codec.h"

namespace arc::replay {

enum class ExportTable { kEvents, kEvaluations };
enum class ExportFormat { kCsv, kJsonl };

// Column names of a table, in order (CSV header; JSONL keys).
const std::vector<std::string>& export_columns(ExportTable table);

// Writes the table. JSONL events carry the whole event (events::to_json) besides the columns.
void export_log(const std::vector<events::Event>& log, ExportTable table, ExportFormat format,
                std::ostream& out);

// RFC 4180 quoting: fields with a comma, quote or line break are quoted, quotes doubled.
std::string csv_field(const std::string& s);

}  // namespace arc::replay
