#include "importers/fbx_tree.h"

#include <zlib.h>

#include <cctype>
#include <charconv>
#include <cstring>

namespace rigel::fbx_tree {
namespace {

constexpr std::string_view kBinaryMagic("Kaydara FBX Binary  \0", 21);
constexpr int kMaxDepth = 64;
// Records and values a document may hold: far more than any real file (a 400 kB character has a
// few hundred thousand values), bounding what a corrupt file can make this allocate.
constexpr std::size_t kMaxValues = std::size_t{1} << 26;

class BinaryReader {
 public:
  BinaryReader(std::string_view d, bool wide) : d_(d), wide_(wide) {
    // Deflated arrays may expand to at most this many bytes in all: generous for real files
    // (arrays compress a few times), bounded for a zip bomb.
    inflate_budget_ = 64 * d.size() + (std::size_t{1} << 20);
  }

  bool ReadList(std::size_t at, std::size_t end, int depth, std::vector<Node>* out) {
    if (depth > kMaxDepth) return false;
    const std::size_t word = wide_ ? 8 : 4;
    while (at < end) {
      std::uint64_t f[3] = {0, 0, 0};
      for (int i = 0; i < 3; ++i) {
        if (!Word(at + i * word, &f[i])) return false;
      }
      std::uint8_t name_len = 0;
      if (!Get(at + 3 * word, &name_len)) return false;
      if (f[0] == 0) return true;  // the list's null record
      const std::size_t name_at = at + 3 * word + 1;
      if (f[0] <= at || f[0] > end || !Has(name_at, name_len)) return false;
      const std::size_t props_at = name_at + name_len;
      if (f[2] > f[0] - props_at || props_at > f[0]) return false;
      Node n;
      n.name = std::string(d_.substr(name_at, name_len));
      const std::size_t props_end = props_at + static_cast<std::size_t>(f[2]);
      if (!ReadValues(props_at, props_end, f[1], &n.values)) return false;
      if (props_end < f[0] &&
          !ReadList(props_end, static_cast<std::size_t>(f[0]), depth + 1, &n.children)) {
        return false;
      }
      if (++records_ > kMaxValues) return false;
      out->push_back(std::move(n));
      at = static_cast<std::size_t>(f[0]);
    }
    return true;
  }

 private:
  bool Has(std::size_t at, std::size_t n) const { return at <= d_.size() && n <= d_.size() - at; }
  template <typename T>
  bool Get(std::size_t at, T* v) const {
    if (!Has(at, sizeof(T))) return false;
    std::memcpy(v, d_.data() + at, sizeof(T));
    return true;
  }
  bool Word(std::size_t at, std::uint64_t* v) const {
    if (wide_) return Get(at, v);
    std::uint32_t w = 0;
    if (!Get(at, &w)) return false;
    *v = w;
    return true;
  }

  bool ReadValues(std::size_t p, std::size_t end, std::uint64_t count, std::vector<Value>* out) {
    for (std::uint64_t k = 0; k < count; ++k) {
      if (p >= end || ++values_ > kMaxValues) return false;
      const char code = d_[p++];
      Value v;
      std::size_t size = 0;
      if (!ReadValue(code, p, end, &v, &size)) return false;
      p += size;
      out->push_back(std::move(v));
    }
    return p == end;
  }

  template <typename T>
  void Number(std::size_t p, Value* v, bool is_int) const {
    T x{};
    std::memcpy(&x, d_.data() + p, sizeof(T));
    v->is_int = is_int;
    v->d = static_cast<double>(x);
    if (is_int) v->i = static_cast<std::int64_t>(x);
  }

  // One value of type `code` at `p` (before `end`): its size in `*size`.
  bool ReadValue(char code, std::size_t p, std::size_t end, Value* v, std::size_t* size) {
    const std::size_t left = end - p;
    auto fits = [&](std::size_t n) { return n <= left && (*size = n, true); };
    switch (code) {
      case 'Y':
        return fits(2) && (Number<std::int16_t>(p, v, true), true);
      case 'C':
        v->kind = Value::kString;
        v->s.assign(1, d_[p]);
        return fits(1);
      case 'I':
        return fits(4) && (Number<std::int32_t>(p, v, true), true);
      case 'L':
        return fits(8) && (Number<std::int64_t>(p, v, true), true);
      case 'F':
        return fits(4) && (Number<float>(p, v, false), true);
      case 'D':
        return fits(8) && (Number<double>(p, v, false), true);
      case 'S':
      case 'R': {
        std::uint32_t len = 0;
        if (!Get(p, &len) || left < 4 || len > left - 4) return false;
        v->kind = Value::kString;
        v->s = std::string(d_.substr(p + 4, len));
        *size = 4 + std::size_t{len};
        return true;
      }
      case 'f':
      case 'd':
      case 'l':
      case 'i':
      case 'b':
        return ReadArray(code, p, end, v, size);
      default:
        return false;
    }
  }

