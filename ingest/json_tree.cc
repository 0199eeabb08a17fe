#include "ingest/json_tree.h"

#include <cmath>
#include <cstdlib>
#include <string>
#include <system_error>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/charconv.h"
#include "absl/strings/str_cat.h"

namespace roastcoffea {
namespace {

// protobuf's JSON parser skips what ascii_isspace() calls space, \v and \f included.
bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

bool IsNumberCharacter(char c) {
  return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-' ||
         c == 'x';
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendUtf8(uint32_t code_point, std::string* out) {
  if (code_point < 0x80) {
    out->push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

}  // namespace

// The length of the well-formed UTF-8 sequence at text[i] (a byte >= 0x80), or 0: no overlong
// forms, no surrogates, nothing above U+10FFFF.
size_t Utf8SequenceLength(absl::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const auto continuation = [&](size_t k) { return k < text.size() && (byte(k) & 0xC0) == 0x80; };
  const unsigned char lead = byte(i);
  if (lead >= 0xC2 && lead <= 0xDF) return continuation(i + 1) ? 2 : 0;
  if (lead >= 0xE0 && lead <= 0xEF) {
    if (!continuation(i + 1) || !continuation(i + 2)) return 0;
    const unsigned char second = byte(i + 1);
    if (lead == 0xE0 && second < 0xA0) return 0;   // overlong
    if (lead == 0xED && second >= 0xA0) return 0;  // a surrogate
    return 3;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    if (!continuation(i + 1) || !continuation(i + 2) || !continuation(i + 3)) return 0;
    const unsigned char second = byte(i + 1);
    if (lead == 0xF0 && second < 0x90) return 0;   // overlong
    if (lead == 0xF4 && second >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

class JsonTree::Parser {
 public:
  Parser(JsonTree* tree, absl::string_view json) : tree_(*tree), json_(json) {}

  absl::Status Run() {
    SkipSpace();
    uint32_t root;
    if (absl::Status status = Value(0, &root); !status.ok()) return status;
    SkipSpace();
    if (pos_ != json_.size()) return Error("unexpected text after the value");
    return absl::OkStatus();
  }

 private:
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(what, " at byte ", pos_));
  }

  void SkipSpace() {
    while (pos_ < json_.size() && IsSpace(json_[pos_])) ++pos_;
  }

  bool Consume(absl::string_view token) {
    if (json_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }

  uint32_t NewNode(JsonNode::Kind kind) {
    tree_.nodes_.emplace_back();
    tree_.nodes_.back().kind = kind;
    return static_cast<uint32_t>(tree_.nodes_.size() - 1);
  }

  absl::Status Value(int depth, uint32_t* index) {
    if (pos_ >= json_.size()) return Error("expected a value");
    const char c = json_[pos_];
    switch (c) {
      case '{':
      case '[':
        if (depth + 1 > kMaxJsonDepth) return Error("nested too deep");
        return c == '{' ? Object(depth + 1, index) : List(depth + 1, index);
      case '"':
      case '\'': {
        *index = NewNode(JsonNode::Kind::kString);
        uint32_t begin, size;
        if (absl::Status status = String(&begin, &size); !status.ok()) return status;
        tree_.nodes_[*index].text_begin = begin;
        tree_.nodes_[*index].text_size = size;
        return absl::OkStatus();
      }
      case 't':
      case 'f':
        if (Consume("true") || Consume("false")) {
          *index = NewNode(JsonNode::Kind::kBool);
          tree_.nodes_[*index].boolean = c == 't';
          return absl::OkStatus();
        }
        return Error("expected a value");
      case 'n':
        if (!Consume("null")) return Error("expected a value");
        *index = NewNode(JsonNode::Kind::kNull);
        return absl::OkStatus();
      case '-':
        return Number(index);
      default:
        if (c >= '0' && c <= '9') return Number(index);
        return Error("expected a value");
    }
  }

  // As protobuf's parser: the token is the run of digits and ".eE+-x"; with '.', 'e' or 'E' it
  // is a double as strtod reads it, otherwise an integer without leading zeros (a double when
  // too large for 64 bits).
  absl::Status Number(uint32_t* index) {
    const size_t start = pos_;
    bool floating = false;
    while (pos_ < json_.size() && IsNumberCharacter(json_[pos_])) {
      const char c = json_[pos_++];
      floating |= c == '.' || c == 'e' || c == 'E';
    }
    const absl::string_view token = json_.substr(start, pos_ - start);
    const bool negative = token[0] == '-';
    double value = 0;
    if (!floating) {
      if ((!negative && token.size() >= 2 && token[0] == '0') ||
          (negative && token.size() >= 3 && token[1] == '0')) {
        pos_ = start;
        return Error("octal/hex numbers are not valid JSON values");
      }
      const absl::string_view digits = token.substr(negative ? 1 : 0);
      bool plain = !digits.empty() && digits.size() <= 15;
      int64_t n = 0;
      for (size_t k = 0; plain && k < digits.size(); ++k) {
        plain = digits[k] >= '0' && digits[k] <= '9';
        n = n * 10 + (digits[k] - '0');
      }
      if (plain) {  // exact in a double: the common case (counts, byte sizes)
        value = negative ? (n == 0 ? -0.0 : static_cast<double>(-n)) : static_cast<double>(n);
        return NumberNode(value, index);
      }
    }
    // Correctly rounded, as strtod; strtod itself (locale-free here: no '.' is a comma in
    // JSON) for what absl does not read (hex floats) and for out-of-range values.
    const absl::from_chars_result result =
        absl::from_chars(token.data(), token.data() + token.size(), value);
    if (result.ec != std::errc() || result.ptr != token.data() + token.size()) {
      const std::string text(token);
      char* end = nullptr;
      value = std::strtod(text.c_str(), &end);
      if (text.empty() || end != text.c_str() + text.size()) {
        pos_ = start;
        return Error("unable to parse number");
      }
    }
    if (!std::isfinite(value)) {
      pos_ = start;
      return Error("number exceeds the range of double");
    }
    return NumberNode(value, index);
  }

  absl::Status NumberNode(double value, uint32_t* index) {
    *index = NewNode(JsonNode::Kind::kNumber);
    tree_.nodes_[*index].number = value;
    return absl::OkStatus();
  }

  // The string at json_[pos_] == '"' (or '\'', as protobuf accepts), unescaped into the tree's
  // text.
  absl::Status String(uint32_t* begin, uint32_t* size) {
    std::string& text = tree_.text_;
    const size_t string_start = pos_;
    const char quote = json_[pos_];
    *begin = static_cast<uint32_t>(text.size());
    ++pos_;
    while (true) {
      // The plain run up to the next quote, backslash or non-ASCII byte.
      size_t run = pos_;
      while (run < json_.size()) {
        const unsigned char c = static_cast<unsigned char>(json_[run]);
        if (c == static_cast<unsigned char>(quote) || c == '\\' || c >= 0x80) break;
        ++run;
      }
      text.append(json_.data() + pos_, run - pos_);
      pos_ = run;
      if (pos_ >= json_.size()) {
        pos_ = string_start;
        return Error("unterminated string");
      }
      const char c = json_[pos_];
      if (c == quote) {
        ++pos_;
        break;
      }
      if (c != '\\') {
        const size_t length = Utf8SequenceLength(json_, pos_);
        if (length == 0) return Error("invalid UTF-8 in a string");
        text.append(json_.data() + pos_, length);
        pos_ += length;
        continue;
      }
      if (++pos_ >= json_.size()) continue;  // unterminated, reported above
      if (absl::Status status = Escape(&text); !status.ok()) return status;
    }
    *size = static_cast<uint32_t>(text.size() - *begin);
    return absl::OkStatus();
  }

  // The escape sequence after a backslash (json_[pos_]), appended unescaped to `text`.
  absl::Status Escape(std::string* text) {
    const char escaped = json_[pos_++];
    switch (escaped) {
      case 'b':
        text->push_back('\b');
        break;
      case 'f':
        text->push_back('\f');
        break;
      case 'n':
        text->push_back('\n');
        break;
      case 'r':
        text->push_back('\r');
        break;
      case 't':
        text->push_back('\t');
        break;
      case 'u': {
        uint32_t code_point;
        if (absl::Status status = CodeUnit(&code_point); !status.ok()) return status;
        if (code_point >= 0xDC00 && code_point <= 0xDFFF) {
          return Error("invalid unicode code point");
        }
        if (code_point >= 0xD800 && code_point <= 0xDBFF) {
          uint32_t low = 0;
          if (!Consume("\\u")) return Error("missing low surrogate");
          if (absl::Status status = CodeUnit(&low); !status.ok()) return status;
          if (low < 0xDC00 || low > 0xDFFF) return Error("missing low surrogate");
          code_point = 0x10000 + ((code_point - 0xD800) << 10) + (low - 0xDC00);
        }
        AppendUtf8(code_point, text);
        break;
      }
      default:  // '"', '\\', '/', and any other character stands for itself (as protobuf)
        if (static_cast<unsigned char>(escaped) >= 0x80) {
          --pos_;
          const size_t length = Utf8SequenceLength(json_, pos_);
          if (length == 0) return Error("invalid UTF-8 in a string");
          text->append(json_.data() + pos_, length);
          pos_ += length;
        } else {
          text->push_back(escaped);
        }
    }
    return absl::OkStatus();
  }

  // Four hex digits after "\u".
  absl::Status CodeUnit(uint32_t* value) {
    *value = 0;
    for (int k = 0; k < 4; ++k, ++pos_) {
      const int digit = pos_ < json_.size() ? HexDigit(json_[pos_]) : -1;
      if (digit < 0) return Error("invalid escape sequence");
      *value = *value * 16 + static_cast<uint32_t>(digit);
    }
    return absl::OkStatus();
  }

  // A key without quotes, as protobuf accepts: a letter, '_' or '$', then those or digits; not
  // true, false or null.
  absl::Status BareKey(uint32_t* begin, uint32_t* size) {
    const auto letter = [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
    };
    const size_t start = pos_;
    if (!letter(json_[pos_])) return Error("expected a key");
    while (pos_ < json_.size() &&
           (letter(json_[pos_]) || (json_[pos_] >= '0' && json_[pos_] <= '9'))) {
      ++pos_;
    }
    const absl::string_view key = json_.substr(start, pos_ - start);
    if (key == "true" || key == "false" || key == "null") {
      pos_ = start;
      return Error("expected a key");
    }
    *begin = static_cast<uint32_t>(tree_.text_.size());
    *size = static_cast<uint32_t>(key.size());
    tree_.text_.append(key.data(), key.size());
    return absl::OkStatus();
  }

  // Links `child` after `*last` (or as the first child of `parent`).
  void Append(uint32_t parent, uint32_t child, uint32_t* last) {
    if (*last == JsonNode::kNone) {
      tree_.nodes_[parent].first_child = child;
    } else {
      tree_.nodes_[*last].next_sibling = child;
    }
    *last = child;
  }

  absl::Status List(int depth, uint32_t* index) {
    *index = NewNode(JsonNode::Kind::kList);
    ++pos_;
    uint32_t last = JsonNode::kNone;
    while (true) {
      SkipSpace();
      if (pos_ < json_.size() && json_[pos_] == ']') {  // also after a trailing comma
        ++pos_;
        return absl::OkStatus();
      }
      uint32_t child;
      if (absl::Status status = Value(depth, &child); !status.ok()) return status;
      Append(*index, child, &last);
      SkipSpace();
      if (pos_ < json_.size() && json_[pos_] == ',') {
        ++pos_;
      } else if (pos_ >= json_.size() || json_[pos_] != ']') {
        return Error("expected , or ] after a list value");
      }
    }
  }

  absl::Status Object(int depth, uint32_t* index) {
    *index = NewNode(JsonNode::Kind::kObject);
    ++pos_;
    uint32_t last = JsonNode::kNone;
    const size_t keys_start = tree_.keys_.size();
    // Large objects find a repeated key by hashing, small ones by comparing.
    constexpr size_t kLinearKeys = 16;
    absl::flat_hash_set<std::string> many_keys;
    while (true) {
      SkipSpace();
      if (pos_ < json_.size() && json_[pos_] == '}') {
        ++pos_;
        break;
      }
      if (pos_ >= json_.size()) return Error("expected a key");
      const size_t key_start = pos_;
      uint32_t key_begin, key_size;
      if (json_[pos_] == '"' || json_[pos_] == '\'') {
        if (absl::Status status = String(&key_begin, &key_size); !status.ok()) return status;
      } else if (absl::Status status = BareKey(&key_begin, &key_size); !status.ok()) {
        return status;
      }
      const absl::string_view key(tree_.text_.data() + key_begin, key_size);
      const size_t count = tree_.keys_.size() - keys_start;
      bool repeated = false;
      if (count < kLinearKeys) {
        for (size_t k = keys_start; k < tree_.keys_.size() && !repeated; ++k) {
          repeated = absl::string_view(tree_.text_.data() + tree_.keys_[k].first,
                                       tree_.keys_[k].second) == key;
        }
        if (!repeated && count + 1 == kLinearKeys) {
          for (size_t k = keys_start; k < tree_.keys_.size(); ++k) {
            many_keys.emplace(tree_.text_.data() + tree_.keys_[k].first, tree_.keys_[k].second);
          }
          many_keys.emplace(key);
        }
      } else {
        repeated = !many_keys.emplace(key).second;
      }
      if (repeated) {
        pos_ = key_start;
        return Error(absl::StrCat("repeated key '", EchoedText(key), "'"));
      }
      tree_.keys_.emplace_back(key_begin, key_size);
      SkipSpace();
      if (pos_ >= json_.size() || json_[pos_] != ':') return Error("expected : after a key");
      ++pos_;
      SkipSpace();
      uint32_t child;
      if (absl::Status status = Value(depth, &child); !status.ok()) return status;
      tree_.nodes_[child].key_begin = key_begin;
      tree_.nodes_[child].key_size = key_size;
      Append(*index, child, &last);
      SkipSpace();
      if (pos_ < json_.size() && json_[pos_] == ',') {
        ++pos_;
      } else if (pos_ >= json_.size() || json_[pos_] != '}') {
        return Error("expected , or } after a key:value pair");
      }
    }
    tree_.keys_.resize(keys_start);
    return absl::OkStatus();
  }

  JsonTree& tree_;
  const absl::string_view json_;
  size_t pos_ = 0;
};

absl::Status JsonTree::Parse(absl::string_view json) {
  nodes_.clear();
  text_.clear();
  keys_.clear();
  return Parser(this, json).Run();
}

}  // namespace roastcoffea
