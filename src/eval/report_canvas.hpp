#pragma once
// A small drawing surface over cairo for the report's figures (report_figures.cpp): a PNG
// image at twice its nominal size (sharp on high-density screens), text placed by its
// anchor, and a plot frame that maps data coordinates to the image. Internal to flynn::eval.
#include <cairo.h>

#include <string>
#include <string_view>
#include <vector>

namespace flynn::eval::canvas {

/// An RGB colour, components in [0, 1].
struct Colour {
  double r = 0, g = 0, b = 0;
};
inline constexpr Colour kInk{0.13, 0.13, 0.13};
inline constexpr Colour kGrid{0.88, 0.88, 0.88};
inline constexpr Colour kBlue{0.122, 0.467, 0.706};
inline constexpr Colour kOrange{1.0, 0.498, 0.055};
inline constexpr Colour kGrey{0.55, 0.55, 0.55};

/// Where a text's anchor point lies on it: 0 = left (top), 0.5 = centre, 1 = right (bottom).
struct Anchor {
  double x = 0.0, y = 0.5;
};

/// An image being drawn (nominal pixels; the PNG has twice as many each way).
class Image {
 public:
  Image(int width, int height);
  ~Image();
  Image(const Image&) = delete;
  Image& operator=(const Image&) = delete;

  cairo_t* cr() const { return cr_; }
  int width() const { return width_; }
  int height() const { return height_; }
  /// The PNG bytes of what has been drawn. Throws flynn::Error when cairo fails.
  std::string png() const;

  void colour(const Colour& c, double alpha = 1.0) const;
  /// `text` at (x, y) in `size` points, its anchor there, turned by `degrees` (counter-
  /// clockwise). Returns the text's width.
  double text(std::string_view text, double x, double y, double size, Anchor anchor = {},
              bool bold = false, double degrees = 0.0) const;
  /// The width `text` would take.
  double text_width(std::string_view text, double size, bool bold = false) const;
  void line(double x0, double y0, double x1, double y1, double width, bool dashed = false) const;
  void fill_rect(double x, double y, double w, double h) const;
  /// A polyline through the points (x[i], y[i]) in image coordinates.
  void polyline(const std::vector<double>& x, const std::vector<double>& y, double width) const;

 private:
  int width_, height_;
  cairo_surface_t* surface_;
  cairo_t* cr_;
};

/// A rectangle of the image showing data in [x_min, x_max] × [y_min, y_max].
struct Frame {
  double left = 0, top = 0, width = 0, height = 0;
  double x_min = 0, x_max = 1, y_min = 0, y_max = 1;
  double x(double v) const { return left + (v - x_min) / (x_max - x_min) * width; }
  double y(double v) const { return top + height - (v - y_min) / (y_max - y_min) * height; }
};

/// Decimals of the tick labels of each axis.
struct TickDecimals {
  int x = 1, y = 1;
};

/// Draws the frame's box, grid lines and tick labels at `x_ticks` and `y_ticks` (data
/// values), and the axis titles.
void draw_axes(const Image& image, const Frame& f, const std::vector<double>& x_ticks,
               const std::vector<double>& y_ticks, TickDecimals decimals,
               const std::string& x_title, const std::string& y_title);

/// Ticks 0, 0.2, ..., 1.
std::vector<double> unit_ticks();

/// A legend box in the frame's corner (`right`, `bottom` choose which): one row per entry
/// with a line sample in its colour (dashed when asked).
struct LegendEntry {
  std::string label;
  Colour colour;
  bool dashed = false;
  bool block = false;  ///< a filled square instead of a line
};
void draw_legend(const Image& image, const Frame& f, const std::vector<LegendEntry>& entries,
                 bool right, bool bottom);

/// A long class name cut to `max_chars` characters (UTF-8 aware) with an ellipsis.
std::string shorten(const std::string& name, std::size_t max_chars);

}  // namespace flynn::eval::canvas