  bool ReadArray(char code, std::size_t p, std::size_t end, Value* v, std::size_t* size) {
    std::uint32_t count = 0, encoding = 0, stored = 0;
    if (end - p < 12 || !Get(p, &count) || !Get(p + 4, &encoding) || !Get(p + 8, &stored)) {
      return false;
    }
    if (stored > end - p - 12) return false;
    const std::size_t elem = code == 'b' ? 1 : (code == 'f' || code == 'i') ? 4 : 8;
    const std::size_t bytes = std::size_t{count} * elem;
    std::string raw;
    if (encoding == 0) {
      if (bytes != stored) return false;
      raw = std::string(d_.substr(p + 12, stored));
    } else if (encoding == 1) {
      if (bytes > inflate_budget_) return false;
      inflate_budget_ -= bytes;
      raw.resize(bytes);
      uLongf got = static_cast<uLongf>(bytes);
      if (uncompress(reinterpret_cast<Bytef*>(raw.data()), &got,
                     reinterpret_cast<const Bytef*>(d_.data() + p + 12), stored) != Z_OK ||
          got != bytes) {
        return false;
      }
    } else {
      return false;
    }
    if ((values_ += count) > kMaxValues) return false;
    v->kind = Value::kArray;
    v->array.resize(count);
    for (std::size_t k = 0; k < count; ++k) {
      const char* at = raw.data() + k * elem;
      double x = 0;
      if (code == 'f') x = Load<float>(at);
      if (code == 'd') x = Load<double>(at);
      if (code == 'l') x = static_cast<double>(Load<std::int64_t>(at));
      if (code == 'i') x = Load<std::int32_t>(at);
      if (code == 'b') x = static_cast<unsigned char>(*at);
      v->array[k] = x;
    }
    *size = 12 + std::size_t{stored};
    return true;
  }

  template <typename T>
  static T Load(const char* at) {
    T x;
    std::memcpy(&x, at, sizeof(T));
    return x;
  }

  std::string_view d_;
  bool wide_;
  std::size_t inflate_budget_ = 0;
  std::size_t values_ = 0, records_ = 0;
};

// ---- ASCII: `Name: value, value, ... {` children `}`; `;` starts a comment line. Values are
// quoted strings, numbers and bare words; a list may continue on the next line after a comma.
class AsciiReader {
 public:
  explicit AsciiReader(std::string_view d) : d_(d) {}

  bool ReadList(int depth, std::vector<Node>* out) {
    if (depth > kMaxDepth) return false;
    while (true) {
      Skip();
      if (p_ >= d_.size()) return depth == 0;
      if (d_[p_] == '}') {
        ++p_;
        return depth > 0;
      }
      Node n;
      if (!Key(&n.name) || !Values(&n.values)) return false;
      Skip();
      if (p_ < d_.size() && d_[p_] == '{') {
        ++p_;
        if (!ReadList(depth + 1, &n.children)) return false;
      }
      if (++count_ > kMaxValues) return false;
      out->push_back(std::move(n));
    }
  }

 private:
  void Skip() {
    while (p_ < d_.size()) {
      const char c = d_[p_];
      if (c == ';') {
        while (p_ < d_.size() && d_[p_] != '\n') ++p_;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        ++p_;
      } else {
        return;
      }
    }
  }

  bool Key(std::string* name) {
    const std::size_t b = p_;
    while (p_ < d_.size() && d_[p_] != ':' && d_[p_] != '\n' && d_[p_] != '{' && d_[p_] != '}')
      ++p_;
    if (p_ >= d_.size() || d_[p_] != ':' || p_ == b) return false;
    *name = std::string(d_.substr(b, p_ - b));
    ++p_;
    return true;
  }

