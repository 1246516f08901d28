#include "gui/error_style.h"

namespace servesim::gui {

QColor error_color() {
  return QColor(0xc6, 0x28, 0x28);
}

QBrush error_brush() {
  return QBrush(error_color());
}

QString invalid_field_style() {
  return QStringLiteral("border: 1px solid %1;").arg(error_color().name());
}

QString error_text_style(bool bold) {
  const QString colour = QStringLiteral("color: %1;").arg(error_color().name());
  return bold ? colour + QStringLiteral(" font-weight: bold;") : colour;
}

QString error_html(const QString& html) {
  return QStringLiteral("<span style='color:%1'>%2</span>").arg(error_color().name(), html);
}

}  // namespace servesim::gui
