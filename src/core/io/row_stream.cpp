// RowStream: drives a format's RowParser over blocks of an InputStream.
#include "flynn/io/row_stream.hpp"

#include <algorithm>
#include <optional>

#include "core/io/input_stream.hpp"
#include "core/io/row_parser.hpp"
#include "flynn/error.hpp"

namespace flynn::io {

using namespace detail;

struct RowStream::Impl {
  std::string path;
  LoadOptions options;  // the parser keeps a reference: it lives here
  ChunkLimits limits;
  Format format = Format::Csv;
  InputStream in;
  std::unique_ptr<RowParser> parser;
  // Text read but not yet parsed; its first `complete` bytes are whole lines (all of it
  // at the end of the input), which is what `lines` scans.
  std::string buf;
  std::size_t complete = 0;
  bool eof = false;
  LineScanner lines{std::string_view{}};
  std::uint64_t rows = 0;
  bool finished = false;
  // IDX: the whole file (uint8 images as their bytes), handed out in slices.
  std::optional<IdxImages> whole;

  Impl(const std::string& p, const LoadOptions& o, const ChunkLimits& l)
      : path(p), options(o), limits(l), in(p, o.max_input_bytes) {}

  // Reads one more block (more if needed to complete a line). False at the end of input.
  bool read_more() {
    bool any = false;
    while (!eof) {
      if (in.read(buf, std::max<std::size_t>(limits.block_bytes, 1)) == 0) {
        eof = true;
        break;
      }
      any = true;
      if (buf.find('\n', complete) != std::string::npos) break;
    }
    if (eof) {
      complete = buf.size();
    } else {
      const std::size_t nl = buf.rfind('\n');
      complete = nl == std::string::npos ? 0 : nl + 1;
    }
    return any;
  }

  std::string_view scannable() const { return std::string_view(buf).substr(0, complete); }

  // Drops the parsed text and reads the next block; the scanner continues the line count.
  void refill() {
    const std::uint64_t line_no = lines.line_number();
    buf.erase(0, lines.consumed());
    complete = 0;
    read_more();
    lines = LineScanner(scannable(), line_no, /*at_start=*/false);
  }

  void open() {
    read_more();
    while (true) {
      try {
        format = resolve_format(path, options.format, buf, eof);
        break;
      } catch (const NeedMoreText&) {
        if (!read_more()) eof = true, complete = buf.size();
      }
    }
    if (format == Format::Idx) {
      while (read_more()) {
      }
      whole.emplace(load_idx(path, std::move(buf), options));
      buf = std::string();
      return;
    }
    parser = make_row_parser(format, options, path);
    parser->set_chunk_cells(limits.max_values);
    while (true) {
      LineScanner attempt(scannable(), 0, /*at_start=*/true);
      try {
        parser->begin(attempt, eof);
        lines = attempt;
        // A long header (an ARFF file with a million attributes) grew the buffer to hold
        // all of it: drop the parsed text and give its memory back, so that the rows are
        // read with a block's worth of buffer rather than the header's size.
        if (lines.consumed() > limits.block_bytes) {
          const std::uint64_t line_no = lines.line_number();
          const std::size_t parsed = lines.consumed();
          buf.erase(0, parsed);
          buf.shrink_to_fit();
          complete -= parsed;
          lines = LineScanner(scannable(), line_no, /*at_start=*/false);
        }
        return;
      } catch (const NeedMoreText&) {
        // The header is parsed again from its start after each read, so the text read
        // before the next attempt at least doubles: the re-parsing of a long header (an
        // ARFF file with a million attributes) then costs at most about twice its size,
        // not its size squared over the block size.
        const std::size_t target = 2 * buf.size();
        bool any = false;
        while (!eof && buf.size() < target) any |= read_more();
        if (!any) eof = true, complete = buf.size();
      }
    }
  }

  std::uint64_t value_limit_now() const { return value_limit(options, in.produced()); }

  // The next chunk of an IDX file: its rows as floats, like a text chunk's.
  bool next_slice(Dataset& chunk) {
    const Dataset& all = whole->records();
    const std::size_t first = static_cast<std::size_t>(rows);
    const std::size_t n = std::min(all.n_rows - first, limits.max_rows);
    if (n == 0) {
      chunk = Dataset{};
      chunk.source = all.source;
      chunk.n_features = whole->n_features();
      chunk.has_labels = all.has_labels;
      return false;
    }
    chunk = whole->dataset(first, n);
    if (all.has_labels) {
      // Like a text chunk's: the classes its rows use, in the file's (sorted) order.
      std::vector<std::uint32_t> local(all.classes.size(), 0xFFFFFFFFu);
      for (std::uint32_t id : chunk.labels) local[id] = 0;
      std::vector<std::string> names;
      for (std::size_t id = 0; id < local.size(); ++id) {
        if (local[id] == 0xFFFFFFFFu) continue;
        local[id] = static_cast<std::uint32_t>(names.size());
        names.push_back(all.classes.name(id));
      }
      chunk.classes = LabelSet(std::move(names));
      for (std::uint32_t& id : chunk.labels) id = local[id];
    }
    rows += n;
    return true;
  }
};

RowStream::RowStream(const std::string& path, const LoadOptions& options, const ChunkLimits& limits)
    : impl_(std::make_unique<Impl>(path, options, limits)) {
  impl_->open();
}

RowStream::~RowStream() = default;
RowStream::RowStream(RowStream&&) noexcept = default;
RowStream& RowStream::operator=(RowStream&&) noexcept = default;

Format RowStream::format() const { return impl_->format; }
bool RowStream::has_labels() const {
  return impl_->whole ? impl_->whole->records().has_labels : impl_->parser->has_labels();
}
std::size_t RowStream::n_features() const {
  return impl_->whole ? impl_->whole->n_features() : impl_->parser->fixed_width();
}
std::optional<RowStream::WholeFile> RowStream::whole_file() const {
  if (!impl_->whole) return std::nullopt;
  return WholeFile{impl_->whole->rows(), &impl_->whole->records()};
}
bool RowStream::rereadable() const { return impl_->in.rereadable(); }
std::uint64_t RowStream::rows_read() const { return impl_->rows; }
std::uint64_t RowStream::bytes_read() const { return impl_->in.consumed(); }
std::uint64_t RowStream::file_size() const { return impl_->in.size_hint(); }

bool RowStream::next(Dataset& chunk) {
  Impl& s = *impl_;
  if (s.finished) {
    chunk = Dataset{};
    return false;
  }
  if (s.whole) {
    if (s.next_slice(chunk)) return true;
    s.finished = true;
    return false;
  }
  RowParser& parser = *s.parser;
  std::size_t max_rows = std::max<std::size_t>(s.limits.max_rows, 1);
  if (const std::size_t width = parser.fixed_width())
    max_rows = std::min<std::size_t>(
        max_rows, std::max<std::uint64_t>(1, s.limits.max_values / width));
  while (true) {
    parser.read_rows(s.lines, max_rows, s.value_limit_now());
    // Stop when the chunk is full (by rows, or by width: a line was given back), or at
    // the end of the text.
    if (parser.chunk_rows() >= max_rows || !s.lines.done() || s.eof) break;
    s.refill();
  }
  chunk = parser.take_chunk(s.value_limit_now());
  if (chunk.n_rows == 0) {
    s.finished = true;
    parser.end();
    return false;
  }
  s.rows += chunk.n_rows;
  return true;
}

}  // namespace flynn::io
