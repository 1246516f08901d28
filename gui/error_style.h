// The GUI's one error colour and the styles built on it: a field whose value a validation error
// names, an error message (a banner, a validation line), an error inside rich text, and the
// brush item models paint a failing cell with. One place, so every view says "wrong" alike.
// Free functions; GUI thread only.
#pragma once

#include <QBrush>
#include <QColor>
#include <QString>

namespace servesim::gui {

// Material red 800: readable on the light palette and not the charts' series red.
QColor error_color();
// The brush of an item model's failing cell (Qt::ForegroundRole).
QBrush error_brush();
// A style sheet framing an invalid input.
QString invalid_field_style();
// A style sheet for a label that says what went wrong (`bold` for a banner).
QString error_text_style(bool bold);
// `html` in the error colour, for rich-text labels.
QString error_html(const QString& html);

}  // namespace servesim::gui
