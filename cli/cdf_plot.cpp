#include "cli/cdf_plot.h"

#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>

#include "models/config_error.h"

namespace servesim {
namespace {

// Pixels.
constexpr int kWidth = 1200;
constexpr int kPanelHeight = 420;
constexpr int kColumns = 2;
constexpr double kLegendRowHeight = 22;
constexpr double kMarginLeft = 72;
constexpr double kMarginRight = 34;
constexpr double kMarginTop = 34;
constexpr double kMarginBottom = 52;
// A panel's x axis turns logarithmic when its largest value is this many times its smallest.
constexpr double kLogSpread = 100.0;

struct Rgb {
  double r, g, b;
};

// The GUI's Compare palette (gui/compare_view.cpp), so a run has one colour everywhere.
constexpr Rgb kPalette[] = {
    {0x3b / 255.0, 0x6e / 255.0, 0xa8 / 255.0}, {0xe3 / 255.0, 0x8b / 255.0, 0x2c / 255.0},
    {0x2e / 255.0, 0x9e / 255.0, 0x6a / 255.0}, {0xc6 / 255.0, 0x28 / 255.0, 0x28 / 255.0},
    {0x8c / 255.0, 0x6b / 255.0, 0xb1 / 255.0}, {0x8a / 255.0, 0x6d / 255.0, 0x3b / 255.0},
    {0xd6 / 255.0, 0x6b / 255.0, 0xb0 / 255.0}, {0x55 / 255.0, 0x55 / 255.0, 0x55 / 255.0}};

void set_colour(cairo_t* cr, size_t run) {
  const Rgb& c = kPalette[run % (sizeof kPalette / sizeof kPalette[0])];
  cairo_set_source_rgb(cr, c.r, c.g, c.b);
}

struct Rect {
  double x0, y0, x1, y1;  // pixels; y grows downwards
};

// The x axis of one panel: its range, scale and labelled ticks.
struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  std::vector<double> ticks;
  std::vector<double> minor_ticks;  // log axes: 2..9 x each decade