  // Values up to the end of the list: a value not followed by a comma ends it.
  bool Values(std::vector<Value>* out) {
    while (true) {
      SkipBlank();
      if (p_ >= d_.size() || d_[p_] == '{' || d_[p_] == '}' || d_[p_] == '\n' || d_[p_] == ';')
        return true;
      Value v;
      if (!OneValue(&v)) return false;
      if (++count_ > kMaxValues) return false;
      out->push_back(std::move(v));
      SkipBlank();
      if (p_ < d_.size() && d_[p_] == '\n') {
        // A list continues on the next line when that line starts with a comma.
        std::size_t q = p_;
        while (q < d_.size() && std::isspace(static_cast<unsigned char>(d_[q]))) ++q;
        if (q < d_.size() && d_[q] == ',') p_ = q;
      }
      if (p_ >= d_.size() || d_[p_] != ',') return true;
      ++p_;
      // A trailing comma may end the line before the list goes on.
      while (p_ < d_.size() && std::isspace(static_cast<unsigned char>(d_[p_]))) ++p_;
    }
  }

  void SkipBlank() {
    while (p_ < d_.size() && (d_[p_] == ' ' || d_[p_] == '\t' || d_[p_] == '\r')) ++p_;
  }

  bool OneValue(Value* v) {
    if (d_[p_] == '"') {
      const std::size_t q = d_.find('"', p_ + 1);
      if (q == std::string_view::npos) return false;
      v->kind = Value::kString;
      v->s = std::string(d_.substr(p_ + 1, q - p_ - 1));
      p_ = q + 1;
      return true;
    }
    const std::size_t b = p_;
    while (p_ < d_.size() && d_[p_] != ',' && d_[p_] != '\n' && d_[p_] != '{' && d_[p_] != '}' &&
           d_[p_] != ' ' && d_[p_] != '\t' && d_[p_] != '\r')
      ++p_;
    const std::string_view tok = d_.substr(b, p_ - b);
    if (tok.empty()) return false;
    const char c0 = tok[0];
    if (std::isdigit(static_cast<unsigned char>(c0)) || c0 == '-' || c0 == '+' || c0 == '.') {
      const char* first = tok.data() + (c0 == '+');
      const char* last = tok.data() + tok.size();
      const bool integral = tok.find_first_of(".eE") == std::string_view::npos;
      if (integral) {
        std::int64_t i = 0;
        const auto r = std::from_chars(first, last, i);
        if (r.ec == std::errc() && r.ptr == last) {
          v->is_int = true;
          v->i = i;
          v->d = static_cast<double>(i);
          return true;
        }
      }
      double d = 0;
      const auto r = std::from_chars(first, last, d);
      if (r.ec != std::errc() || r.ptr != last) return false;
      v->d = d;
      return true;
    }
    v->kind = Value::kString;  // a bare word: T, Y, U, s, n, ...
    v->s = std::string(tok);
    return true;
  }

