#include "resp/reply_builder.h"

#include "core/string_number.h"

namespace goblin {

void ReplyBuilder::Header(char type, int64_t count) {
  if (over_limit()) return;
  char buf[kInt64TextMax + 3];
  buf[0] = type;
  size_t n = 1 + FormatInt64(count, buf + 1);
  buf[n++] = '\r';
  buf[n++] = '\n';
  out_->append(buf, n);
}

void ReplyBuilder::Simple(std::string_view text) {
  if (over_limit()) return;
  out_->push_back('+');
  out_->append(text);
  out_->append("\r\n");
}

void ReplyBuilder::Error(std::string_view text) {
  if (over_limit()) return;
  out_->push_back('-');
  while (!text.empty() && (text.back() == '\r' || text.back() == '\n')) text.remove_suffix(1);
  // Errors may quote user input; like Redis, drop trailing CR/LF and turn the others into
  // spaces so the reply stays one line.
  for (size_t line_end; (line_end = text.find_first_of("\r\n")) != std::string_view::npos;) {
    out_->append(text.substr(0, line_end));
    out_->push_back(' ');
    text.remove_prefix(line_end + 1);
  }
  out_->append(text);
  out_->append("\r\n");
}

void ReplyBuilder::Integer(int64_t value) { Header(':', value); }

void ReplyBuilder::Bulk(std::string_view bytes) {
  if (over_limit()) return;
  Header('$', static_cast<int64_t>(bytes.size()));
  out_->append(bytes);
  out_->append("\r\n");
}

void ReplyBuilder::Null() { Raw(resp3() ? "_\r\n" : "$-1\r\n"); }
void ReplyBuilder::NullArray() { Raw(resp3() ? "_\r\n" : "*-1\r\n"); }
void ReplyBuilder::Array(size_t count) { Header('*', static_cast<int64_t>(count)); }

void ReplyBuilder::Map(size_t pairs) {
  if (resp3()) {
    Header('%', static_cast<int64_t>(pairs));
  } else {
    Header('*', static_cast<int64_t>(pairs * 2));
  }
}

void ReplyBuilder::Set(size_t count) { Header(resp3() ? '~' : '*', static_cast<int64_t>(count)); }
void ReplyBuilder::Push(size_t count) { Header(resp3() ? '>' : '*', static_cast<int64_t>(count)); }

void ReplyBuilder::Double(double value) {
  if (over_limit()) return;
  std::string text = FormatDouble(value);
  if (resp3()) {
    out_->push_back(',');
    out_->append(text);
    out_->append("\r\n");
  } else {
    Bulk(text);
  }
}

void ReplyBuilder::Bool(bool value) {
  if (resp3()) {
    Raw(value ? "#t\r\n" : "#f\r\n");
  } else {
    Raw(value ? ":1\r\n" : ":0\r\n");
  }
}

void ReplyBuilder::Verbatim(std::string_view text, std::string_view format) {
  if (!resp3()) {
    Bulk(text);
    return;
  }
  if (over_limit()) return;
  Header('=', static_cast<int64_t>(text.size() + format.size() + 1));
  out_->append(format);
  out_->push_back(':');
  out_->append(text);
  out_->append("\r\n");
}

void ReplyBuilder::BigNumber(std::string_view digits) {
  if (!resp3()) {
    Bulk(digits);
    return;
  }
  if (over_limit()) return;
  out_->push_back('(');
  out_->append(digits);
  out_->append("\r\n");
}

}  // namespace goblin
