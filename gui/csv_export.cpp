#include "gui/csv_export.h"

#include <QFile>
#include <QStringList>

namespace servesim::gui {
namespace {

QString field(const QVariant& value) {
  QString text = value.toString();
  if (text.contains(QLatin1Char(',')) || text.contains(QLatin1Char('"')) ||
      text.contains(QLatin1Char('\n'))) {
    text.replace(QStringLiteral("\""), QStringLiteral("\"\""));
    text = QLatin1Char('"') + text + QLatin1Char('"');
  }
  return text;
}

}  // namespace

QString to_csv(const QAbstractItemModel& model) {
  QString out;
  QStringList cells;
  for (int c = 0; c < model.columnCount(); ++c) cells << field(model.headerData(c, Qt::Horizontal));
  out += cells.join(QLatin1Char(',')) + QLatin1Char('\n');
  for (int r = 0; r < model.rowCount(); ++r) {
    cells.clear();
    for (int c = 0; c < model.columnCount(); ++c) cells << field(model.data(model.index(r, c)));
    out += cells.join(QLatin1Char(',')) + QLatin1Char('\n');
  }
  return out;
}

bool write_csv(const QAbstractItemModel& model, const QString& path, QString* error) {
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text)) {
    if (error) *error = QStringLiteral("cannot write '%1': %2").arg(path, file.errorString());
    return false;
  }
  const QByteArray bytes = to_csv(model).toUtf8();
  if (file.write(bytes) != bytes.size()) {
    if (error) *error = QStringLiteral("cannot write '%1': %2").arg(path, file.errorString());
    return false;
  }
  return true;
}

}  // namespace servesim::gui