  std::string_view d_;
  std::size_t p_ = 0;
  std::size_t count_ = 0;
};

int HeaderVersion(const std::vector<Node>& top) {
  for (const Node& n : top) {
    if (n.name != "FBXHeaderExtension") continue;
    const Node* v = n.Child("FBXVersion");
    if (v && !v->values.empty() && v->values[0].is_int && v->values[0].i > 0 &&
        v->values[0].i < 100000) {
      return static_cast<int>(v->values[0].i);
    }
  }
  return 0;
}

}  // namespace

const Node* Node::Child(std::string_view n) const {
  for (const Node& c : children) {
    if (c.name == n) return &c;
  }
  return nullptr;
}

std::string_view Node::Str(std::size_t k) const {
  return k < values.size() && values[k].kind == Value::kString ? std::string_view(values[k].s)
                                                               : std::string_view();
}

std::vector<double> Node::Numbers() const {
  std::vector<double> out;
  for (const Value& v : values) {
    if (v.kind == Value::kNumber) out.push_back(v.d);
    if (v.kind == Value::kArray) out.insert(out.end(), v.array.begin(), v.array.end());
  }
  return out;
}

std::optional<Document> ReadFbxTree(std::string_view bytes) {
  Document doc;
  if (bytes.substr(0, kBinaryMagic.size()) == kBinaryMagic) {
    if (bytes.size() < 27) return std::nullopt;
    std::uint32_t header = 0;
    std::memcpy(&header, bytes.data() + 23, 4);
    doc.binary = true;
    BinaryReader reader(bytes, header >= 7500);
    if (!reader.ReadList(27, bytes.size(), 0, &doc.top)) return std::nullopt;
    doc.version = HeaderVersion(doc.top);
    if (doc.version == 0 && header < 100000) doc.version = static_cast<int>(header);
    return doc;
  }
  AsciiReader reader(bytes);
  if (!reader.ReadList(0, &doc.top)) return std::nullopt;
  doc.version = HeaderVersion(doc.top);
  return doc;
}

// ---- FBX 7.4 binary records.

namespace {
template <typename T>
void Put(std::string* s, T v) {
  s->append(reinterpret_cast<const char*>(&v), sizeof(T));
}
template <typename T>
void PutArray(std::string* s, char code, const std::vector<T>& v) {
  s->push_back(code);
  Put<std::uint32_t>(s, static_cast<std::uint32_t>(v.size()));
  Put<std::uint32_t>(s, 0);
  Put<std::uint32_t>(s, static_cast<std::uint32_t>(v.size() * sizeof(T)));
  for (const T& x : v) Put(s, x);
}
}  // namespace

Out& Out::I(std::int32_t v) {
  props_.push_back('I');
  Put(&props_, v);
  ++count_;
  return *this;
}
Out& Out::L(std::int64_t v) {
  props_.push_back('L');
  Put(&props_, v);
  ++count_;
  return *this;
}
Out& Out::D(double v) {
  props_.push_back('D');
  Put(&props_, v);
  ++count_;
  return *this;
}
Out& Out::S(std::string_view v) {
  props_.push_back('S');
  Put<std::uint32_t>(&props_, static_cast<std::uint32_t>(v.size()));
  props_.append(v);
  ++count_;
  return *this;
}
Out& Out::C(char v) {
  props_.push_back('C');
  props_.push_back(v);
  ++count_;
  return *this;
}
Out& Out::Doubles(const std::vector<double>& v) {
  PutArray(&props_, 'd', v);
  ++count_;
  return *this;
}
Out& Out::Ints(const std::vector<std::int32_t>& v) {
  PutArray(&props_, 'i', v);
  ++count_;
  return *this;
}
Out& Out::Longs(const std::vector<std::int64_t>& v) {
  PutArray(&props_, 'l', v);
  ++count_;
  return *this;
}
Out& Out::Floats(const std::vector<float>& v) {
  PutArray(&props_, 'f', v);
  ++count_;
  return *this;
}

void Out::Encode(std::string* out) const {
  const std::size_t start = out->size();
  Put<std::uint32_t>(out, 0);  // end offset, patched below
  Put<std::uint32_t>(out, count_);
  Put<std::uint32_t>(out, static_cast<std::uint32_t>(props_.size()));
  out->push_back(static_cast<char>(name_.size()));
  out->append(name_);
  out->append(props_);
  if (!children_.empty()) {
    for (const Out& c : children_) c.Encode(out);
    out->append(13, '\0');
  }
  const auto end = static_cast<std::uint32_t>(out->size());
  std::memcpy(out->data() + start, &end, 4);
}

std::string EncodeFbx74(const std::vector<Out>& top) {
  std::string out("Kaydara FBX Binary  \0\x1a\0", 23);
  Put<std::uint32_t>(&out, 7400);
  for (const Out& o : top) o.Encode(&out);
  out.append(13, '\0');
  // The footer the FBX SDK writes: readers do not check it, it ends the file as the SDK's do.
  static const unsigned char kFoot[16] = {0xfa, 0xbc, 0xab, 0x09, 0xd0, 0xc8, 0xd4, 0x66,
                                          0xb1, 0x76, 0xfb, 0x83, 0x1c, 0xf7, 0x26, 0x7e};
  out.append(reinterpret_cast<const char*>(kFoot), 16);
  out.append(4, '\0');
  std::size_t pad = ((out.size() + 15) & ~std::size_t{15}) - out.size();
  if (pad == 0) pad = 16;
  out.append(pad, '\0');
  Put<std::uint32_t>(&out, 7400);
  out.append(120, '\0');
  static const unsigned char kMagic[16] = {0xf8, 0x5a, 0x8c, 0x6a, 0xde, 0xf5, 0xd9, 0x7e,
                                           0xec, 0xe9, 0x0c, 0xe3, 0x75, 0x8f, 0x29, 0x0b};
  out.append(reinterpret_cast<const char*>(kMagic), 16);
  return out;
}

}  // namespace rigel::fbx_tree
