#include "report_canvas.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "flynn/error.hpp"

namespace flynn::eval::canvas {

namespace {

constexpr double kScale = 2.0;  // PNG pixels per nominal pixel
constexpr const char* kFont = "DejaVu Sans";

cairo_status_t append_png(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

void select_font(cairo_t* cr, double size, bool bold) {
  cairo_select_font_face(cr, kFont, CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
}

}  // namespace

Image::Image(int width, int height)
    : width_(width),
      height_(height),
      surface_(cairo_image_surface_create(CAIRO_FORMAT_RGB24, static_cast<int>(width * kScale),
                                          static_cast<int>(height * kScale))),
      cr_(cairo_create(surface_)) {
  if (cairo_status(cr_) != CAIRO_STATUS_SUCCESS) {
    const std::string why = cairo_status_to_string(cairo_status(cr_));
    cairo_destroy(cr_);
    cairo_surface_destroy(surface_);
    throw Error("report figure: cannot make an image: " + why);
  }
  cairo_scale(cr_, kScale, kScale);
  cairo_set_source_rgb(cr_, 1, 1, 1);
  cairo_paint(cr_);
}

Image::~Image() {
  cairo_destroy(cr_);
  cairo_surface_destroy(surface_);
}

std::string Image::png() const {
  cairo_surface_flush(surface_);
  std::string bytes;
  const cairo_status_t st = cairo_surface_write_to_png_stream(surface_, append_png, &bytes);
  if (st != CAIRO_STATUS_SUCCESS || cairo_status(cr_) != CAIRO_STATUS_SUCCESS)
    throw Error(std::string("report figure: cairo failed: ") +
                cairo_status_to_string(st != CAIRO_STATUS_SUCCESS ? st : cairo_status(cr_)));
  return bytes;
}

void Image::colour(const Colour& c, double alpha) const {
  cairo_set_source_rgba(cr_, c.r, c.g, c.b, alpha);
}

double Image::text_width(std::string_view text, double size, bool bold) const {
  select_font(cr_, size, bold);
  const std::string s(text);
  cairo_text_extents_t e;
  cairo_text_extents(cr_, s.c_str(), &e);
  return e.x_advance;
}

double Image::text(std::string_view text, double x, double y, double size, Anchor anchor, bool bold,
                   double degrees) const {
  select_font(cr_, size, bold);
  const std::string s(text);
  cairo_text_extents_t e;
  cairo_text_extents(cr_, s.c_str(), &e);
  cairo_font_extents_t fe;
  cairo_font_extents(cr_, &fe);
  cairo_save(cr_);
  cairo_translate(cr_, x, y);
  cairo_rotate(cr_, -degrees * M_PI / 180.0);
  // Vertical anchor on the font's ascent (top) to its baseline (bottom): the same for every
  // text of one size, so a row of labels lines up.
  cairo_move_to(cr_, -anchor.x * e.x_advance,
                fe.ascent * (1.0 - anchor.y) - 0.15 * fe.ascent * anchor.y);
  cairo_show_text(cr_, s.c_str());
  cairo_restore(cr_);
  return e.x_advance;
}

void Image::line(double x0, double y0, double x1, double y1, double width, bool dashed) const {
  cairo_save(cr_);
  cairo_set_line_width(cr_, width);
  if (dashed) {
    const double dash[] = {5.0, 4.0};
    cairo_set_dash(cr_, dash, 2, 0);
  }
  cairo_move_to(cr_, x0, y0);
  cairo_line_to(cr_, x1, y1);
  cairo_stroke(cr_);
  cairo_restore(cr_);
}

void Image::fill_rect(double x, double y, double w, double h) const {
  cairo_rectangle(cr_, x, y, w, h);
  cairo_fill(cr_);
}

void Image::polyline(const std::vector<double>& x, const std::vector<double>& y,
                     double width) const {
  if (x.empty()) return;
  cairo_save(cr_);
  cairo_set_line_width(cr_, width);
  cairo_set_line_join(cr_, CAIRO_LINE_JOIN_ROUND);
  cairo_move_to(cr_, x[0], y[0]);
  for (std::size_t i = 1; i < x.size(); ++i) cairo_line_to(cr_, x[i], y[i]);
  cairo_stroke(cr_);
  cairo_restore(cr_);
}

void draw_axes(const Image& im, const Frame& f, const std::vector<double>& x_ticks,
               const std::vector<double>& y_ticks, TickDecimals decimals,
               const std::string& x_title, const std::string& y_title) {
  for (double t : x_ticks) {
    im.colour(kGrid);
    im.line(f.x(t), f.top, f.x(t), f.top + f.height, 1.0);
    im.colour(kInk);
    im.text(fmt::format("{:.{}f}", t, decimals.x), f.x(t), f.top + f.height + 6, 11, {0.5, 0.0});
  }
  for (double t : y_ticks) {
    im.colour(kGrid);
    im.line(f.left, f.y(t), f.left + f.width, f.y(t), 1.0);
    im.colour(kInk);
    im.text(fmt::format("{:.{}f}", t, decimals.y), f.left - 6, f.y(t), 11, {1.0, 0.5});
  }
  im.colour(kInk);
  cairo_set_line_width(im.cr(), 1.0);
  cairo_rectangle(im.cr(), f.left, f.top, f.width, f.height);
  cairo_stroke(im.cr());
  im.text(x_title, f.left + f.width / 2, f.top + f.height + 26, 12, {0.5, 0.0});
  im.text(y_title, f.left - 44, f.top + f.height / 2, 12, {0.5, 1.0}, false, 90.0);
}

std::vector<double> unit_ticks() { return {0.0, 0.2, 0.4, 0.6, 0.8, 1.0}; }

void draw_legend(const Image& im, const Frame& f, const std::vector<LegendEntry>& entries,
                 bool right, bool bottom) {
  double text_w = 0;
  for (const LegendEntry& e : entries) text_w = std::max(text_w, im.text_width(e.label, 11));
  const double row = 18, w = text_w + 44, h = row * static_cast<double>(entries.size()) + 8;
  const double x = right ? f.left + f.width - w - 8 : f.left + 8;
  const double y = bottom ? f.top + f.height - h - 8 : f.top + 8;
  im.colour({1, 1, 1}, 0.9);
  im.fill_rect(x, y, w, h);
  im.colour(kGrey);
  cairo_set_line_width(im.cr(), 0.8);
  cairo_rectangle(im.cr(), x, y, w, h);
  cairo_stroke(im.cr());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const LegendEntry& e = entries[i];
    const double cy = y + 4 + row * (static_cast<double>(i) + 0.5);
    im.colour(e.colour);
    if (e.block) {
      im.fill_rect(x + 10, cy - 5, 22, 10);
    } else {
      im.line(x + 8, cy, x + 34, cy, 2.0, e.dashed);
    }
    im.colour(kInk);
    im.text(e.label, x + 40, cy, 11, {0.0, 0.5});
  }
}

std::string shorten(const std::string& name, std::size_t max_chars) {
  std::size_t chars = 0, i = 0;
  for (; i < name.size(); ++i) {
    if ((static_cast<unsigned char>(name[i]) & 0xC0) == 0x80)
      continue;  // a UTF-8 continuation byte
    if (chars == max_chars - 1) break;
    ++chars;
  }
  if (i >= name.size()) return name;
  std::size_t rest = 0;
  for (std::size_t j = i; j < name.size(); ++j)
    rest += (static_cast<unsigned char>(name[j]) & 0xC0) != 0x80;
  return rest <= 1 ? name : name.substr(0, i) + "\u2026";
}

}  // namespace flynn::eval::canvas
