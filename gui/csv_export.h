// CSV export of any table model: a header row from the horizontal headers, then one line per
// row of DisplayRole values; fields with commas, quotes or newlines are quoted (RFC 4180).
// Free function; GUI thread (it reads the model).
#pragma once

#include <QAbstractItemModel>
#include <QString>

namespace servesim::gui {

QString to_csv(const QAbstractItemModel& model);
// Writes to_csv(model) to `path`; false with *error set when the file cannot be written.
bool write_csv(const QAbstractItemModel& model, const QString& path, QString* error);

}  // namespace servesim::gui