  double to_unit(double v) const {
    if (log)
      return (std::log10(std::max(v, lo)) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
    return (v - lo) / (hi - lo);
  }
};

double nice_step(double span) {
  const double raw = span / 5;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (m * magnitude >= raw) return m * magnitude;
  }
  return 10 * magnitude;
}

Axis make_axis(double lo, double hi) {
  Axis a;
  if (lo > 0 && hi / lo >= kLogSpread) {
    a.log = true;
    const int first = static_cast<int>(std::floor(std::log10(lo)));
    const int last = static_cast<int>(std::ceil(std::log10(hi)));
    a.lo = std::pow(10.0, first);
    a.hi = std::pow(10.0, last);
    for (int e = first; e <= last; ++e) {
      a.ticks.push_back(std::pow(10.0, e));
      for (int m = 2; m <= 9 && e < last; ++m) a.minor_ticks.push_back(m * std::pow(10.0, e));
    }
    return a;
  }
  if (hi <= lo) {
    const double pad = std::max(std::fabs(lo) * 0.1, 1e-9);
    lo -= pad;
    hi += pad;
  }
  const double step = nice_step(hi - lo);
  a.lo = std::floor(lo / step) * step;
  a.hi = std::ceil(hi / step) * step;
  for (double t = a.lo; t <= a.hi + step * 1e-6; t += step) a.ticks.push_back(t);
  return a;
}

std::string tick_label(double v) {
  char buf[32];
  if (std::fabs(v) < 1e-12) v = 0;
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// Draws `text` with its anchor at (x, y): ax/ay 0 = left/top, 0.5 = centre, 1 = right/bottom.
void draw_text(cairo_t* cr, const std::string& text, double x, double y, double ax, double ay) {
  cairo_text_extents_t text_extents;
  cairo_text_extents(cr, text.c_str(), &text_extents);
  // The font's ascent and descent, not the glyphs', so labels of one row share a baseline.
  cairo_font_extents_t font_extents;
  cairo_font_extents(cr, &font_extents);
  const double line_height = font_extents.ascent + font_extents.descent;
  cairo_move_to(cr, x - text_extents.x_advance * ax, y + font_extents.ascent - line_height * ay);
  cairo_show_text(cr, text.c_str());
}

void draw_frame_and_grid(cairo_t* cr, const Rect& r, const Axis& x, const CdfPanel& panel) {
  cairo_set_line_width(cr, 1);
  cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
  for (double t : x.ticks) {
    const double px = std::round(r.x0 + x.to_unit(t) * (r.x1 - r.x0)) + 0.5;
    cairo_move_to(cr, px, r.y0);
    cairo_line_to(cr, px, r.y1);
  }
  for (double f : {0.25, 0.5, 0.75}) {
    const double py = std::round(r.y1 - f * (r.y1 - r.y0)) + 0.5;
    cairo_move_to(cr, r.x0, py);
    cairo_line_to(cr, r.x1, py);
  }
  cairo_stroke(cr);
  cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
  cairo_rectangle(cr, r.x0 + 0.5, r.y0 + 0.5, r.x1 - r.x0, r.y1 - r.y0);
  cairo_stroke(cr);
  cairo_set_font_size(cr, 12);
  for (double t : x.ticks) {
    const double px = r.x0 + x.to_unit(t) * (r.x1 - r.x0);
    cairo_move_to(cr, px, r.y1);
    cairo_line_to(cr, px, r.y1 + 5);
    draw_text(cr, tick_label(t), px, r.y1 + 8, 0.5, 0);
  }
  for (double t : x.minor_ticks) {
    const double px = r.x0 + x.to_unit(t) * (r.x1 - r.x0);
    cairo_move_to(cr, px, r.y1);
    cairo_line_to(cr, px, r.y1 + 3);
  }
  for (double f : {0.0, 0.25, 0.5, 0.75, 1.0}) {
    const double py = r.y1 - f * (r.y1 - r.y0);
    cairo_move_to(cr, r.x0 - 5, py);
    cairo_line_to(cr, r.x0, py);
    draw_text(cr, tick_label(f), r.x0 - 8, py, 1, 0.5);
  }
  cairo_stroke(cr);
  cairo_set_font_size(cr, 13);
  draw_text(cr, panel.x_label + (x.log ? ", log scale" : ""), (r.x0 + r.x1) / 2, r.y1 + 28, 0.5, 0);
  cairo_save(cr);
  cairo_translate(cr, r.x0 - 50, (r.y0 + r.y1) / 2);
  cairo_rotate(cr, -std::numbers::pi / 2);
  draw_text(cr, panel.y_label, 0, 0, 0.5, 0.5);
  cairo_restore(cr);
}

void draw_curve(cairo_t* cr, const Rect& r, const Axis& x, const CdfCurve& curve, size_t run) {
  if (curve.points.empty()) return;
  auto px = [&](double v) { return r.x0 + x.to_unit(v) * (r.x1 - r.x0); };
  auto py = [&](double f) { return r.y1 - f * (r.y1 - r.y0); };
  set_colour(cr, run);
  cairo_set_line_width(cr, 2);
  if (curve.from_percentiles) {
    for (size_t i = 0; i < curve.points.size(); ++i) {
      const CdfPlotPoint& p = curve.points[i];
      if (i == 0)
        cairo_move_to(cr, px(p.x), py(p.fraction));
      else
        cairo_line_to(cr, px(p.x), py(p.fraction));
    }
    cairo_stroke(cr);
    for (const CdfPlotPoint& p : curve.points) {
      cairo_arc(cr, px(p.x), py(p.fraction), 3.5, 0, 2 * std::numbers::pi);
      cairo_fill(cr);
    }
    return;
  }
  double previous = 0;
  cairo_move_to(cr, px(curve.points.front().x), py(0));
  for (const CdfPlotPoint& p : curve.points) {
    cairo_line_to(cr, px(p.x), py(previous));
    cairo_line_to(cr, px(p.x), py(p.fraction));
    previous = p.fraction;
  }
  cairo_line_to(cr, r.x1, py(previous));
  cairo_stroke(cr);
}

void draw_panel(cairo_t* cr, const Rect& area, const CdfPanel& panel) {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  double lowest_positive = lo;
  for (const CdfCurve& c : panel.curves) {
    for (const CdfPlotPoint& p : c.points) {
      lo = std::min(lo, p.x);
      hi = std::max(hi, p.x);
      if (p.x > 0) lowest_positive = std::min(lowest_positive, p.x);
    }
  }
  const Rect r{area.x0 + kMarginLeft, area.y0 + kMarginTop, area.x1 - kMarginRight,
               area.y1 - kMarginBottom};
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
  cairo_set_font_size(cr, 15);
  draw_text(cr, panel.title, r.x0, area.y0 + 10, 0, 0);
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  const bool empty = !(hi >= lo);
  // Zero latencies (a log axis cannot show them) sit on its left edge.
  const bool log_possible = lowest_positive < std::numeric_limits<double>::infinity() &&
                            hi / lowest_positive >= kLogSpread;
  const Axis x = empty ? make_axis(0, 1) : make_axis(log_possible ? lowest_positive : lo, hi);
  draw_frame_and_grid(cr, r, x, panel);
  if (empty) {
    cairo_set_source_rgb(cr, 0.4, 0.4, 0.4);
    draw_text(cr, "no data", (r.x0 + r.x1) / 2, (r.y0 + r.y1) / 2, 0.5, 0.5);
    return;
  }
  cairo_save(cr);
  cairo_rectangle(cr, r.x0, r.y0 - 3, r.x1 - r.x0 + 3, r.y1 - r.y0 + 6);
  cairo_clip(cr);
  for (size_t run = 0; run < panel.curves.size(); ++run)
    draw_curve(cr, r, x, panel.curves[run], run);
  cairo_restore(cr);
}

// Lays the legend out in rows across the width; returns the height it takes.
double draw_legend(cairo_t* cr, const std::vector<std::string>& legend, bool draw) {
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, 13);
  double x = kMarginLeft;
  double y = 12;
  for (size_t i = 0; i < legend.size(); ++i) {
    cairo_text_extents_t e;
    cairo_text_extents(cr, legend[i].c_str(), &e);
    const double width = 28 + e.x_advance + 24;
    if (x + width > kWidth - kMarginRight && x > kMarginLeft) {
      x = kMarginLeft;
      y += kLegendRowHeight;
    }
    if (draw) {
      set_colour(cr, i);
      cairo_set_line_width(cr, 3);
      cairo_move_to(cr, x, y + 8);
      cairo_line_to(cr, x + 22, y + 8);
      cairo_stroke(cr);
      cairo_set_source_rgb(cr, 0, 0, 0);
      draw_text(cr, legend[i], x + 28, y + 8, 0, 0.5);
    }
    x += width;
  }
  return y + kLegendRowHeight + 4;
}

}  // namespace

