// Chart helpers shared by the views: a chart with servesim's look, and value axes created
// explicitly (Qt 6.4's createDefaultAxes() before data arrives leaves an empty 0-1 chart).
// Free functions; GUI thread only. The chart owns what these functions attach to it.
#pragma once

#include <QChart>
#include <QChartView>
#include <QLogValueAxis>
#include <QString>
#include <QValueAxis>

namespace servesim::gui {

// A chart titled `title` with a compact margin and the legend at the bottom.
QChart* make_chart(const QString& title);
// A value axis titled `title`, added to `chart` at `alignment`.
QValueAxis* add_axis(QChart* chart, const QString& title, Qt::Alignment alignment);
// Shows `chart` in `view` and deletes the chart shown before (QChartView only releases it).
void replace_chart(QChartView* view, QChart* chart);
// Sets the range to [min, max] widened to nice numbers; a degenerate range gets room around it.
void fit_axis(QValueAxis* axis, double min, double max);
// Whether positive values from `min` to `max` span more than `decades` powers of ten (a linear
// axis then squeezes the small ones onto zero); false when min <= 0, which a log axis cannot show.
bool spans_decades(double min, double max, double decades);
// A base-10 log axis titled `title`, added to `chart` at `alignment`, ranging over the powers of
// ten around [min, max] (min > 0).
QLogValueAxis* add_log_axis(QChart* chart, const QString& title, Qt::Alignment alignment,
                            double min, double max);

}  // namespace servesim::gui