std::vector<CdfPlotPoint> empirical_cdf(const std::vector<double>& sorted, double scale,
                                        size_t max_points) {
  std::vector<CdfPlotPoint> points;
  const size_t n = sorted.size();
  if (n == 0 || max_points == 0) return points;
  const size_t count = std::min(n, max_points);
  for (size_t k = 1; k <= count; ++k) {
    // The k-th of `count` evenly spaced ranks; with count == n, every sample.
    const size_t rank = (k * n + count - 1) / count;  // 1..n
    points.push_back(
        {sorted[rank - 1] * scale, static_cast<double>(rank) / static_cast<double>(n)});
  }
  return points;
}

void write_cdf_png(const std::string& path, const std::vector<CdfPanel>& panels,
                   const std::vector<std::string>& legend) {
  cairo_surface_t* probe = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 1);
  cairo_t* probe_cr = cairo_create(probe);
  const double legend_height = draw_legend(probe_cr, legend, false);
  cairo_destroy(probe_cr);
  cairo_surface_destroy(probe);

  const int rows = static_cast<int>((panels.size() + kColumns - 1) / kColumns);
  const int height = static_cast<int>(legend_height) + rows * kPanelHeight;
  cairo_surface_t* surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, kWidth, height);
  cairo_t* cr = cairo_create(surface);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  draw_legend(cr, legend, true);
  const double panel_width = static_cast<double>(kWidth) / kColumns;
  for (size_t i = 0; i < panels.size(); ++i) {
    const double x0 = static_cast<double>(i % kColumns) * panel_width;
    const double y0 = legend_height + static_cast<double>(i / kColumns) * kPanelHeight;
    draw_panel(cr, {x0, y0, x0 + panel_width, y0 + kPanelHeight}, panels[i]);
  }
  cairo_destroy(cr);
  const cairo_status_t status = cairo_surface_write_to_png(surface, path.c_str());
  cairo_surface_destroy(surface);
  if (status != CAIRO_STATUS_SUCCESS) {
    throw ConfigError("--plot: cannot write '" + path + "': " + cairo_status_to_string(status));
  }
}

}  // namespace servesim
